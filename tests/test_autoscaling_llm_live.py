"""The LLM autoscaling proof: three real tritonservers (CPU) each running a decoupled Python-backend "LLM" with a fixed
batch of 4 sequence slots, a fixed per-token time and a fixed KV cache (every sequence holds the same blocks), exporting
what the vLLM backend and TensorRT-LLM's engine layout really export (tritonfleet/core/llm_exports.py) through
Triton's custom-metrics API: vLLM's end-to-end latency and time-to-first-token histograms (no scheduler gauge: no
vllm_backend release exports one), and TensorRT-LLM's nv_trt_llm_request_metrics and nv_trt_llm_kv_cache_block_metrics
(every request_type and kv_cache_block_type its backend reports, so the queries must pick theirs) with Triton's
first-response histogram in ms (Triton 2.51 of the wheel exports none: the model exports one of that name, labels and
unit from the same first-token times). A real Prometheus scrapes them with the ServiceMonitor's relabelling; streaming
load from `tritonfleet loadtest --llm` at 0, ¼, ½, 1× and 2× of the fleet's sequence capacity goes only to the replicas
the HPA runs; the shipped prometheus-adapter queries of BOTH layouts are templated as the adapter does, and the
Kubernetes HPA algorithm (tests/hpa_model.py) runs over the HPA the chart renders for a vLLM deployment (sequences by
Little's law against maxSequences × targetUtilization, the TTFT guard) and for a TensorRT-LLM engine one (its active
sequences, KV-cache use against targetUtilization, the TTFT guard) in the same steps.

Time is compressed as in tests/test_autoscaling_live.py: the adapter's window `[1m]` becomes `[4s]` (Prometheus
scrapes every second) and each HPA sync is 15 simulated seconds but ~1 s of real load. Every process started here is
stopped by its pid; every loop and run is bounded in count and time.
"""

from __future__ import annotations

import math
import threading
import time

import pytest

from components.k8s.autoscaling import KV_CACHE, LLM_SIGNALS, SEQUENCES, TTFT
from components.k8s.triton import autoscaling_values
from tests.hpa_model import Hpa
from tests.live_stack import STARTUP_SECONDS, fail_if_any_exited, fleet, query_by_pod, wait_for_pods
from tests.serving_helpers import by_kind, render, streaming_llm_config
from tests.test_autoscaling_live import NAMESPACE, adapter_query
from tritonfleet import loadtest_llm
from tritonfleet.core.config import TritonDeployment

SERVERS, SLOTS = 3, 4
PREFILL_S, TOKEN_S, INPUT_TOKENS, TOKENS = 0.020, 0.050, 8, 8
# The KV cache: blocks of TOKENS_PER_BLOCK tokens; a sequence holds the blocks of its prompt and output from its
# prefill to its last token, and the cache holds SLOTS such sequences (a known capacity, full when the batch is).
TOKENS_PER_BLOCK = 4
BLOCKS_PER_SEQUENCE = math.ceil((INPUT_TOKENS + TOKENS) / TOKENS_PER_BLOCK)
KV_BLOCKS = SLOTS * BLOCKS_PER_SEQUENCE
SERVICE_S = PREFILL_S + (TOKENS - 1) * TOKEN_S  # one sequence's time in a slot
LOAD_FRACTIONS = (0.0, 0.25, 0.5, 1.0, 2.0)  # of the fleet's sequence capacity (SERVERS x SLOTS)
WINDOW_S, SYNCS_PER_STEP, SYNC_REAL_SECONDS = 4, 3, 0.7  # WINDOW_S: adapter_query's [4s] for the shipped [1m]
RUN_MAX_SECONDS, JOIN_SECONDS = 60, 15
# The model publishes one family after another, so a scrape may fall between two of them: a sequence that started or
# ended then is in one family's sample and not the other's. Sequences a pod on average over a window, at most.
MISMATCH = 0.5
BACKENDS = ("vllm", "engine")  # layouts; the first one's HPA sets the replicas the load goes to
# per layout: its signals by kind (vLLM exports no KV cache); sequences and the KV cache are load (over every pod), TTFT
# a guard (running pods)
SIGNALS = {b: {"sequences": LLM_SIGNALS[b][SEQUENCES], "ttft": LLM_SIGNALS[b][TTFT]} for b in BACKENDS}
SIGNALS["engine"]["kv_cache"] = LLM_SIGNALS["engine"][KV_CACHE]
LOAD = ("sequences", "kv_cache")

