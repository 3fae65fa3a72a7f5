"""gRPC balancing: the chart's headless Service for per-request balancing in the cluster, and the client-side
round_robin configuration docs/serving.md documents, run against two real tritonservers (gRPC on loopback)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import requests

from tests.access_helpers import ACCESS_CASES, FACTS, chart_values, deployment
from tests.live_stack import STARTUP_SECONDS, start_triton, stop_all, wait_until_ready
from tests.local_servers import free_port
from tests.serving_helpers import planned_values, render, triton_cases
from tests.test_autoscaling_live import MODEL_CODE, MODEL_CONFIG, ONE_MS_BATCHED
from tritonfleet.core.exposure import INTERNAL, INTERNAL_APPLICATION, PER_CONNECTION, PER_REQUEST, PUBLIC, mode_label

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


def _grpc_path(objects: list[dict]) -> str:
    """What carries Triton's gRPC port to clients outside the cluster in this rendering: an Ingress or a Gateway's
    HTTPRoute (L7), or a LoadBalancer Service (L4)."""
    ingresses = [o for o in objects if o["kind"] == "Ingress"]
    routed = {p["backend"]["service"]["port"]["name"] for i in ingresses for r in i["spec"]["rules"] for p in r["http"]["paths"]}
    ports = {p["port"]: p["name"] for o in objects if o["kind"] == "Service" for p in o["spec"]["ports"]}
    routes = [o for o in objects if o["kind"] == "HTTPRoute"]
    routed |= {ports[b["port"]] for route in routes for rule in route["spec"]["rules"] for b in rule["backendRefs"]}
    balancers = [o for o in objects if o["kind"] == "Service" and o["spec"].get("type") == "LoadBalancer"]
    on_balancer = {p["name"] for s in balancers for p in s["spec"]["ports"]}
    assert not ("grpc" in routed and "grpc" in on_balancer), "gRPC on two paths"
    return "l7 proxy" if "grpc" in routed else "load balancer service" if "grpc" in on_balancer else "none"


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=[c[0] for c in ACCESS_CASES])
def test_each_modes_grpc_balancing_fact_matches_what_the_chart_builds(label, cloud, access):
    """A mode whose gRPC goes through an Ingress (an L7 proxy) is the one the cloud's facts call per request; an L4
    LoadBalancer Service per connection; `cluster` has no cloud load balancer and no fact; loadBalancerGrpc false
    routes no gRPC through the load balancer at all."""
    mode = deployment(access).access.mode
    path = _grpc_path(render(chart_values(cloud, access), name="triton-llm"))
    if access.get("loadBalancerGrpc") is False:
        assert path == "none"
        return
    fact = FACTS[cloud].grpc_balancing.get(mode)
    expected = {"l7 proxy": PER_REQUEST, "load balancer service": PER_CONNECTION, "none": None}[path]
    assert (fact.balances if fact else None) == expected, (mode, path, fact)


def test_every_balancing_fact_has_a_dated_source():
    """Every mode with a cloud load balancer has a fact (GCP's Application modes carry gRPC through a GKE Gateway)."""
    for cloud, facts in FACTS.items():
        assert set(facts.grpc_balancing) == {INTERNAL, INTERNAL_APPLICATION, PUBLIC}, cloud
        for fact in facts.grpc_balancing.values():
            assert fact.balances in (PER_REQUEST, PER_CONNECTION)
            assert re.match(r"https://\S+ \(read \d{4}-\d{2}-\d{2}\): \S", fact.source), fact.source


def test_docs_state_per_cloud_and_mode_which_path_balances_per_request():
    """docs/serving.md has one row per cloud and exposure mode with the load balancer, how it balances and its source."""
    text = DOCS.read_text()
    names = {"aws": "AWS", "gcp": "GCP"}
    for cloud, facts in FACTS.items():
        for mode, fact in facts.grpc_balancing.items():
            url = fact.source.split(" ", 1)[0]
            row = (
                rf"\| {names[cloud]} \| {re.escape(mode_label(mode))} \| {re.escape(fact.load_balancer)} \| "
                rf"\*\*{fact.balances}\*\* \|.*{re.escape(url)}"
            )
            assert re.search(row, text), (cloud, mode)


def _served(metrics_port: int) -> float:
    text = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("nv_inference_request_success{"))


def _settled_served(metrics_ports: list[int]) -> list[float]:
    """Each replica's served count once it stops moving: Triton counts an inference a moment after it answers, so a
    read right after the last call may miss it (read until two reads 0.2 s apart agree, at most 5 s)."""
    counts = [_served(port) for port in metrics_ports]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.2)
        again = [_served(port) for port in metrics_ports]
        if again == counts:
            break
        counts = again
    return counts


def test_round_robin_spreads_one_channel_over_every_replica_and_pick_first_does_not(tmp_path):
    """One client channel over two real replicas: the documented round_robin config reaches both; gRPC's default
    (pick_first, what a ClusterIP Service amounts to) sends everything to one."""
    import numpy as np
    import tritonclient.grpc as grpcclient

    models = {"svc": (MODEL_CONFIG, MODEL_CODE.format(service=ONE_MS_BATCHED.service_seconds))}
    servers = [start_triton(tmp_path, str(i), models, grpc_port=free_port(), args=["--http-thread-count=8"]) for i in range(2)]
    ports = [(s.http_port, s.metrics_port, s.grpc_port) for s in servers]
    try:
        wait_until_ready(servers, time.monotonic() + STARTUP_SECONDS, "svc")
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
            metrics = [m for _, m, _ in ports]
            before = _settled_served(metrics)
            for _ in range(20):
                client.infer("svc", [data])
            client.close()
            counts = [after - b for after, b in zip(_settled_served(metrics), before, strict=True)]
            assert sum(counts) == 20, (policy, counts)
            if policy == "round_robin":
                assert counts == [10, 10], counts  # once both are connected: strictly alternating
            else:
                assert sorted(counts) == [0, 20], counts
    finally:
        stop_all(server.process for server in servers)
