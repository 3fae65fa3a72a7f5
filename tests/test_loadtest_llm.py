"""`loadtest --llm` without a server: lengths, prompt files, the model's streaming interface, and which results
sizing may use (core/llm_loadtest_result.py)."""

from __future__ import annotations

import http.client
import json
import time
from types import SimpleNamespace

import pytest

from tritonfleet import loadtest_llm as ltl
from tritonfleet.core.llm_loadtest_result import (
    Goodput,
    Lengths,
    LlmLoadtestResult,
    usable_token_capacity,
)
from tritonfleet.core.loadtest_result import Latency, Refused, Saturation
from tritonfleet.loadtest import LoadtestError, LoadtestUsageError
from tritonfleet.loadtest_llm import SAMPLING_INPUT, LlmPlan, interface, parse_lengths, read_prompts

PLAN = LlmPlan(url="127.0.0.1:8001", model="llm", concurrency=1)
TRTLLM = {"inputs": [{"name": "text_input", "datatype": "BYTES"}, {"name": "max_tokens", "datatype": "INT32"},
                     {"name": "stream", "datatype": "BOOL"}, {"name": "bad_words", "datatype": "BYTES"}]}  # fmt: skip
VLLM = {"inputs": [{"name": "text_input", "datatype": "BYTES"}, {"name": "stream", "datatype": "BOOL"},
                   {"name": "sampling_parameters", "datatype": "BYTES"},
                   {"name": "exclude_input_in_output", "datatype": "BOOL"}]}  # fmt: skip
DECOUPLED = {"model_transaction_policy": {"decoupled": True}, "input": [{"name": "bad_words", "optional": True}]}


def test_lengths_are_fixed_or_uniform_and_bounded():
    assert parse_lengths("128", "--output-tokens") == (128, 128)
    assert parse_lengths("64:256", "--output-tokens") == (64, 256)
    for bad in ("0", "-3", "256:64", "x", "1:", "2000000", "nan"):
        with pytest.raises(LoadtestError, match="--output-tokens"):
            parse_lengths(bad, "--output-tokens")


def test_a_prompts_file_is_genai_perfs_json_lines(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"text": "hello world"}\n\n{"text_input": "a b c", "output_tokens": 7}\n')
    prompts = read_prompts(path)
    assert [(p.text, p.output_tokens) for p in prompts] == [("hello world", None), ("a b c", 7)]
    for text, found in (("not json\n", "line 1 has no prompt"), ('{"text": "x", "output_tokens": 0}\n', "line 1"),
                        ("", "has no prompts")):  # fmt: skip
        path.write_text(text)
        with pytest.raises(LoadtestError, match=found):
            read_prompts(path)
    with pytest.raises(LoadtestError, match="cannot read"):
        read_prompts(tmp_path / "missing.jsonl")


def test_tensorrt_llm_and_vllm_interfaces_are_found_and_filled():
    trt = interface(PLAN, TRTLLM, DECOUPLED)
    assert (trt.prompt, trt.length, trt.switches) == ("text_input", "max_tokens", ("stream",))
    assert trt.values("hi", 5) == {"text_input": "hi", "max_tokens": 5, "stream": True}
    vllm = interface(PLAN, VLLM, {"model_transaction_policy": {"decoupled": True}})
    assert vllm.length == SAMPLING_INPUT and vllm.switches == ("stream", "exclude_input_in_output")
    sampling = json.loads(vllm.values("hi", 9)[SAMPLING_INPUT])
    assert sampling == {"max_tokens": 9, "min_tokens": 9, "ignore_eos": True}  # the length asked is the length streamed