MODEL_CONFIG = streaming_llm_config("svc")
# A batch of SLOTS sequences: a request waits for a slot, then runs holding BLOCKS_PER_SEQUENCE blocks of the KV cache.
# vLLM's backend observes each request's time in the engine, queued and running, when it ends
# (vllm:e2e_request_latency_seconds), and its time to first token. TensorRT-LLM counts as it does: its executor admits
# at most its max sequences ("max", the batch) as "active", all scheduled here (its "waiting" is active minus
# scheduled: 0), and the requests it queues for a slot are in no family it exports.
MODEL_CODE = f"""import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        labels = {{"model": args["model_name"], "version": args["model_version"]}}
        family = pb_utils.MetricFamily
        self.families = [
            family(name="vllm:e2e_request_latency_seconds", description="e2e", kind=family.HISTOGRAM),
            family(name="vllm:time_to_first_token_seconds", description="ttft", kind=family.HISTOGRAM),
            family(name="nv_trt_llm_request_metrics", description="requests", kind=family.GAUGE),
            family(name="nv_trt_llm_kv_cache_block_metrics", description="kv blocks", kind=family.GAUGE),
            family(name="nv_inference_first_response_histogram_ms", description="first response", kind=family.HISTOGRAM),
        ]
        self.e2e = self.families[0].Metric(labels=labels, buckets=[0.1, 1.0, 10.0])
        self.ttft = self.families[1].Metric(labels=labels, buckets=[0.01, 0.1, 1.0, 10.0])
        requests = {{t: self.families[2].Metric(labels={{**labels, "request_type": t}})
                    for t in ("active", "waiting", "scheduled", "context", "max")}}
        blocks = {{t: self.families[3].Metric(labels={{**labels, "kv_cache_block_type": t}})
                  for t in ("max", "free", "used", "tokens_per", "fraction")}}
        requests["max"].set({SLOTS})
        blocks["max"].set({KV_BLOCKS})
        blocks["tokens_per"].set({TOKENS_PER_BLOCK})
        self.trt_requests, self.trt_blocks = requests, blocks
        self.first_response_ms = self.families[4].Metric(labels=labels, buckets=[10, 100, 1000, 10000])
        self.slots = threading.Semaphore({SLOTS})
        self.lock = threading.Lock()
        self.counts = {{"running": 0, "waiting": 0, "prefill": 0}}
        self.first_tokens, self.in_engine = [], []
        # One thread publishes the metrics: the python backend's metric calls from many request threads at once
        # crashed Triton 2.51 (a boost::interprocess lock_exception in the stub, then SIGSEGV in the server).
        threading.Thread(target=self._publish, daemon=True).start()

    def _publish(self):
        while True:
            with self.lock:
                running, waiting, prefill = self.counts["running"], self.counts["waiting"], self.counts["prefill"]
                first_tokens, self.first_tokens = self.first_tokens, []
                in_engine, self.in_engine = self.in_engine, []
            used = running * {BLOCKS_PER_SEQUENCE}
            for kind, value in (("active", running), ("scheduled", running), ("waiting", 0), ("context", prefill)):
                self.trt_requests[kind].set(value)
            for kind, value in (("used", used), ("free", {KV_BLOCKS} - used), ("fraction", used / {KV_BLOCKS})):
                self.trt_blocks[kind].set(value)
            for seconds in first_tokens:
                self.ttft.observe(seconds)
                self.first_response_ms.observe(seconds * 1000)
            for seconds in in_engine:
                self.e2e.observe(seconds)
            time.sleep(0.05)

    def _count(self, state, change):
        with self.lock:
            self.counts[state] += change

    def _generate(self, request, arrived):
        sender = request.get_response_sender()
        count = int(pb_utils.get_input_tensor_by_name(request, "max_tokens").as_numpy().reshape(-1)[0])
        with self.slots:
            self._count("waiting", -1)
            self._count("running", 1)
            self._count("prefill", 1)
            time.sleep({PREFILL_S})
            self._count("prefill", -1)
            for i in range(count):
                if i:
                    time.sleep({TOKEN_S})
                else:
                    with self.lock:
                        self.first_tokens.append(time.monotonic() - arrived)
                token = np.array([b"tok"], dtype=np.object_)
                sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("text_output", token)]))
            self._count("running", -1)
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        with self.lock:
            self.in_engine.append(time.monotonic() - arrived)

    def execute(self, requests):
        for request in requests:
            self._count("waiting", 1)
            threading.Thread(target=self._generate, args=(request, time.monotonic()), daemon=True).start()
        return None
"""


