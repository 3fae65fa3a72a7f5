"""Live: a real tritonserver (from the nvidia-pytriton wheel, on CPU) under a short, bounded load, scraped by a real
Prometheus on loopback with our rules loaded. Every Triton recording rule and every Triton dashboard query must return
data through Prometheus' HTTP API, and the cost-per-1M-inferences rule a finite positive number given synthetic
kube-state-metrics series for the node and pod (a static exposition served on loopback).

Everything binds 127.0.0.1 on free ports, every loop is bounded in count and time, and every process started here is
stopped by its pid.
"""

from __future__ import annotations

import http.server
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.conftest import engine_config
from tests.local_servers import free_port, stop
from tests.monitoring_support import gpu_node, pod_on, series, tool, write_rules
from tests.triton_wheel import pytriton_dir
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.cost import cost_per_million
from tritonfleet.monitoring import rules
from tritonfleet.monitoring.dashboards import dashboard_queries, triton_dashboard

STACK = "dev"
NAMESPACE, NODE = "triton", "node-a"
DEPLOYMENT = "triton-resnet"  # the dev stack's autoscaled deployment (Deployment and HPA share the release's name)
POD = f"{DEPLOYMENT}-5d9c7b-x2x9k"  # a pod of that Deployment, as the autoscaling rules select them
DEADLINE_SECONDS = 120  # for everything to return data
MAX_REQUESTS = 20_000
# Queries this CPU-only tritonserver cannot answer, and why.
NEEDS_GPU = "nv_gpu_"  # Triton exports GPU metrics only when it sees a GPU
NOT_EXPORTED_BY_2_51 = "first_response_histogram"  # the wheel's Triton 2.51 exports no first-response histogram here

MODEL_CONFIG = """name: "add"
backend: "python"
max_batch_size: 8
input [ { name: "X", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "Y", data_type: TYPE_FP32, dims: [ 4 ] } ]
dynamic_batching { }
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""
MODEL_CODE = """import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", x + np.float32(1))]))
        return out
"""


def _start_triton(
    tmp: Path, http_port: int, metrics_port: int, models: dict[str, tuple[str, str]] | None = None,
    grpc_port: int | None = None,
) -> subprocess.Popen:
    """The wheel's tritonserver on CPU with Python-backend models: name -> (config.pbtxt, model.py); default `add`.
    gRPC is off unless a port is given."""
    wheel = pytriton_dir()
    backends = tmp / "backends" / "python"
    backends.mkdir(parents=True)
    for item in (wheel / "tritonserver" / "backends" / "python").iterdir():
        if item.is_file():
            (backends / item.name).write_bytes(item.read_bytes())
    stub = (
        wheel
        / "tritonserver"
        / "python_backend_stubs"
        / f"{sys.version_info.major}.{sys.version_info.minor}"
        / "triton_python_backend_stub"
    )
    if not stub.is_file():
        pytest.skip(f"the wheel has no Python backend stub for Python {sys.version_info.major}.{sys.version_info.minor}")
    (backends / stub.name).write_bytes(stub.read_bytes())
    (backends / stub.name).chmod(0o755)
    for name, (config, code) in (models or {"add": (MODEL_CONFIG, MODEL_CODE)}).items():
        model = tmp / "models" / name
        (model / "1").mkdir(parents=True)
        (model / "config.pbtxt").write_text(config)
        (model / "1" / "model.py").write_text(code)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",  # the stub finds numpy through python3
        "LD_LIBRARY_PATH": str(wheel.parent / "nvidia_pytriton.libs"),
    }
    command = [
        str(wheel / "tritonserver" / "bin" / "tritonserver"),
        f"--model-repository={tmp / 'models'}",
        f"--backend-directory={tmp / 'backends'}",
        "--http-address=127.0.0.1",
        f"--http-port={http_port}",
        *(["--allow-grpc=false"] if grpc_port is None else ["--grpc-address=127.0.0.1", f"--grpc-port={grpc_port}"]),
        "--metrics-address=127.0.0.1",
        f"--metrics-port={metrics_port}",
        "--metrics-config=summary_latencies=true",
        "--metrics-config=histogram_latencies=true",
    ]
    log = (tmp / "triton.log").open("w")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


def write_prometheus_config(
    tmp: Path, groups: list[dict[str, Any]], metrics_port: int, pod: dict[str, str], jobs: list[dict[str, Any]] = ()
) -> None:
    """tmp/rules.yaml and tmp/prometheus.yml: scrape Triton every second with the namespace and pod labels Prometheus
    Operator's ServiceMonitor relabelling gives a Triton target, plus `jobs`."""
    write_rules(groups, tmp)
    triton = {"job_name": "triton", "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"], "labels": pod}]}
    scrape = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp / "rules.yaml")],
        "scrape_configs": [triton, *jobs],
    }
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(scrape))


