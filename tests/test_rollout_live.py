"""The shipped analysis, judged on real engines: real tritonservers (the nvidia-pytriton wheel, CPU) serve a stable
version and three new ones (good, erroring, slow), a real Prometheus scrapes them with the ServiceMonitor's relabelling
(namespace, pod, and the track label Argo Rollouts sets on canary and stable pods), `tritonfleet loadtest` sends each
canary its step's weight of the traffic, and the AnalysisTemplate's queries are evaluated at each step as the
controller would, with its conditions: the erroring and the slow version fail at their first judged step, the good one
passes every step, and a canary without traffic is inconclusive at every step, never passed.

Each scenario has a namespace of its own; the one stable server is scraped into each (Prometheus may scrape a target
in several jobs), so every scenario compares its canary with the same stable pods. The interval is 3 s here (the
config rules ask 60 s of a stack: Prometheus scrapes every 30 s there, every second here)."""

from __future__ import annotations

import math
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
import requests

from tests.live_stack import (
    CHART_METRICS_FLAGS,
    STARTUP_SECONDS,
    Triton,
    prometheus,
    service_monitor_job,
    start_triton,
    stop_all,
    wait_until_ready,
)
from tritonfleet import loadtest
from tritonfleet.core import rollout
from tritonfleet.core.config import TritonDeployment

INTERVAL_S = 3
STEPS = (25, 50)
TOTAL_RATE = 20.0  # requests/s a scenario offers; the canary gets its step's weight of it
STABLE_RATE = 15.0
MODEL_CONFIG = """name: "svc"
backend: "python"
max_batch_size: 8
input [ { name: "X", data_type: TYPE_FP32, dims: [ 1 ] } ]
output [ { name: "Y", data_type: TYPE_FP32, dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU, count: 2 } ]
"""
MODEL_CODE = """import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            time.sleep({seconds})
            if {fail}:
                # Raised, Triton counts it (nv_inference_request_failure, reason BACKEND). An error *response*
                # (InferenceResponse(error=...)) counts as a success in Triton 2.51: measured here, docs/serving.md.
                raise pb_utils.TritonModelException("broken export")
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", x)]))
        return out
"""
WARM_UP = {"inputs": [{"name": "X", "shape": [1, 1], "datatype": "FP32", "data": [1.0]}]}
# name: (version folder, seconds per request, fails)
SERVERS = {"stable": (1, 0.005, False), "good": (2, 0.005, False), "erroring": (2, 0.005, True), "slow": (2, 0.12, False)}


def deployment(namespace: str) -> TritonDeployment:
    """The deployment each scenario judges: the shipped thresholds, latency allowed 2x (CPU noise on shared cores; the
    slow version is 24x), queue time 50 ms, judged after 10 canary inferences in an interval."""
    return TritonDeployment(
        name="svc", pool="p", namespace=namespace, minReplicas=2, clientModels=["svc"],
        rollout={"steps": [*STEPS, 100], "interval": f"{INTERVAL_S}s",
                 "analysis": {"maxLatencyRatio": 2.0, "maxQueueTime": "50ms", "minRequests": 10}},
    )  # fmt: skip


def start(tmp: Path, name: str) -> Triton:
    version, seconds, fail = SERVERS[name]
    models = {"svc": (MODEL_CONFIG, MODEL_CODE.format(seconds=seconds, fail=fail))}
    return start_triton(tmp, name, models, version=version, args=[*CHART_METRICS_FLAGS, "--exit-timeout-secs=2"])


def scrape_jobs(metrics_ports: dict[str, int]) -> list[dict]:
    """Prometheus Operator's relabelling of a ServiceMonitor endpoint with podTargetLabels [tritonfleet.io/track]."""
    return [
        service_monitor_job(
            f"serviceMonitor/{namespace}/triton-svc/0",
            [(metrics_ports[server], {"namespace": namespace, "pod_name": f"svc-{track}", "pod_label_tritonfleet_io_track": track})
             for server, track in (("stable", "stable"), (namespace, "canary"))],
            {"pod_label_tritonfleet_io_track": rollout.TRACK_SERIES_LABEL},
        )  # fmt: skip
        for namespace in ("good", "erroring", "slow")
    ]