def _deployment(layout: str) -> TritonDeployment:
    served = {"backend": "vllm"} if layout == "vllm" else {"backend": "tensorrtllm", "layout": layout}
    return TritonDeployment.model_validate({
        "name": "svc", "pool": "cpu", "minReplicas": 1, "maxReplicas": SERVERS,
        "llm": {**served, "model": "Llama-3.1-8B", "precision": "bf16", "maxContext": 4096, "maxSequences": SLOTS,
                "ttftTarget": "2s"},
    })  # fmt: skip


def _hpa_spec(deployment: TritonDeployment) -> dict:
    values = {"modelRepository": "s3://models", "replicas": {"min": 1, "max": SERVERS}}
    values["autoscaling"] = autoscaling_values(deployment, monitoring=True)
    return by_kind(render(values))["HorizontalPodAutoscaler"]["spec"]


def ideal_replicas(sequences: float, deployment: TritonDeployment) -> int:
    usable = deployment.llm.max_sequences * deployment.target_utilization
    return min(max(math.ceil(sequences / usable - 1e-9), deployment.min_replicas), deployment.max_replicas)


class LlmLoad:
    """Open-loop streaming load from `tritonfleet loadtest --llm`, one run per replica the HPA runs at its share of
    the rate, restarted when the rate or the replica count changes (stopped through its stop event)."""

    def __init__(self, ports: list[int]):
        self.urls = [f"127.0.0.1:{port}" for port in ports]
        self.rate, self.replicas, self.step = 0.0, 0, 0
        self.results: list = []  # (step, result)
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def set(self, rate: float, replicas: int) -> None:
        if (rate, replicas) == (self.rate, self.replicas):
            return
        self.stop()
        self.rate, self.replicas = rate, replicas
        if rate <= 0:
            return
        self._stop = threading.Event()
        for url in self.urls[:replicas]:
            plan = loadtest_llm.LlmPlan(
                url=url, model="svc", protocol="http", rate=rate / replicas, arrivals="uniform",
                duration_s=RUN_MAX_SECONDS, max_requests=10_000, timeout_s=30, input_tokens=(INPUT_TOKENS, INPUT_TOKENS),
                output_tokens=(TOKENS, TOKENS),
            )  # fmt: skip
            thread = threading.Thread(target=self._run, args=(plan, self._stop, self.step), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _run(self, plan: loadtest_llm.LlmPlan, stop_event: threading.Event, step: int) -> None:
        try:
            result = loadtest_llm.run(plan, stop=stop_event)
        except Exception as error:
            with self._lock:
                self.failures.append(f"{plan.url} at {plan.rate:.1f}/s: {error}")
            return
        with self._lock:
            self.results.append((step, result))

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=JOIN_SECONDS)
            if thread.is_alive():
                self.failures.append(f"a loadtest --llm run did not stop within {JOIN_SECONDS}s")
        self._threads = []
        self.rate, self.replicas = 0.0, 0


def _alone(spec: dict, metric: str, average: float, running: int) -> int:
    """What the HPA would want on this one metric (within minReplicas and maxReplicas)."""
    single = Hpa({**spec, "metrics": [m for m in spec["metrics"] if m["pods"]["metric"]["name"] == metric]}, current=running)
    return min(max(single.proposal({metric: average}), 1), SERVERS)