def test_models_loadtest_llm_cannot_drive_are_refused_with_the_fix():
    with pytest.raises(LoadtestError, match="not decoupled.*drop --llm"):
        interface(PLAN, TRTLLM, {})
    with pytest.raises(LoadtestError, match="no BYTES prompt input"):
        interface(PLAN, {"inputs": [{"name": "INPUT0", "datatype": "FP32"}]}, DECOUPLED)
    with pytest.raises(LoadtestError, match="takes no output length"):
        interface(PLAN, {"inputs": [{"name": "text_input", "datatype": "BYTES"}]}, DECOUPLED)
    with pytest.raises(LoadtestError, match="requires inputs .* bad_words"):
        interface(PLAN, TRTLLM, {"model_transaction_policy": {"decoupled": True}})


def test_plan_bounds():
    with pytest.raises(LoadtestUsageError):
        LlmPlan(url="u", model="m").check()
    for bad in ({"rate": 0.0}, {"concurrency": 0}, {"concurrency": 1, "duration_s": 0}, {"concurrency": 1, "percentile": 80}):
        with pytest.raises(LoadtestError):
            LlmPlan(url="u", model="m", **bad).check()


def _measured(plan: LlmPlan, **stream) -> LlmLoadtestResult:
    """loadtest --llm's result for one request that was due at 10 s, left the client at 10.5 s (it took the client
    0.5 s to build), had its first token at 11 s and its 10th at 11.9 s, and ended at 12 s."""
    record = ltl._Requests()
    times = {"sent": 10.0, "left": 10.5, "first": 11.0, "last": 11.9, "end": 12.0, **stream}
    record.add(ltl._Stream(input_tokens=4, tokens=10, **times))
    return ltl._result(plan, record, "2026-12-05T00:00:00+00:00", 9.0, 20.0, [])


def test_closed_loop_latency_counts_from_when_the_request_left_the_client_open_loop_from_its_schedule():
    """As perf_analyzer stamps a send (GenAI-Perf's TTFT: from when the request is sent): in closed loop the
    client's own time building a request is not the server's; in open loop a client behind its schedule shows."""
    closed = _measured(PLAN)
    assert (closed.ttft_ms.p50, closed.e2e_ms.p50, closed.itl_ms.p50) == (500, 1500, 100)
    opened = _measured(LlmPlan(url="u", model="m", rate=1.0), scheduled=True)
    assert (opened.ttft_ms.p50, opened.e2e_ms.p50, opened.itl_ms.p50) == (1000, 2000, 100)
    assert _measured(PLAN, left=None).ttft_ms.p50 == 1000  # not stamped: counted from when a client took it


def test_the_grpc_and_http_streamers_stamp_the_moment_a_request_leaves(monkeypatch):
    """Each streamer stamps `left` after building the request, right before it goes on the wire."""
    stream = ltl._Stream(sent=time.monotonic(), input_tokens=2)
    seen = []

    class Connection:  # http.client's, for Triton's generate_stream (server-sent events)
        def __init__(self, *address, timeout):
            self.lines = iter([b'data: {"text_output": "tok"}\n', b""])

        def request(self, *args, **kwargs):
            seen.append(stream.left)

        def getresponse(self):
            return SimpleNamespace(status=200, readline=lambda: next(self.lines))

        def close(self):
            return None

    monkeypatch.setattr(http.client, "HTTPConnection", Connection)
    ltl._HttpStreamer(PLAN).request({"text_input": "a b", "max_tokens": 1}, {}, stream)
    assert seen == [stream.left] and stream.sent <= stream.left <= stream.first <= stream.end
    if not ltl.lt.grpc_available():
        return
    import tritonclient.grpc as grpcclient

    class Client:  # tritonclient.grpc's, for Triton's decoupled streaming API
        def __init__(self, url):
            self.callback = None

        def start_stream(self, callback):
            self.callback = callback

        def async_stream_infer(self, model, inputs, **options):
            seen.append(stream.left)
            for outputs, final in (([1], False), ([], True)):
                answer = SimpleNamespace(outputs=outputs, parameters={"triton_final_response": SimpleNamespace(bool_param=final)})
                self.callback(SimpleNamespace(get_response=lambda answer=answer: answer), None)

    monkeypatch.setattr(grpcclient, "InferenceServerClient", Client)
    stream = ltl._Stream(sent=time.monotonic(), input_tokens=2)
    ltl._GrpcStreamer(PLAN, [1]).request({"text_input": "a b", "max_tokens": 1},
                                         {"text_input": "BYTES", "max_tokens": "INT32"}, stream)  # fmt: skip
    assert seen[1:] == [stream.left] and stream.sent <= stream.left <= stream.first <= stream.end


