"""`tritonfleet loadtest --llm` against a real tritonserver (CPU, the nvidia-pytriton wheel) serving a decoupled
Python-backend "LLM" with a known cost: 4 sequence slots, 40 ms to the first token (prefill) and 10 ms a token after
it. It streams exactly the max_tokens asked for, one response a token, as Triton's LLM backends do when streaming.

Everything binds 127.0.0.1 on free ports; loops are bounded in count and time; the server is stopped by its pid.
"""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from tests.conftest import one_line
from tests.live_stack import CHART_METRICS_FLAGS, STARTUP_SECONDS, start_triton, wait_until_ready
from tests.local_servers import free_port, stop
from tests.serving_helpers import streaming_llm_config
from tritonfleet.cli import app
from tritonfleet.core.llm_loadtest_result import read_llm_result
from tritonfleet.loadtest import LoadtestError, grpc_available
from tritonfleet.loadtest_llm import LlmPlan, Prompt, run

SLOTS, PREFILL_S, TOKEN_S = 4, 0.040, 0.010
LLM_CONFIG = streaming_llm_config("llm")
LLM_CODE = f"""import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.slots = threading.Semaphore({SLOTS})  # the batch: sequences decoded at once
        self.threads = []

    def _generate(self, request):
        sender = request.get_response_sender()
        with self.slots:
            prompt = pb_utils.get_input_tensor_by_name(request, "text_input").as_numpy().reshape(-1)[0]
            count = int(pb_utils.get_input_tensor_by_name(request, "max_tokens").as_numpy().reshape(-1)[0])
            time.sleep({PREFILL_S} + 0.0001 * len(prompt.split()))  # prefill grows with the prompt
            for i in range(count):
                if i:
                    time.sleep({TOKEN_S})
                token = np.array([b"tok"], dtype=np.object_)
                sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("text_output", token)]))
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def execute(self, requests):
        for request in requests:
            thread = threading.Thread(target=self._generate, args=(request,), daemon=True)
            thread.start()
            self.threads.append(thread)
        self.threads = [t for t in self.threads if t.is_alive()]
        return None

    def finalize(self):
        for thread in self.threads:
            thread.join(timeout=5)
"""
PLAIN_CONFIG = """name: "plain"
backend: "python"
max_batch_size: 0
input [ { name: "text_input", data_type: TYPE_STRING, dims: [ 1 ] } ]
output [ { name: "text_output", data_type: TYPE_STRING, dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""
PLAIN_CODE = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.get_input_tensor_by_name(r, "text_input")]) for r in requests]
"""