def _averages(url: str, queries: dict[str, str], pods: list[str], replicas: int, at: float) -> dict[str, float]:
    """One backend's signals at `at` as the HPA averages them over the `replicas` pods it runs: the load (sequences,
    KV cache) of every pod, so requests still finishing on a pod just scaled away count; the guard (TTFT) of the
    running pods."""
    load = {kind: query_by_pod(url, queries[kind], at) for kind in LOAD if kind in queries}
    ttft = query_by_pod(url, queries["ttft"], at)
    averages = {kind: sum(values.values()) / replicas for kind, values in load.items()}
    return {**averages, "ttft": sum(ttft.get(p, 0.0) for p in pods[:replicas]) / replicas}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("autoscale-llm")
    with fleet(tmp, SERVERS, {"svc": (MODEL_CONFIG, MODEL_CODE)}, NAMESPACE, "triton-svc") as replicas:
        url, pods, servers = replicas.prometheus, replicas.pods, replicas.servers
        queries = {b: {kind: adapter_query(metric, pods) for kind, metric in SIGNALS[b].items()} for b in BACKENDS}
        # every pod's load series of both layouts exist (0 while idle) before the first sync
        deadline = time.monotonic() + STARTUP_SECONDS
        for backend in BACKENDS:
            for kind in LOAD:
                if kind in queries[backend]:
                    wait_for_pods(url, queries[backend][kind], pods, deadline, servers)
        deployments = {b: _deployment(b) for b in BACKENDS}
        specs = {b: _hpa_spec(d) for b, d in deployments.items()}
        hpas = {b: Hpa(spec) for b, spec in specs.items()}
        driver = Hpa(specs[BACKENDS[0]])  # its replicas take the load; every HPA reads the pods that run
        load = LlmLoad(replicas.http_ports)
        try:
            steps = []
            for load.step, fraction in enumerate(LOAD_FRACTIONS):
                sequences = fraction * SERVERS * SLOTS  # sequences the offered load keeps in flight (Little's law)
                rate = sequences / SERVICE_S
                before = driver.current  # the replicas the step's load first meets
                load.set(rate, driver.current)
                time.sleep(WINDOW_S)  # the window holds only this step's load
                syncs = []
                for index in range(SYNCS_PER_STEP):
                    if index:  # the replicas the last sync set take the load a while
                        load.set(rate, driver.current)
                        time.sleep(SYNC_REAL_SECONDS)
                    running, now = driver.current, time.time()  # both backends' queries read the same instant
                    sync = {}
                    for backend, hpa in hpas.items():
                        signals = _averages(url, queries[backend], pods, running, now)
                        averages = {SIGNALS[backend][kind]: value for kind, value in signals.items()}
                        # each backend's HPA watches the pods that run and the changes made to them: what it would
                        # set now (its own recommendations, so its own stabilisation)
                        hpa.current, hpa.events = running, list(driver.events)
                        # what each load signal alone would have the HPA want
                        alone = {kind: _alone(specs[backend], SIGNALS[backend][kind], signals[kind], running)
                                 for kind in LOAD if kind in signals}  # fmt: skip
                        sync[backend] = {"signals": signals, "running": running, "sequences": signals["sequences"] * running,
                                         "alone": alone, "desired": hpa.sync(averages)}  # fmt: skip
                    # the vLLM HPA's behaviour (stabilisation, rate policies) sets the replicas the load goes to
                    sync["replicas"] = driver.sync({SIGNALS[BACKENDS[0]][k]: v for k, v in sync[BACKENDS[0]]["signals"].items()})
                    syncs.append(sync)
                steps.append({"fraction": fraction, "sequences": sequences, "rate": rate, "before": before,
                              "ideal": ideal_replicas(sequences, deployments[BACKENDS[0]]), "syncs": syncs})  # fmt: skip
            load.stop()
            for index, step in enumerate(steps):
                step["in_system_s"] = _time_in_system(load.results, index)
            fail_if_any_exited(servers)
            yield {"steps": steps, "specs": specs, "load": load}
        finally:
            load.stop()