def start_prometheus(binary: str, tmp: Path, port: int, log) -> subprocess.Popen:
    """A real Prometheus on loopback with tmp/prometheus.yml, its data in tmp/tsdb."""
    command = [
        binary,
        f"--config.file={tmp / 'prometheus.yml'}",
        f"--storage.tsdb.path={tmp / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def wait_until_ready(triton: subprocess.Popen, http_port: int, deadline: float, log: Path) -> None:
    """Until Triton answers ready (bounded by `deadline`, monotonic); fails with its log if it exits or never does."""
    while time.monotonic() < deadline:
        if triton.poll() is not None:
            pytest.fail("tritonserver exited:\n" + log.read_text()[-3000:])
        try:
            if requests.get(f"http://127.0.0.1:{http_port}/v2/health/ready", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(1)
    pytest.fail("tritonserver did not become ready:\n" + log.read_text()[-3000:])


def _kube_state_metrics(config) -> str:
    """What kube-state-metrics would export for one GPU node of the dev stack's pool and the Triton pod on it."""
    price = next(p for p in rules.node_prices(config) if p.usd_per_hour is not None)
    lines = []
    for item in (gpu_node(NODE, price.pool, price.capacity, ""), pod_on(NAMESPACE, POD, NODE, "")):
        lines.append(f"{item['series']} 1")
    # The Deployment and its HPA, for the autoscaling panels: one replica running, desired 1, at most 2.
    lines.append(
        series("kube_deployment_status_replicas_available", {"namespace": NAMESPACE, "deployment": DEPLOYMENT}, "")["series"]
        + " 1"
    )
    hpa = {"namespace": NAMESPACE, "horizontalpodautoscaler": DEPLOYMENT}
    lines.append(series("kube_horizontalpodautoscaler_status_desired_replicas", hpa, "")["series"] + " 1")
    lines.append(series("kube_horizontalpodautoscaler_spec_max_replicas", hpa, "")["series"] + " 2")
    return "\n".join(lines) + "\n"


def _serve_text(text: str, port: int) -> http.server.ThreadingHTTPServer:
    body = text.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _load(http_port: int, stop: threading.Event, sent: list[int]) -> None:
    session = requests.Session()
    # No proxy settings from the environment: this thread outlives the test that starts it, and requests would read
    # os.environ while pytest rewrites PYTEST_CURRENT_TEST (a KeyError mid-iteration once ended the load early).
    session.trust_env = False
    body = {"inputs": [{"name": "X", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    while not stop.is_set() and sent[0] < MAX_REQUESTS:
        try:
            session.post(f"http://127.0.0.1:{http_port}/v2/models/add/infer", json=body, timeout=5)
            sent[0] += 1
        except requests.RequestException:
            time.sleep(0.2)


def _query(prometheus: str, expr: str, at: float | None = None) -> list[dict[str, Any]]:
    params = {"query": expr, **({"time": f"{at:.3f}"} if at else {})}
    response = requests.get(f"{prometheus}/api/v1/query", params=params, timeout=5)
    response.raise_for_status()
    return response.json()["data"]["result"]


def _triton_queries() -> dict[str, str]:
    substitutions = {"$__rate_interval": "1m", "$namespace": ".*", "$model": ".*", "$deployment": ".*"}
    out = {}
    for title, expr in dashboard_queries(triton_dashboard()):
        for variable, value in substitutions.items():
            expr = expr.replace(variable, value)
        out[f"panel '{title}': {expr}"] = expr
    for rule in rules.triton_rules():
        out[f"rule {rule['record']}"] = rule["record"]
    return out


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    prometheus_bin = tool("prometheus")
    tmp = tmp_path_factory.mktemp("live")
    config = load_stack_config(engine_config(STACK), STACK)
    http_port, metrics_port, ksm_port, prometheus_port = (free_port() for _ in range(4))
    ksm_job = {"job_name": "kube-state-metrics", "honor_labels": True, "static_configs": [{"targets": [f"127.0.0.1:{ksm_port}"]}]}
    write_prometheus_config(tmp, rules.rule_groups(config), metrics_port, {"namespace": NAMESPACE, "pod": POD}, [ksm_job])
    ksm = _serve_text(_kube_state_metrics(config), ksm_port)
    triton = _start_triton(tmp, http_port, metrics_port)
    prometheus_log = (tmp / "prometheus.log").open("w")
    prometheus = start_prometheus(prometheus_bin, tmp, prometheus_port, prometheus_log)
    finished, sent = threading.Event(), [0]
    loader = threading.Thread(target=_load, args=(http_port, finished, sent), daemon=True)
    url = f"http://127.0.0.1:{prometheus_port}"
    queries = _triton_queries()
    results: dict[str, list[dict[str, Any]]] = {}
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        wait_until_ready(triton, http_port, deadline, tmp / "triton.log")
        loader.start()
        wanted = [q for q in queries.values() if NEEDS_GPU not in q and NOT_EXPORTED_BY_2_51 not in q]
        cost = ["pool:tritonfleet_usd_per_1m_inferences:ratio", "stack:tritonfleet_usd_per_1m_inferences:ratio"]
        while time.monotonic() < deadline:
            try:
                results = {q: _query(url, q) for q in [*queries.values(), *cost]}
            except requests.RequestException:
                results = {}
            if results and all(results[q] for q in [*wanted, *cost]):
                break
            time.sleep(2)
        at = time.time()
        paired = {
            q: _query(url, q, at)
            for q in ("pool:tritonfleet_usd_per_1m_inferences:ratio", "pool:tritonfleet_inferences_per_second:rate5m")
        }
        yield {"config": config, "queries": queries, "results": results, "paired": paired, "sent": sent[0]}
    finally:
        finished.set()
        if loader.is_alive():
            loader.join(timeout=10)
        stop(prometheus)
        stop(triton)
        ksm.shutdown()
        prometheus_log.close()


def test_load_was_served(live):
    assert 0 < live["sent"] <= MAX_REQUESTS


def test_every_triton_recording_rule_returns_data(live):
    empty = [name for name, q in live["queries"].items() if name.startswith("rule ") and not live["results"].get(q)]
    assert empty == []


def test_every_triton_dashboard_query_returns_data(live):
    empty = [
        name
        for name, q in live["queries"].items()
        if name.startswith("panel ") and NEEDS_GPU not in q and NOT_EXPORTED_BY_2_51 not in q and not live["results"].get(q)
    ]
    assert empty == []


def test_gpu_panels_need_a_gpu(live):
    gpu = {name: q for name, q in live["queries"].items() if NEEDS_GPU in q}
    assert gpu, "the Triton dashboard has GPU panels"
    if not any(live["results"].get(q) for q in gpu.values()):
        pytest.skip("not checked: this tritonserver runs on CPU and exports no nv_gpu_* metrics; " + "; ".join(gpu))


def test_first_response_histogram_panel(live):
    panels = {name: q for name, q in live["queries"].items() if NOT_EXPORTED_BY_2_51 in q}
    assert len(panels) == 1
    if not any(live["results"].get(q) for q in panels.values()):
        pytest.skip(
            "not checked: the wheel's tritonserver 2.51 exports no nv_inference_first_response_histogram_ms for this model"
        )


def test_cost_per_million_is_finite_positive_and_the_plans_formula(live):
    for rule in ("pool:tritonfleet_usd_per_1m_inferences:ratio", "stack:tritonfleet_usd_per_1m_inferences:ratio"):
        [sample] = live["results"][rule]
        value = float(sample["value"][1])
        assert math.isfinite(value) and value > 0, rule
    [ratio] = live["paired"]["pool:tritonfleet_usd_per_1m_inferences:ratio"]
    [rate] = live["paired"]["pool:tritonfleet_inferences_per_second:rate5m"]
    price = next(p for p in rules.node_prices(live["config"]) if p.pool == ratio["metric"]["pool"] and p.usd_per_hour is not None)
    assert float(ratio["value"][1]) == pytest.approx(cost_per_million(price.usd_per_hour, float(rate["value"][1])), rel=1e-9)