@pytest.fixture(scope="module")
def triton(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("loadtest-llm")
    models = {"llm": (LLM_CONFIG, LLM_CODE), "plain": (PLAIN_CONFIG, PLAIN_CODE)}
    triton = start_triton(tmp, "triton", models, grpc_port=free_port(), args=CHART_METRICS_FLAGS)
    try:
        wait_until_ready([triton], time.monotonic() + STARTUP_SECONDS)
        yield {"http": triton.http, "grpc": f"127.0.0.1:{triton.grpc_port}"}
    finally:
        stop(triton.process)


def _protocols() -> list[str]:
    return ["grpc", "http"] if grpc_available() else ["http"]


@pytest.mark.parametrize("protocol", _protocols())
def test_a_closed_loop_below_the_slots_measures_the_models_known_ttft_and_itl(triton, protocol):
    result = run(LlmPlan(url=triton[protocol], model="llm", protocol=protocol, concurrency=2, max_requests=8,
                         duration_s=30, input_tokens=(16, 16), output_tokens=(12, 12)))  # fmt: skip
    assert result.errors == 0 and result.succeeded == result.requests == 8
    assert result.output_tokens.mean == 12 and result.input_tokens.mean == 16  # every token asked for, streamed
    # Below the slots nothing queues: TTFT is at least the prefill, each later token at least the per-token time.
    assert result.ttft_min_ms >= PREFILL_S * 1000 * 0.9 and result.itl_ms.p50 >= TOKEN_S * 1000 * 0.9
    assert result.e2e_ms.p50 >= result.ttft_ms.p50 + 11 * result.itl_ms.p50 * 0.9
    assert result.ttft_ms.p50 <= result.ttft_ms.p90 <= result.ttft_ms.p95 <= result.ttft_ms.p99 <= result.ttft_ms.max
    # Output tokens/s are 12 per request, and at most what 2 streams can produce.
    assert result.output_tokens_per_second == pytest.approx(12 * result.requests_per_second, rel=0.01)
    ceiling = 2 / (PREFILL_S + 11 * TOKEN_S) * 12
    assert 0 < result.output_tokens_per_second <= 1.1 * ceiling
    assert result.total_tokens_per_second > result.output_tokens_per_second


def test_past_the_slots_requests_wait_for_a_slot_and_ttft_shows_it(triton):
    """8 streams on 4 slots: half wait a whole generation for a slot, so TTFT's p90 is far above its minimum, while
    the time between tokens stays the model's; throughput stays under what 4 slots produce."""
    protocol = _protocols()[0]
    result = run(LlmPlan(url=triton[protocol], model="llm", protocol=protocol, concurrency=8, max_requests=16,
                         duration_s=30, input_tokens=(8, 8), output_tokens=(10, 10)))  # fmt: skip
    assert result.errors == 0 and result.succeeded == 16
    generation_ms = (PREFILL_S + 9 * TOKEN_S) * 1000
    assert result.ttft_ms.p90 >= result.ttft_min_ms + 0.8 * generation_ms
    assert result.output_tokens_per_second <= 1.1 * SLOTS / (PREFILL_S + 9 * TOKEN_S) * 10


def test_open_loop_with_uniform_lengths_prompts_file_and_goodput(triton, tmp_path):
    protocol = _protocols()[0]
    result = run(LlmPlan(url=triton[protocol], model="llm", protocol=protocol, rate=10, arrivals="uniform",
                         duration_s=1.0, output_tokens=(2, 6), prompts=(Prompt("hello there", 3), Prompt("a b c d")),
                         prompts_file="p.jsonl", ttft_target_ms=10_000, itl_target_ms=0.001))  # fmt: skip
    assert result.mode == "rate" and result.requests == 10 and result.errors == 0
    assert result.saturation.saturated is False and result.input_tokens.distribution == "prompts file p.jsonl"
    assert 2 <= result.output_tokens.mean <= 6 and result.input_tokens.mean == 3  # 2 and 4 words, alternating
    # No request streams a token every microsecond: nothing meets the ITL target, so the goodput is 0.
    assert result.goodput.requests_per_second == 0 and result.goodput.share == 0


def test_llm_against_a_model_that_does_not_stream_names_the_fix(triton):
    with pytest.raises(LoadtestError) as error:
        run(LlmPlan(url=triton["http"], model="plain", protocol="http", concurrency=1, max_requests=1))
    assert "not decoupled" in str(error.value) and "drop --llm" in str(error.value)


def test_the_cli_prints_the_table_and_writes_a_result_sizing_reads(triton, tmp_path):
    protocol = _protocols()[0]
    path = tmp_path / "llm.json"
    outcome = CliRunner().invoke(app, [
        "loadtest", "--llm", "--model", "llm", "--url", triton[protocol], "--protocol", protocol,
        "--concurrency", "2", "--requests", "6", "--warmup", "0", "--input-tokens", "8", "--output-tokens", "5",
        "--ttft-target", "5s", "--itl-target", "1s", "--gpu", "L40S", "--json", str(path),
    ])  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    text = one_line(outcome.output)
    for heading in ("TTFT", "ITL", "out tok/s", "goodput"):
        assert heading in text
    assert "output tokens/s per replica" in text
    result = read_llm_result(path)
    assert result.gpu == "L40S" and result.succeeded == 6 and result.goodput.share == 1
    assert json.loads(path.read_text())["format"] == "tritonfleet-loadtest-llm/1"


def test_the_cli_refuses_llm_against_a_non_streaming_model(triton):
    outcome = CliRunner().invoke(app, ["loadtest", "--llm", "--model", "plain", "--url", triton["http"],
                                       "--protocol", "http", "--concurrency", "1", "--requests", "1"])  # fmt: skip
    assert outcome.exit_code == 1
    assert "not decoupled" in one_line(outcome.output)


def test_a_request_based_loadtest_of_a_streaming_model_says_to_add_llm(triton):
    outcome = CliRunner().invoke(app, ["loadtest", "--model", "llm", "--url", triton["http"], "--concurrency", "1",
                                       "--requests", "1"])  # fmt: skip
    assert outcome.exit_code == 1
    assert "is decoupled" in one_line(outcome.output) and "add --llm" in one_line(outcome.output)