def _time_in_system(results: list, step: int) -> float | None:
    """The median request's whole stream in one step, as the client measured it: with this host's load the backend's
    sleeps run longer than stated, and Little's law holds for the time requests really spent."""
    measured = [(r.e2e_ms.p50, r.succeeded) for s, r in results if s == step and r.succeeded and r.e2e_ms.p50]
    count = sum(n for _, n in measured)
    return sum(ms * n for ms, n in measured) / count / 1000 if count else None


def _describe(run) -> str:
    def sync_text(x: dict) -> str:
        kv = f" kv {x['signals']['kv_cache']:.2f}" if "kv_cache" in x["signals"] else ""
        alone = "/".join(str(v) for v in x["alone"].values())
        return f"seen {x['sequences']:.1f}{kv} (alone → {alone}) ttft {x['signals']['ttft']:.0f} ms → {x['desired']}"

    return "\n".join(
        f"{s['fraction']}x {s['rate']:.1f} req/s, {s['sequences']:.0f} sequences, ideal {s['ideal']}, "
        f"in system {s.get('in_system_s') or 0:.2f} s: "
        + "; ".join(f"{b} " + ", ".join(sync_text(x[b]) for x in s["syncs"]) for b in BACKENDS)
        + "; replicas " + ", ".join(str(x["replicas"]) for x in s["syncs"])
        for s in run["steps"]
    )


def test_the_hpa_scales_an_llm_on_what_its_layout_exports_with_a_ttft_guard(run):
    """4 slots x 0.8; the whole cache x 0.8 (the engine only: vLLM's backend exports no KV-cache use); llm.ttftTarget."""
    targets = {"sequences": "3200m", "kv_cache": "800m", "ttft": "2000"}
    for backend, spec in run["specs"].items():
        metrics = {m["pods"]["metric"]["name"]: m["pods"]["target"]["averageValue"] for m in spec["metrics"]}
        assert metrics == {name: targets[kind] for kind, name in SIGNALS[backend].items()}


def test_the_streams_were_delivered(run):
    load = run["load"]
    assert load.failures == [], load.failures
    results = [result for _, result in load.results]
    assert results and all(r.errors == 0 and r.succeeded == r.requests for r in results)
    assert all(r.output_tokens.mean == TOKENS for r in results if r.succeeded)


def _carried(step) -> bool:
    return step["fraction"] <= 1 and step["before"] >= step["ideal"]


def test_the_sequence_signal_moves_with_offered_load(run):
    """vLLM's sequences are Little's law over its end-to-end latency histogram: where the running replicas carry the
    load, rate × time in the system, as the client measured it; where they do not (a step that starts on too few
    replicas, or 2x the fleet), requests queue for a slot, their time in the engine grows, and the signal reads more
    than the load, which is what makes the HPA add replicas."""
    for step in run["steps"]:
        seen = step["syncs"][-1]["vllm"]["sequences"]
        if _carried(step) and step["rate"]:
            assert step["in_system_s"], _describe(run)
            expected = step["rate"] * step["in_system_s"]
            assert abs(seen - expected) <= max(1.0, 0.35 * expected), _describe(run)
        elif _carried(step):
            assert seen == 0, _describe(run)
        else:
            assert seen >= 0.9 * step["sequences"], _describe(run)
    assert any(s["fraction"] == 2.0 and s["syncs"][-1]["vllm"]["sequences"] > s["sequences"] for s in run["steps"])


def test_tensorrt_llm_counts_the_batch_not_its_queue(run):
    """TensorRT-LLM's sequences are its active requests: the running ones, as many as hold KV blocks, never the
    requests queued for a slot. Where the replicas carry the load it reads as vLLM's requests in the engine; at 2x the
    fleet every batch is full (4 a pod) while vLLM's count also holds the queue."""
    for step in run["steps"]:
        for sync in step["syncs"]:
            trtllm = sync["engine"]
            holding_blocks = trtllm["signals"]["kv_cache"] * trtllm["running"] * SLOTS
            assert abs(trtllm["sequences"] - holding_blocks) <= MISMATCH * trtllm["running"], _describe(run)
        last = step["syncs"][-1]
        if _carried(step):
            assert abs(last["engine"]["sequences"] - last["vllm"]["sequences"]) <= max(1.0, 0.35 * last["vllm"]["sequences"])
        if step["fraction"] == 2.0:
            assert last["engine"]["signals"]["sequences"] >= 0.9 * SLOTS, _describe(run)
            assert last["vllm"]["signals"]["sequences"] > SLOTS, _describe(run)


