"""The autoscaling proof: three real tritonservers (CPU, a Python-backend model with a fixed service time), a real
Prometheus scraping them with the ServiceMonitor's relabelling, open-loop load at 0, ¼, ½, 1× and 2× of the fleet's
stated capacity, the shipped prometheus-adapter queries templated as the adapter does, and the Kubernetes HPA algorithm
(tests/hpa_model.py) with the behaviour the chart renders. The load goes only to the replicas the HPA currently runs,
so a replica it adds really takes traffic. Two models: ~20 ms per request (one row), ~1 ms per request of 4 rows
(batched: the signal must count rows, not requests).

Time compression, and why: each HPA sync is 15 simulated seconds (the behaviour's windows and periods run on that
clock) but ~1 s of real load (a step's first sync waits until the window holds only its load), and the adapter's rate
window `[1m]` becomes `[4s]` (Prometheus scrapes every 1 s); the queries are otherwise the shipped ones. Load comes
from `tritonfleet loadtest` itself (tritonfleet.loadtest.run, open loop at a fixed rate): one run per replica the HPA
runs, at its share of the step's rate, in background threads; the runs are stopped through their stop event and
restarted when the step or the replica count changes. The servers and Prometheus: tests/live_stack.py.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from components.k8s.autoscaling import INFERENCES_PER_SECOND, QUEUE_MS_PER_REQUEST, RATE_WINDOW, triton_adapter_rules
from components.k8s.triton import autoscaling_values
from tests.hpa_model import Hpa
from tests.live_stack import STARTUP_SECONDS, fail_if_any_exited, fleet, query_by_pod, wait_for_pods, warm_up
from tests.serving_helpers import by_kind, render
from tritonfleet import loadtest
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.loadtest_result import LoadtestResult

SERVERS = 3
NAMESPACE = "triton"
WINDOW_SECONDS = 4  # the rate window the queries use for the shipped one
# A step's first sync: once every sample in the window was scraped after the step's load began (the previous step's
# runs are stopped, their requests in flight finished, before the next start).
SETTLE_SECONDS = WINDOW_SECONDS + 0.5
LOAD_FRACTIONS = (0.0, 0.25, 0.5, 1.0, 2.0)
SYNCS_PER_STEP = 3
SYNC_REAL_SECONDS = 1.0
RUN_MAX_SECONDS = 120  # each loadtest run's own bound, beside its stop event
RUN_MAX_REQUESTS = 20_000
JOIN_SECONDS = 15  # a stopped run lets its requests in flight finish (timeout 10 s each)


@dataclass(frozen=True)
class Case:
    label: str
    service_seconds: float
    rows: int  # inferences (batch rows) per request
    throughput_per_replica: float  # the capacity the deployment states, inferences/s

    @property
    def request_capacity(self) -> float:
        return self.throughput_per_replica / self.rows


# Stated capacities sit well below what one CPU replica can serve here (20 ms: 50 requests/s; 1 ms: several
# hundred), so 2× of the fleet's stated capacity still leaves each of the three servers below saturation: 30/s of a
# 20 ms model is 60 % busy. (At 20/s stated, 2× was 80 % busy, and on a host at load average 15 the fleet served 90
# of the 120/s offered.)
TWENTY_MS, ONE_MS_BATCHED = Case("20ms", 0.020, 1, 15.0), Case("1ms-batched", 0.001, 4, 80.0)
# The case this module proves; tests/test_autoscaling_live_batched.py runs the same tests for ONE_MS_BATCHED, in a
# module of its own so that the two proofs (a minute each, mostly waiting) run in two pytest-xdist workers side by side.
CASE = TWENTY_MS

MODEL_CONFIG = """name: "svc"
backend: "python"
max_batch_size: 8
input [ { name: "X", data_type: TYPE_FP32, dims: [ 1 ] } ]
output [ { name: "Y", data_type: TYPE_FP32, dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""
WARM_UP = {"inputs": [{"name": "X", "shape": [1, 1], "datatype": "FP32", "data": [1.0]}]}
MODEL_CODE = """import time

import triton_python_backend_utils as pb_utils

SERVICE_SECONDS = {service}


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            time.sleep(SERVICE_SECONDS)
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", pb_utils.get_input_tensor_by_name(request, "X").as_numpy())]))
        return out
"""


def adapter_query(metric: str, pods: list[str]) -> str:
    """The shipped rule's metricsQuery as prometheus-adapter templates it for a Pods metric of these pods."""
    rule = next(r for r in triton_adapter_rules() if r["name"]["as"] == metric)
    series = rule["name"]["matches"].strip("^$")
    matchers = f'namespace="{NAMESPACE}",pod=~"{"|".join(pods)}"'
    query = rule["metricsQuery"].replace("<<.Series>>", series).replace("<<.LabelMatchers>>", matchers)
    return query.replace("<<.GroupBy>>", "pod").replace(f"[{RATE_WINDOW}]", f"[{WINDOW_SECONDS}s]")


class Load:
    """Open-loop load from `tritonfleet loadtest`: one run per replica the HPA runs (round robin by another name), each
    at its share of the fleet's request rate, in a background thread. set() stops the runs (their stop event; requests
    in flight finish) and starts the next ones when the rate or the replica count changes. Every run is bounded in
    time and count as well; every join is bounded."""

    def __init__(self, ports: list[int], rows: int):
        self.urls, self.rows = [f"127.0.0.1:{port}" for port in ports], rows
        self.rate, self.replicas = 0.0, 0
        self.results: list[LoadtestResult] = []
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def set(self, rate: float, replicas: int) -> None:
        """Offer `rate` requests/s in all, spread over the first `replicas` servers."""
        if (rate, replicas) == (self.rate, self.replicas):
            return
        self.stop()
        self.rate, self.replicas = rate, replicas
        if rate <= 0:
            return
        self._stop = threading.Event()
        for url in self.urls[:replicas]:
            plan = loadtest.Plan(
                url=url, model="svc", rate=rate / replicas, duration_s=RUN_MAX_SECONDS, max_requests=RUN_MAX_REQUESTS,
                batch_size=self.rows, timeout_s=10, arrivals="uniform",  # a steady signal: the proof is its tracking
            )  # fmt: skip
            thread = threading.Thread(target=self._run, args=(plan, self._stop), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _run(self, plan: loadtest.Plan, stop: threading.Event) -> None:
        try:
            result = loadtest.run(plan, stop=stop)
        except Exception as error:  # reported by test_the_loadtest_delivered_the_load
            with self._lock:
                self.failures.append(f"{plan.url} at {plan.rate:.1f}/s: {error}")
            return
        with self._lock:
            self.results.append(result)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=JOIN_SECONDS)
            if thread.is_alive():
                self.failures.append(f"a loadtest run did not stop within {JOIN_SECONDS}s")
        self._threads = []
        self.rate, self.replicas = 0.0, 0


def _hpa_spec(case: Case) -> tuple[dict[str, Any], TritonDeployment]:
    """The HPA the chart renders for a deployment stating this case's capacity (min 1, max SERVERS, guard 50 ms)."""
    deployment = TritonDeployment(
        name="svc",
        pool="cpu",
        min_replicas=1,
        max_replicas=SERVERS,
        throughput_per_replica=case.throughput_per_replica,
        queue_time_target="50ms",
    )
    values = {"modelRepository": "s3://models", "replicas": {"min": 1, "max": SERVERS}}
    values["autoscaling"] = autoscaling_values(deployment, monitoring=True)
    return by_kind(render(values))["HorizontalPodAutoscaler"]["spec"], deployment


def ideal_replicas(load_inferences: float, deployment: TritonDeployment) -> int:
    usable = deployment.throughput_per_replica * deployment.target_utilization
    return min(max(math.ceil(load_inferences / usable - 1e-9), deployment.min_replicas), deployment.max_replicas)


@pytest.fixture(scope="module")
def run(request, tmp_path_factory):
    case: Case = request.module.CASE
    tmp = tmp_path_factory.mktemp(f"autoscale-{case.label}")
    models = {"svc": (MODEL_CONFIG, MODEL_CODE.format(service=case.service_seconds))}
    with fleet(tmp, SERVERS, models, NAMESPACE, "triton-svc") as replicas:
        url, pods, servers = replicas.prometheus, replicas.pods, replicas.servers
        queries = {m: adapter_query(m, pods) for m in (INFERENCES_PER_SECOND, QUEUE_MS_PER_REQUEST)}
        warm_up(servers, "svc", WARM_UP)  # before step 0: its rate window has forgotten them by its first sync
        # every pod's series exists (0 while idle) before the first sync
        wait_for_pods(url, queries[INFERENCES_PER_SECOND], pods, time.monotonic() + STARTUP_SECONDS, servers)
        spec, deployment = _hpa_spec(case)
        hpa = Hpa(spec)
        load = Load(replicas.http_ports, case.rows)

        def signal() -> tuple[dict[str, float], float]:
            """What the HPA reads: the averages over the pods of the Deployment, the ones it runs (idle extras serve 0)."""
            served = query_by_pod(url, queries[INFERENCES_PER_SECOND])
            queue = query_by_pod(url, queries[QUEUE_MS_PER_REQUEST])
            averages = {
                INFERENCES_PER_SECOND: sum(served.values()) / hpa.current,
                QUEUE_MS_PER_REQUEST: sum(queue.get(p, 0.0) for p in pods[: hpa.current]) / hpa.current,
            }
            return averages, sum(served.values())

        try:
            steps = []
            for fraction in LOAD_FRACTIONS:
                offered = fraction * SERVERS * case.throughput_per_replica  # inferences/s
                load.set(offered / case.rows, hpa.current)
                time.sleep(SETTLE_SECONDS)  # the rate window holds only this step's load
                syncs = []
                for index in range(SYNCS_PER_STEP):
                    if index:  # the replicas the last sync set take the load a while
                        load.set(offered / case.rows, hpa.current)
                        time.sleep(SYNC_REAL_SECONDS)
                    averages, served = signal()
                    syncs.append({"averages": averages, "served": served, "replicas": hpa.sync(averages)})
                steps.append({"fraction": fraction, "offered": offered, "ideal": ideal_replicas(offered, deployment), "syncs": syncs})
            # Back to zero: the scale-down window holds the replicas, then they fall to minReplicas.
            load.stop()
            time.sleep(SETTLE_SECONDS)
            down = []
            for _ in range(40):
                averages, _served = signal()
                down.append((hpa.now, hpa.sync(averages)))
            fail_if_any_exited(servers)
            yield {"case": case, "steps": steps, "down": down, "spec": spec, "load": load, "deployment": deployment}
        finally:
            load.stop()


def _describe(run) -> str:
    return "\n".join(
        f"{s['fraction']}x offered {s['offered']:.0f}/s ideal {s['ideal']}: "
        + ", ".join(
            f"served {x['served']:.1f}/s queue {x['averages'][QUEUE_MS_PER_REQUEST]:.0f} ms → {x['replicas']}" for x in s["syncs"]
        )
        for s in run["steps"]
    )


def test_the_loadtest_delivered_the_load(run):
    """Every run of `tritonfleet loadtest` started, sent its schedule and got an answer to every request."""
    load = run["load"]
    assert load.failures == [], load.failures
    results = load.results
    assert results and sum(r.requests for r in results) > 0
    assert all(r.errors == 0 and r.succeeded == r.requests for r in results), [(r.url, r.error_samples) for r in results]
    assert all(r.mode == "rate" and r.batch_size == run["case"].rows for r in results)


def test_the_signal_moves_with_offered_load(run):
    """Served inferences/s across the fleet track the offered load at each step (rows counted for the batched model)."""
    for step in run["steps"]:
        served = step["syncs"][-1]["served"]
        if step["offered"] == 0:
            assert served == 0, _describe(run)
        else:
            assert abs(served - step["offered"]) <= 0.25 * step["offered"], _describe(run)


def test_desired_replicas_within_one_of_ideal_at_every_step(run):
    print(_describe(run))  # shown with -rA: the measured trajectory
    for step in run["steps"]:
        assert abs(step["syncs"][-1]["replicas"] - step["ideal"]) <= 1, _describe(run)
    assert run["steps"][0]["syncs"][-1]["replicas"] == run["deployment"].min_replicas, "zero traffic gives minReplicas"
    assert run["steps"][-1]["syncs"][-1]["replicas"] == run["deployment"].max_replicas, _describe(run)


def test_no_oscillation_at_steady_load(run):
    """Within a step the replica count never goes up and then down (or down and then up)."""
    for step in run["steps"]:
        counts = [s["replicas"] for s in step["syncs"]]
        changes = [b - a for a, b in zip(counts, counts[1:], strict=False) if b != a]
        assert all(c > 0 for c in changes) or all(c < 0 for c in changes), _describe(run)


def test_scale_down_is_stabilised_then_reaches_min(run):
    window = run["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"]
    start = run["down"][0][0] - 15
    held = [replicas for at, replicas in run["down"] if at - start < window]
    assert set(held) == {run["deployment"].max_replicas}, run["down"]
    assert run["down"][-1][1] == run["deployment"].min_replicas, run["down"]


def test_no_signal_is_nan_or_missing_when_idle(run):
    idle = run["steps"][0]["syncs"]
    assert all(not math.isnan(v) for s in idle for v in s["averages"].values())
