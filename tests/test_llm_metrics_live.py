"""Live: the LLM metric path end to end. A real tritonserver (the nvidia-pytriton wheel, CPU) runs a decoupled
Python-backend model that streams tokens and exports what the vLLM backend exports (as
triton-inference-server/vllm_backend does: tritonfleet/core/llm_exports.py) and what TensorRT-LLM's engine layout
exports through Triton's custom-metrics API; a real Prometheus scrapes it with gcp-prod's rules (its llm deployment runs
vLLM), then a fresh one with prod's set to the engine layout (TensorRT-LLM), and every tritonfleet-llm record returns
data. (prod as shipped, the LLM API layout, records only the time to first token from Triton's own histogram.)

Everything binds 127.0.0.1 on free ports, every loop is bounded in count and time, and every process started here is
stopped by its pid.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack

import pytest
import requests

from tests.conftest import engine_config
from tests.live_stack import CHART_METRICS_FLAGS, prometheus, query, start_triton, triton_job, wait_until_ready
from tests.local_servers import stop
from tests.serving_helpers import with_layout
from tritonfleet.core.config import load_stack_config
from tritonfleet.monitoring import llm_rules, rules

NAMESPACE, POD = "triton", "triton-llm-6f8d9c-q7x2m"  # a pod of the stacks' llm release, as the rules select them
DEADLINE_SECONDS = 120
MAX_REQUESTS = 10_000  # over both stacks' checks
TOKENS_PER_REQUEST = 8
# TensorRT-LLM's time to first token is Triton's first-response histogram, which the wheel's Triton 2.51 does not
# export (tests/test_monitoring_live.py); promtool checks that record (tests/test_llm_monitoring.py).
NOT_EXPORTED_BY_2_51 = {"prod": {llm_rules.TTFT}}

MODEL_CONFIG = """name: "llm"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "N", data_type: TYPE_INT32, dims: [ 1 ] } ]
output [ { name: "TOKEN", data_type: TYPE_INT32, dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""
# The vLLM backend's families (vllm_backend src/utils/metrics.py), with its labels (model, version).
MODEL_CODE = """import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        labels = {"model": args["model_name"], "version": args["model_version"]}
        family = pb_utils.MetricFamily

        self.families = []  # a family must outlive its metrics

        def metric(name, kind, **kwargs):
            self.families.append(family(name=name, description=name, kind=kind))
            return self.families[-1].Metric(labels=labels, **kwargs)

        self.ttft = metric("vllm:time_to_first_token_seconds", family.HISTOGRAM, buckets=[0.001, 0.01, 0.1, 1.0])
        self.tpot = metric("vllm:time_per_output_token_seconds", family.HISTOGRAM, buckets=[0.001, 0.01, 0.1, 1.0])
        self.tokens = metric("vllm:generation_tokens_total", family.COUNTER)
        # TensorRT-LLM's (tensorrtllm_backend README, "Triton Metrics"): gauges told apart by a label, a histogram.
        self.trt_tokens = metric("nv_llm_output_token_len", family.HISTOGRAM, buckets=[1, 10, 100, 1000])
        blocks = family(name="nv_trt_llm_kv_cache_block_metrics", description="blocks", kind=family.GAUGE)
        queue = family(name="nv_trt_llm_request_metrics", description="requests", kind=family.GAUGE)
        self.families += [blocks, queue]
        self.trt_used = blocks.Metric(labels={**labels, "kv_cache_block_type": "used"})
        self.trt_max = blocks.Metric(labels={**labels, "kv_cache_block_type": "max"})
        self.trt_max.set(1000)
        self.trt_waiting = queue.Metric(labels={**labels, "request_type": "waiting"})

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            count = int(pb_utils.get_input_tensor_by_name(request, "N").as_numpy().reshape(-1)[0])
            start = last = time.monotonic()
            for i in range(count):
                time.sleep(0.002)
                sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("TOKEN", np.array([i], dtype=np.int32))]))
                now = time.monotonic()
                (self.ttft if i == 0 else self.tpot).observe(now - (start if i == 0 else last))
                last = now
            self.tokens.increment(count)
            self.trt_tokens.observe(count)
            self.trt_used.set(250)
            self.trt_waiting.set(0)
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
"""


def _stream(http_port: int, finished: threading.Event, sent: list[int]) -> None:
    session = requests.Session()
    session.trust_env = False  # see tests/test_monitoring_live.py _load
    while not finished.is_set() and sent[0] < MAX_REQUESTS:
        try:
            url = f"http://127.0.0.1:{http_port}/v2/models/llm/generate_stream"
            with session.post(url, json={"N": [TOKENS_PER_REQUEST]}, stream=True, timeout=5) as response:
                events = [line for line in response.iter_lines() if line.startswith(b"data:")]
            sent[0] += 1
            sent[1] += len(events)
        except requests.RequestException:
            time.sleep(0.2)


@pytest.fixture(scope="module")
def streaming(tmp_path_factory):
    """One tritonserver streaming tokens for both stacks' checks (each has a Prometheus of its own with its rules):
    its series are the same whichever rules read them."""
    finished, sent = threading.Event(), [0, 0]
    with ExitStack() as stack:
        triton = start_triton(tmp_path_factory.mktemp("llm-triton"), "triton", {"llm": (MODEL_CONFIG, MODEL_CODE)},
                              args=CHART_METRICS_FLAGS)  # fmt: skip
        stack.callback(stop, triton.process)
        wait_until_ready([triton], time.monotonic() + DEADLINE_SECONDS)
        streamer = threading.Thread(target=_stream, args=(triton.http_port, finished, sent), daemon=True)
        streamer.start()
        stack.callback(streamer.join, timeout=10)
        stack.callback(finished.set)
        yield triton, sent


@pytest.fixture(scope="module", params=[("gcp-prod", None), ("prod", "engine")], ids=["vllm", "engine"])
def live(request, tmp_path_factory, streaming):
    stack_name, layout = request.param
    triton, sent = streaming
    config = with_layout(load_stack_config(engine_config(stack_name), stack_name), layout)
    records = sorted({r["record"] for r in llm_rules.llm_rules(config) if "record" in r} - NOT_EXPORTED_BY_2_51.get(stack_name, set()))
    results: dict[str, list] = {}
    jobs = [triton_job(triton, {"namespace": NAMESPACE, "pod": POD})]
    with prometheus(tmp_path_factory.mktemp("llm-live"), jobs, rules.rule_groups(config)) as url:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while time.monotonic() < deadline:
            try:
                results = {record: query(url, record) for record in records}
            except requests.RequestException:
                results = {}
            if results and all(results.values()):
                break
            time.sleep(1)
        yield {"results": results, "sent": list(sent), "log": triton.log}


def test_the_model_streamed_tokens(live):
    requests_sent, events = live["sent"]
    assert requests_sent > 0 and events >= requests_sent * TOKENS_PER_REQUEST, live["log"].read_text()[-2000:]


def test_every_llm_record_returns_data_for_the_deployment(live):
    for record, result in live["results"].items():
        assert result, f"{record} returned no data"
        labels = result[0]["metric"]
        assert (labels["deployment"], labels["namespace"], labels["model"]) == ("llm", NAMESPACE, "llm"), record


def test_the_recorded_values_are_sane(live):
    value = {record: float(result[0]["value"][1]) for record, result in live["results"].items() if result}
    assert 0 < value.get(llm_rules.TTFT, 0.5) <= 1  # a first token within a second on this CPU model
    assert 0 < value.get(llm_rules.INTER_TOKEN, 0.5) <= 1  # vLLM only
    assert value[llm_rules.OUTPUT_TOKENS] > 0
    assert value.get(llm_rules.KV_CACHE, 0.25) == 0.25 and value.get(llm_rules.WAITING, 0) == 0  # the engine only