def test_the_kv_cache_signal_is_the_running_sequences_blocks(run):
    """Every running sequence holds BLOCKS_PER_SEQUENCE of the pod's KV_BLOCKS, so the cache in use is the running
    sequences over the slots: about all of them where the replicas carry the load, full at 2x the fleet, and 0 when
    idle (TensorRT-LLM's engine layout: the only one that exports its KV cache)."""
    for step in run["steps"]:
        last = step["syncs"][-1]["engine"]
        if step["fraction"] == 0:
            assert last["signals"]["kv_cache"] == 0, _describe(run)
        elif step["fraction"] == 2.0:
            assert last["signals"]["kv_cache"] >= 0.85, _describe(run)
        elif _carried(step):
            assert last["signals"]["kv_cache"] * last["running"] * SLOTS >= 0.65 * last["sequences"], _describe(run)


@pytest.mark.parametrize("backend", BACKENDS)
def test_desired_replicas_within_one_of_ideal_at_every_step(run, backend):
    """And so is what each load signal alone wants: vLLM's Little's-law sequences, the engine's active sequences and
    its KV cache."""
    print(_describe(run))
    for step in run["steps"]:
        last = step["syncs"][-1]
        assert abs(last[backend]["desired"] - step["ideal"]) <= 1, _describe(run)
        for kind, alone in last[backend]["alone"].items():
            assert abs(alone - step["ideal"]) <= 1, f"{kind} alone: " + _describe(run)
        assert abs(last["replicas"] - step["ideal"]) <= 1, _describe(run)
    assert run["steps"][0]["syncs"][-1][backend]["desired"] == 1, "no traffic gives minReplicas"
    assert run["steps"][-1]["syncs"][-1][backend]["desired"] == SERVERS, _describe(run)


@pytest.mark.parametrize("backend", [*BACKENDS, "replicas"])
def test_no_oscillation_at_steady_load(run, backend):
    """Neither layout's desired count nor the replicas the HPA sets go up and down within a step."""
    for step in run["steps"]:
        counts = [s["replicas"] if backend == "replicas" else s[backend]["desired"] for s in step["syncs"]]
        changes = [b - a for a, b in zip(counts, counts[1:], strict=False) if b != a]
        assert all(c > 0 for c in changes) or all(c < 0 for c in changes), _describe(run)


def test_both_layouts_read_the_ttft_alike(run):
    """One model exports both layouts' TTFT families from the same first-token times, so their queries, as the
    adapter templates them at the same instant, must read it alike."""
    vllm, trtllm = BACKENDS
    for step in run["steps"]:
        for sync in step["syncs"]:
            a, b = sync[vllm]["signals"], sync[trtllm]["signals"]
            assert abs(a["ttft"] - b["ttft"]) <= max(1.0, 0.01 * a["ttft"]), _describe(run)


def test_long_outputs_scale_where_a_request_rate_would_not(run):
    """At ½ the fleet's capacity the request rate is the same as a short-output mix at ½ of a request capacity
    measured with 1-token outputs would carry on one replica, yet the sequences need 2 replicas: an LLM's load is
    sequences × time, not requests."""
    half = next(s for s in run["steps"] if s["fraction"] == 0.5)
    one_token_capacity = SLOTS / PREFILL_S  # requests/s one replica carries when every output is one token
    assert half["rate"] < 0.8 * one_token_capacity  # a requests/s signal stated that way would keep 1 replica
    assert half["syncs"][-1]["replicas"] >= 2, _describe(run)


def test_no_signal_is_nan_when_idle(run):
    idle = run["steps"][0]["syncs"]
    assert all(not math.isnan(v) for sync in idle for b in BACKENDS for v in sync[b]["signals"].values())
