"""The load generator's pure parts: arrival schedules, realistic inputs (a pool of distinct tensors, --shape for
variable dims, BYTES, perf_analyzer's --input-data) and the clear messages for bad input; no server needed."""

from __future__ import annotations

import itertools
import json
import statistics

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.local_servers import free_port
from tests.test_sizing_measurements import result as result_document
from tritonfleet import loadtest
from tritonfleet.cli import app
from tritonfleet.core.loadtest_result import LoadtestResult
from tritonfleet.loadtest import InputSpec, LoadtestError, LoadtestUsageError, ModelSpec, Plan, _intervals, input_pool

IMAGE = InputSpec("IMAGE", "FP32", (-1, 3))
TEXT = InputSpec("TEXT", "BYTES", (1,))
MODEL = ModelSpec((IMAGE, TEXT), max_batch_size=8)


def _plan(**changes) -> Plan:
    return Plan(**{"url": "127.0.0.1:1", "model": "m", "rate": 100.0, **changes})


def test_poisson_gaps_are_exponential_at_the_rate_and_uniform_gaps_are_fixed():
    gaps = list(itertools.islice(_intervals(_plan()), 20_000))
    assert statistics.fmean(gaps) == pytest.approx(0.01, rel=0.05)
    assert statistics.stdev(gaps) / statistics.fmean(gaps) == pytest.approx(1.0, rel=0.05)  # exponential: CV 1
    assert set(itertools.islice(_intervals(_plan(arrivals="uniform")), 100)) == {0.01}
    assert list(itertools.islice(_intervals(_plan(schedule_us=(1000, 3000))), 4)) == [0.001, 0.003, 0.001, 0.003]
    assert _plan().arrivals_name == "poisson" and _plan(schedule_us=(5,)).arrivals_name == "schedule"


def test_a_pool_of_distinct_tensors_with_shapes_batches_and_bytes():
    pool = input_pool(_plan(shapes={"IMAGE": (5, 3)}, batch_size=2, distinct=4, string_length=8), MODEL)
    assert len(pool) == 4
    (name, image, datatype), (_, text, text_type) = pool[0]
    assert (name, image.shape, datatype, image.dtype) == ("IMAGE", (2, 5, 3), "FP32", np.float32)
    assert (text.shape, text_type, text.dtype, len(text[0, 0])) == ((2, 1), "BYTES", object, 8)
    assert len({request[0][1].tobytes() for request in pool}) == 4, "distinct tensors: a response cache cannot answer all"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({}, "input IMAGE has variable dims [-1,3]: give the shape to send, e.g. --shape IMAGE:224,3"),
        ({"shapes": {"IMAGE": (5, 4)}}, "--shape IMAGE:5,4 does not fit the model's dims [-1,3]"),
        ({"shapes": {"IMAGE": (5,)}}, "does not fit the model's dims [-1,3] (same rank"),
        ({"shapes": {"IMAGE": (5, 3), "OTHER": (1,)}}, "--shape names OTHER, which the model does not have"),
    ],
)
def test_shapes_that_do_not_fit_say_the_fix(changes, message):
    with pytest.raises(LoadtestError) as error:
        input_pool(_plan(**changes), MODEL)
    assert message in str(error.value)


