"""gRPC balancing: the chart's headless Service for per-request balancing in the cluster, and the client-side
round_robin configuration docs/serving.md documents, run against two real tritonservers (gRPC on loopback)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import requests

from tests.serving_helpers import planned_values, render, triton_cases
from tests.test_autoscaling_live import CASES, backends_folder, free_port, start_triton, stop

DOCS = Path(__file__).resolve().parent.parent / "docs" / "serving.md"


@pytest.mark.parametrize(("stack", "name"), triton_cases())
def test_headless_grpc_service_selects_the_ready_triton_pods(stack, name):
    objects = render(planned_values(stack, name), name=name)
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    headless = services[f"{name}-grpc-headless"]
    pods = next(o for o in objects if o["kind"] == "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["publishNotReadyAddresses"] is False
    assert headless["spec"]["selector"].items() <= pods.items()
    assert [(p["name"], p["port"], p["targetPort"]) for p in headless["spec"]["ports"]] == [("grpc", 8001, "grpc")]
    assert services[name]["spec"]["selector"] == headless["spec"]["selector"]


def test_docs_name_the_headless_service_and_round_robin():
    text = DOCS.read_text()
    assert re.search(r"dns:///triton-[a-z-]+-grpc-headless\.triton\.svc\.cluster\.local:8001", text)
    assert '("grpc.lb_policy_name", "round_robin")' in text and "per connection" in text and "per request" in text


def _served(metrics_port: int) -> float:
    text = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("nv_inference_request_success{"))


def test_round_robin_spreads_one_channel_over_every_replica_and_pick_first_does_not(tmp_path):
    """One client channel over two real replicas: the documented round_robin config reaches both; gRPC's default
    (pick_first, what a ClusterIP Service amounts to) sends everything to one."""
    import numpy as np
    import tritonclient.grpc as grpcclient

    case = CASES[1]
    backends = backends_folder(tmp_path)
    ports = [(free_port(), free_port(), free_port()) for _ in range(2)]
    servers = [start_triton(tmp_path, backends, case, h, m, i, grpc_port=g) for i, (h, m, g) in enumerate(ports)]
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if any(s.poll() is not None for s in servers):
                pytest.fail("a tritonserver exited: " + "".join(p.read_text()[-2000:] for p in tmp_path.glob("triton-*.log")))
            try:
                if all(requests.get(f"http://127.0.0.1:{h}/v2/models/svc/ready", timeout=2).ok for h, _, _ in ports):
                    break
            except requests.RequestException:
                pass
            time.sleep(1)
        else:
            pytest.fail("the tritonservers did not become ready in 120 s")
        target = "ipv4:" + ",".join(f"127.0.0.1:{g}" for _, _, g in ports)
        for policy in ("pick_first", "round_robin"):
            client = grpcclient.InferenceServerClient(target, channel_args=[("grpc.lb_policy_name", policy)])
            data = grpcclient.InferInput("X", [1, 1], "FP32")
            data.set_data_from_numpy(np.ones((1, 1), dtype=np.float32))
            if policy == "round_robin":
                # Round robin spreads over the READY subchannels; the second connects a moment after the first (under
                # load, after 20 calls): warm the channel until both replicas have answered (at most 200 calls).
                start = [_served(m) for _, m, _ in ports]
                for _ in range(200):
                    client.infer("svc", [data])
                    if all(_served(m) > b for (_, m, _), b in zip(ports, start, strict=True)):
                        break
            before = [_served(m) for _, m, _ in ports]
            for _ in range(20):
                client.infer("svc", [data])
            client.close()
            counts = [_served(m) - b for (_, m, _), b in zip(ports, before, strict=True)]
            assert sum(counts) == 20, (policy, counts)
            if policy == "round_robin":
                assert counts == [10, 10], counts  # once both are connected: strictly alternating
            else:
                assert sorted(counts) == [0, 20], counts
    finally:
        for server in servers:
            stop(server)