def _result(ttft_p99=200.0, ttft_min=80.0, itl_p99=20.0, saturated=(), errors=0) -> LlmLoadtestResult:
    def latency(p99):
        return Latency(p50=p99 / 2, p90=p99, p95=p99, p99=p99, max=p99)

    return LlmLoadtestResult(
        model="llm", gpu="H100", url="u", protocol="grpc", mode="rate", offeredRate=2.0, arrivals="poisson",
        replicas=2, startedAt="2026-12-05T08:00:00+00:00", durationS=60, requests=120, succeeded=120 - errors,
        errors=errors, inputTokens=Lengths(distribution="fixed 512", mean=512),
        outputTokens=Lengths(distribution="fixed 256", mean=256), ttftMs=latency(ttft_p99), ttftMinMs=ttft_min,
        itlMs=latency(itl_p99), e2eMs=latency(5000), latencyMeasuredFrom="scheduled send time (open loop)",
        requestsPerSecond=2.0, outputTokensPerSecond=512.0, totalTokensPerSecond=1536.0,
        goodput=Goodput(requestsPerSecond=2.0, share=1.0),
        saturation=Saturation(saturated=bool(saturated), reasons=list(saturated)),
    )  # fmt: skip


def test_a_result_within_its_targets_is_a_per_replica_token_capacity():
    capacity = usable_token_capacity(_result(), ttft_target_ms=500, itl_target_ms=50)
    assert capacity.output_tokens_per_second == 256.0  # 512 over 2 replicas
    assert (capacity.ttft_ms, capacity.itl_ms, capacity.mean_output_tokens) == (200.0, 20.0, 256)
    assert LlmLoadtestResult.model_validate_json(_result().dumps()) == _result()


def test_a_result_past_its_targets_or_saturated_is_refused_with_the_reason():
    with pytest.raises(Refused, match="TTFT p99 200.0 ms is above the target of 150 ms: rerun"):
        usable_token_capacity(_result(), ttft_target_ms=150, itl_target_ms=None)
    with pytest.raises(Refused, match="fastest request took 80.0 ms: the target is below the measured minimum"):
        usable_token_capacity(_result(), ttft_target_ms=50, itl_target_ms=None)
    with pytest.raises(Refused, match="inter-token latency p99 20.0 ms is above the target of 10 ms"):
        usable_token_capacity(_result(), ttft_target_ms=None, itl_target_ms=10)
    with pytest.raises(Refused, match="fell behind"):
        usable_token_capacity(_result(saturated=["offered 2.0 requests/s, achieved 1.0: the server fell behind"]),
                              None, None)  # fmt: skip


def test_a_deployment_gives_loadtest_llm_its_ttft_itl_targets_and_gpu(tmp_path):
    """`--stack prod --deployment llm`: the llm block's targets and the pool's GPU (H200), so the result is measured
    against what sizing holds it to and names the GPU sizing checks; options given win."""
    from tests.test_models_deployment_checks import _project
    from tritonfleet.cli.loadtest import _llm_defaults

    llm = {"backend": "tensorrtllm", "model": "Llama-3.3-70B", "precision": "fp8", "kvCachePrecision": "fp8",
           "maxContext": 8192, "maxSequences": 64, "ttftTarget": "800ms", "itlTarget": "40ms"}  # fmt: skip
    _project(tmp_path, llm=llm)
    assert _llm_defaults("prod", "llm", tmp_path, None, None, None) == ("800ms", "40ms", "H200")
    assert _llm_defaults("prod", "llm", tmp_path, "1s", "60ms", "H100") == ("1s", "60ms", "H100")