def test_input_data_in_perf_analyzers_format(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"data": [
        {"IMAGE": {"content": [1, 2, 3, 4, 5, 6], "shape": [2, 3]}, "TEXT": ["hello"]},
        {"IMAGE": {"content": [0.5] * 3, "shape": [1, 3]}, "TEXT": ["world"]},
    ]}))  # fmt: skip
    pool = input_pool(_plan(input_data=path, batch_size=3), MODEL)
    assert [request[0][1].shape for request in pool] == [(3, 2, 3), (3, 1, 3)]
    assert pool[1][1][1][0, 0] == b"world" and pool[0][0][1].dtype == np.float32


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"data": [{"IMAGE": {"content": [1, 2, 3, 4], "shape": [1, 4]}, "TEXT": ["a"]}]},
         "entry 1, input IMAGE: shape [1,4] does not match the model's [-1,3]"),
        ({"data": [{"IMAGE": {"content": [1, 2], "shape": [1, 3]}, "TEXT": ["a"]}]},
         "entry 1, input IMAGE: 2 values for shape [1,3] (3 values)"),
        ({"data": [{"IMAGE": {"content": [1, 2, 3], "shape": [1, 3]}}]}, "entry 1: no TEXT"),
        ({"data": [{"IMAGE": [1, 2, 3], "TEXT": ["a"], "EXTRA": [1]}]}, "entry 1: unknown input EXTRA"),
        ({"data": [{"IMAGE": {"content": ["x", "y", "z"], "shape": [1, 3]}, "TEXT": ["a"]}]}, "values that are not FP32"),
        ({"rows": []}, "perf_analyzer's format"),
    ],
)
def test_input_data_that_does_not_match_the_model_says_so(tmp_path, document, message):
    path = tmp_path / "data.json"
    path.write_text(json.dumps(document))
    with pytest.raises(LoadtestError) as error:
        input_pool(_plan(input_data=path, shapes={"IMAGE": (1, 3)}), MODEL)
    assert message in str(error.value) and f"fix {path}" in str(error.value)


def test_input_data_that_is_not_json_or_missing(tmp_path):
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(LoadtestError, match="is not JSON"):
        input_pool(_plan(input_data=tmp_path / "bad.json"), MODEL)
    with pytest.raises(LoadtestError, match="cannot read --input-data"):
        input_pool(_plan(input_data=tmp_path / "none.json"), MODEL)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--rate", "5", "--sweep"], 64, "--sweep needs --latency-target"),
        (["--rate", "5", "--latency-target", "50"], 1, "--latency-target 50: a time with its unit"),
        (["--rate", "5", "--shape", "IMAGE"], 1, "--shape IMAGE: NAME:d1,d2,... with dims > 0"),
        (["--rate", "5", "--shape", "IMAGE:0,3"], 1, "with dims > 0"),
        (["--rate", "5", "--percentile", "98"], 1, "--percentile must be 50, 90, 95 or 99"),
        (["--rate", "5", "--timeout", "0"], 1, "--timeout must be in (0, 600]"),
    ],
)
def test_bad_loadtest_arguments_say_the_fix(args, code, message):
    outcome = CliRunner().invoke(app, ["loadtest", "--model", "m", "--url", f"127.0.0.1:{free_port()}", *args])
    assert outcome.exit_code == code and message in outcome.output and "Traceback" not in outcome.output


def test_a_bad_schedule_file_says_the_format(tmp_path):
    (tmp_path / "gaps.txt").write_text("20ms\n")
    outcome = CliRunner().invoke(app, ["loadtest", "--model", "m", "--rate", "5", "--schedule", str(tmp_path / "gaps.txt")])
    assert outcome.exit_code == 1 and "one whole number of microseconds a line" in outcome.output


def _served(ceiling: float, knee_ms: float = 40.0):
    """A fake run: a server that serves up to `ceiling`/s, its p99 rising towards the ceiling and past it."""
    asked: list[float] = []

    def fake_run(plan: Plan, progress=None, stop=None) -> LoadtestResult:
        asked.append(plan.rate)
        achieved = min(plan.rate, ceiling)
        p99 = knee_ms / max(0.02, 1 - plan.rate / ceiling) if plan.rate < ceiling else 5000.0
        saturated = plan.rate > ceiling
        return LoadtestResult.model_validate(result_document(
            offered=plan.rate, achieved=achieved, p99=p99,
            saturation={"saturated": saturated, "reasons": ["behind"] if saturated else []},
        ))  # fmt: skip

    return fake_run, asked