def measure(prometheus: str, metric: rollout.Metric) -> list[float]:
    """One measurement as Argo Rollouts' Prometheus provider takes it: the vector's values, in order."""
    response = requests.get(f"{prometheus}/api/v1/query", params={"query": metric.query}, timeout=5)
    response.raise_for_status()
    return [float(r["value"][1]) for r in response.json()["data"]["result"]]


def judge(prometheus: str, namespace: str) -> dict[str, str]:
    return {m.name: rollout.verdict(m, measure(prometheus, m)) for m in rollout.analysis_metrics(deployment(namespace))}


class Traffic:
    """`tritonfleet loadtest` runs in threads, bounded in time and count; stop() ends them (requests in flight finish)."""

    def __init__(self):
        self.stop_event, self.threads, self.results = threading.Event(), [], []

    def send(self, port: int, rate: float) -> None:
        plan = loadtest.Plan(url=f"127.0.0.1:{port}", model="svc", rate=rate, duration_s=60, max_requests=5000,
                             timeout_s=10, arrivals="uniform", max_error_share=1.0)  # fmt: skip
        thread = threading.Thread(target=lambda: self.results.append(loadtest.run(plan, stop=self.stop_event)), daemon=True)
        thread.start()
        self.threads.append(thread)

    def stop(self) -> None:
        self.stop_event.set()
        for thread in self.threads:
            thread.join(timeout=15)
        self.stop_event, self.threads = threading.Event(), []


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rollout-live")
    servers = {name: start(tmp, name) for name in SERVERS}
    http = {name: server.http_port for name, server in servers.items()}
    traffic = Traffic()
    found: dict[str, list[dict[str, str]]] = {"idle": []}
    with ExitStack() as stack:
        stack.callback(stop_all, [server.process for server in servers.values()])
        url = stack.enter_context(prometheus(tmp, scrape_jobs({name: s.metrics_port for name, s in servers.items()})))
        stack.callback(traffic.stop)
        wait_until_ready(list(servers.values()), time.monotonic() + STARTUP_SECONDS, "svc")
        # Each new pod's first inferences (the Python backend's stub warming up), as a pod's warm-up before it turns
        # ready would; they leave the rate window during the idle steps.
        for name in ("good", "erroring", "slow"):
            for _ in range(5):  # not live_stack.warm_up: the erroring version answers its requests with an error
                requests.post(f"http://127.0.0.1:{http[name]}/v2/models/svc/infer", json=WARM_UP, timeout=10)
        # The stable version serves; no canary has traffic: every step of an idle canary.
        traffic.send(http["stable"], STABLE_RATE)
        for _ in STEPS:
            time.sleep(INTERVAL_S + 1)
            found["idle"].append(judge(url, "good"))
        for weight in STEPS:
            for name in ("good", "erroring", "slow"):
                traffic.send(http[name], TOTAL_RATE * weight / 100)
            time.sleep(INTERVAL_S + 1)  # one interval of this step's traffic in every window
            for name in ("good", "erroring", "slow"):
                found.setdefault(name, []).append(judge(url, name))
            traffic.stop()
            traffic.send(http["stable"], STABLE_RATE)
        yield found


def outcome(step: dict[str, str]) -> str:
    """A step's result as an AnalysisRun sums its metrics: any failed fails, any inconclusive pauses, else passed."""
    if "failed" in step.values():
        return "failed"
    return "inconclusive" if "inconclusive" in step.values() else "passed"


def test_the_good_version_passes_every_step(verdicts):
    assert [outcome(s) for s in verdicts["good"]] == ["passed", "passed"], verdicts["good"]


def test_the_erroring_version_is_aborted_at_its_first_judged_step(verdicts):
    assert verdicts["erroring"][0]["error-ratio"] == "failed", verdicts["erroring"]


def test_the_slow_version_is_aborted_at_its_first_judged_step(verdicts):
    assert verdicts["slow"][0]["latency-vs-stable"] == "failed", verdicts["slow"]
    assert verdicts["slow"][0]["error-ratio"] == "passed"  # slow, not broken


def test_an_idle_canary_is_never_promoted(verdicts):
    assert all(set(step.values()) == {"inconclusive"} for step in verdicts["idle"]), verdicts["idle"]
    assert not math.isnan(rollout.NO_VERDICT)
