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
import threading
import time
from contextlib import ExitStack
from typing import Any

import pytest
import requests

from tests.conftest import engine_config
from tests.live_stack import CHART_METRICS_FLAGS, prometheus, query, start_triton, triton_job, wait_until_ready
from tests.local_servers import free_port, stop
from tests.monitoring_support import gpu_node, pod_on, series
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
    tmp = tmp_path_factory.mktemp("live")
    config = load_stack_config(engine_config(STACK), STACK)
    ksm_port = free_port()
    ksm_job = {"job_name": "kube-state-metrics", "honor_labels": True, "static_configs": [{"targets": [f"127.0.0.1:{ksm_port}"]}]}
    finished, sent = threading.Event(), [0]
    queries = _triton_queries()
    results: dict[str, list[dict[str, Any]]] = {}
    with ExitStack() as stack:
        ksm = _serve_text(_kube_state_metrics(config), ksm_port)
        stack.callback(ksm.shutdown)
        triton = start_triton(tmp, "triton", {"add": (MODEL_CONFIG, MODEL_CODE)}, args=CHART_METRICS_FLAGS)
        stack.callback(stop, triton.process)
        jobs = [triton_job(triton, {"namespace": NAMESPACE, "pod": POD}), ksm_job]
        url = stack.enter_context(prometheus(tmp, jobs, rules.rule_groups(config)))
        deadline = time.monotonic() + DEADLINE_SECONDS
        wait_until_ready([triton], deadline)
        loader = threading.Thread(target=_load, args=(triton.http_port, finished, sent), daemon=True)
        loader.start()
        stack.callback(loader.join, timeout=10)
        stack.callback(finished.set)
        wanted = [q for q in queries.values() if NEEDS_GPU not in q and NOT_EXPORTED_BY_2_51 not in q]
        cost = ["pool:tritonfleet_usd_per_1m_inferences:ratio", "stack:tritonfleet_usd_per_1m_inferences:ratio"]
        while time.monotonic() < deadline:
            try:
                results = {q: query(url, q) for q in [*queries.values(), *cost]}
            except requests.RequestException:
                results = {}
            if results and all(results[q] for q in [*wanted, *cost]):
                break
            time.sleep(1)
        at = time.time()
        paired = {
            q: query(url, q, at)
            for q in ("pool:tritonfleet_usd_per_1m_inferences:ratio", "pool:tritonfleet_inferences_per_second:rate5m")
        }
        yield {"config": config, "queries": queries, "results": results, "paired": paired, "sent": sent[0]}


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