def test_a_sweep_doubles_then_bisects_to_the_highest_rate_within_the_target(monkeypatch):
    fake_run, asked = _served(100.0)
    monkeypatch.setattr(loadtest, "run", fake_run)
    swept = loadtest.sweep(_plan(rate=10.0, latency_target_ms=250), limit=1000)
    # 10, 20, 40, 80 meet (p99 200 ms at 80/s), 160 saturates; then bisect: 120, 100, 90, 85 miss
    assert asked == [10, 20, 40, 80, 160, 120, 100, 90, 85]
    assert swept.capacity.offered_rate == 80  # the first rate that missed is within 10 % of it
    assert [p.offered_rate for p in swept.curve] == sorted(asked)
    assert swept.offered_rate == swept.capacity.offered_rate  # the headline figures are the capacity point's


def test_a_sweep_whose_first_point_misses_stops_and_records_no_capacity(monkeypatch):
    fake_run, asked = _served(5.0)
    monkeypatch.setattr(loadtest, "run", fake_run)
    swept = loadtest.sweep(_plan(rate=10.0, latency_target_ms=200), limit=1000)
    assert asked == [10] and swept.capacity is None and swept.curve[0].meets_target is False
    with pytest.raises(LoadtestUsageError, match="a sweep needs a latency target"):
        loadtest.sweep(_plan(rate=10.0), limit=100)


def test_a_deployment_gives_the_sweep_its_latency_target_and_result_path(tmp_path):
    from tests.test_models_deployment_checks import _project
    from tritonfleet.cli.loadtest import _deployment_defaults

    base = ["loadtest", "--model", "m", "--url", f"127.0.0.1:{free_port()}", "--rate", "5", "--sweep"]
    outcome = CliRunner().invoke(app, [*base, "--stack", "dev", "--deployment", "resnet"])
    assert outcome.exit_code == 1 and "no Triton server answers" in outcome.output  # the target came from dev: 50ms
    alone = CliRunner().invoke(app, [*base, "--stack", "dev"])
    assert alone.exit_code == 64 and "--stack and --deployment go together" in alone.output
    project = _project(tmp_path, loadtestResult={"path": "loadtests/llm.json", "model": "llm"})
    target, path = _deployment_defaults("prod", "llm", tmp_path, None, None)
    assert (target, path) == ("10s", tmp_path / "loadtests" / "llm.json") and project == str(tmp_path)  # prod llm: latencyTarget 10s
    assert _deployment_defaults("prod", "llm", tmp_path, "1s", tmp_path / "x.json") == ("1s", tmp_path / "x.json")


def test_the_verdict_lines_say_how_the_run_was_made_and_what_it_found():
    from tritonfleet.cli.loadtest import verdict_lines

    single = LoadtestResult.model_validate(result_document(
        p99=80.0, latencyTargetMs=50, stable=False, stabilityPercent=10, windows=[], warmupS=2,
        saturation={"saturated": True, "reasons": ["offered 1,000.0 requests/s, achieved 600.0"]},
        server={"requests": 10, "queueMs": 30.5, "computeMs": 20.0},
    ))  # fmt: skip
    lines = verdict_lines(single)
    assert lines[0].startswith("arrivals poisson, warm-up 2 s")
    assert "0 windows did not agree within 10 %" in lines
    assert "verdict: saturated: offered 1,000.0 requests/s, achieved 600.0" in lines
    assert "Triton per request: queue 30.50 ms, compute 20.00 ms (10 requests)" in lines
    assert "p99 80.0 ms misses the target of 50 ms" in lines
    from tests.test_sizing_measurements import CURVE

    swept = LoadtestResult.model_validate(result_document(curve=CURVE, latencyTargetMs=50, capacity={
        "achievedInferencesPerSecond": 2960, "offeredRate": 3000, "latencyMs": 48}))  # fmt: skip
    lines = verdict_lines(swept)
    assert "      3000/s: 2,960.0 infer/s, p99 48.0 ms, meets the target" in lines
    assert lines[-1] == "capacity: 2,960.0 inferences/s within 50 ms (p99 48.0 ms)"
