"""Sizing uses measurements honestly: a loadtest result that missed its latency target, saturated or failed is refused
with the reason, never ranked or scaled to another GPU; a sweep's curve answers for the deployment's own target;
cross-GPU estimates say what they were scaled from."""

from __future__ import annotations

import json

import pytest

from tests.conftest import engine_config
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import CONFIG_NAMESPACE
from tritonfleet.core.loadtest_result import LoadtestResult, Refused, usable_capacity
from tritonfleet.core.size_options import Guardrails, rank_options
from tritonfleet.core.sizing import Capacity
from tritonfleet.plan.sizing import deployment_capacities, plan_sizing


def _latency(p99: float | None, p50: float = 5.0) -> dict:
    return {"p50": p50, "p90": p99, "p95": p99, "p99": p99, "max": p99}


def result(*, offered: float | None = 1000.0, achieved: float = 1000.0, errors: int = 0, p99: float = 20.0, **more) -> dict:
    requests = 1000
    return {
        "format": "tritonfleet-loadtest/1", "model": "resnet", "modelVersion": "", "url": "127.0.0.1:8000",
        "protocol": "http", "mode": "rate" if offered else "concurrency", "offeredRate": offered,
        "concurrency": None if offered else 4, "batchSize": 1, "replicas": 1, "startedAt": "2026-12-03T09:00:00+00:00",
        "durationS": 10.0, "requests": requests, "succeeded": requests - errors, "errors": errors, "errorSamples": [],
        "achievedRequestsPerSecond": achieved, "achievedInferencesPerSecond": achieved, "latencyMs": _latency(p99),
        "latencyMeasuredFrom": "scheduled send time (open loop)", "arrivals": "poisson", **more,
    }  # fmt: skip


def point(offered: float, achieved: float, p99: float, errors: int = 0) -> dict:
    return {
        "offeredRate": offered, "requests": 1000, "errors": errors, "achievedRequestsPerSecond": achieved,
        "achievedInferencesPerSecond": achieved, "latencyMs": _latency(p99), "saturated": achieved < 0.95 * offered,
        "meetsTarget": p99 <= 50,
    }  # fmt: skip


CURVE = [point(1000, 1000, 12), point(2000, 1990, 30), point(3000, 2960, 48), point(4000, 3300, 900)]


@pytest.mark.parametrize(
    ("changes", "target_ms", "reason"),
    [
        ({"achieved": 600.0}, 50, "offered 1,000.0 requests/s, achieved 600.0 (< 95%): the server fell behind"),
        ({"errors": 999, "achieved": 0.1}, 50, "999 of 1000 requests failed (99.9% > 1%)"),
        ({"errors": 20}, 50, "20 of 1000 requests failed (2.0% > 1%)"),
        ({"p99": 80.0}, 50, "p99 80 ms is above the latency target of 50 ms"),
        ({"achieved": 0.0, "errors": 1000, "latencyMs": _latency(None)}, None, "no request succeeded (1000 errors of 1000 requests)"),
        ({"saturation": {"saturated": True, "reasons": ["the client fell behind"]}}, 50, "the client fell behind"),
        ({"stable": False, "stabilityPercent": 10, "saturation": {"saturated": False, "reasons": []}}, 50,
         "its windows never agreed within 10 % (rerun with a longer --duration, or at a load the server holds)"),
        # the run's verdict judges offered by what a Poisson schedule sent, not the nominal rate
        ({"achieved": 600.0, "saturation": {"saturated": False, "reasons": []}}, 10, "p99 20 ms is above the latency "
         "target of 10 ms"),
    ],
)
def test_a_measurement_that_is_no_capacity_is_refused_with_the_reason(changes, target_ms, reason):
    with pytest.raises(Refused) as refused:
        usable_capacity(LoadtestResult.model_validate(result(**changes)), target_ms)
    assert reason in refused.value.reasons


def test_a_measurement_that_met_its_target_is_used_per_replica():
    usable = usable_capacity(LoadtestResult.model_validate(result(achieved=990.0, replicas=2)), 50)
    assert (usable.inferences_per_second, usable.latency_ms, usable.percentile) == (495.0, 20.0, 99)
    # a closed loop has no offered rate: it cannot fall behind, only fail or miss the target
    closed = usable_capacity(LoadtestResult.model_validate(result(offered=None, achieved=70.0)), 50)
    assert closed.inferences_per_second == 70.0 and closed.at == "concurrency 4"


def test_a_sweep_answers_with_its_best_point_within_the_deployments_target():
    swept = LoadtestResult.model_validate(result(curve=CURVE, achieved=3300.0, p99=900.0))
    assert usable_capacity(swept, 50).inferences_per_second == 2960  # 4000/s offered saturated at 3300, p99 900 ms
    assert usable_capacity(swept, 30).inferences_per_second == 1990  # a stricter target: the curve still answers
    assert usable_capacity(swept, None).inferences_per_second == 2960  # saturated points never count
    with pytest.raises(Refused) as refused:
        usable_capacity(swept, 10)
    assert refused.value.reasons[0] == "no load point of the sweep is usable"
    assert "at 1,000.0 requests/s offered: p99 12 ms is above the latency target of 10 ms" in refused.value.reasons


def test_the_p90_percentile_of_a_result_is_the_one_held_against_the_target():
    doc = result(percentile=90, latencyMs={"p50": 5.0, "p90": 40.0, "p95": 70.0, "p99": 90.0, "max": 95.0})
    assert usable_capacity(LoadtestResult.model_validate(doc), 50).latency_ms == 40.0


def _config(tmp_path, doc: dict | None, **changes):
    if doc is not None:
        (tmp_path / "result.json").write_text(json.dumps(doc))
    raw = dict(engine_config("dev"))
    key = f"{CONFIG_NAMESPACE}:tritonDeployments"
    deployments = json.loads(raw[key])
    deployments[0].pop("throughputPerReplica", None)
    deployments[0].update({"loadtestResult": {"path": "result.json", "model": "resnet"}, **changes})
    raw[key] = json.dumps(deployments)
    return load_stack_config(raw, "dev")


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        (result(p99=80.0), "p99 80 ms is above the latency target of 50 ms"),
        (result(errors=999, achieved=0.1), "999 of 1000 requests failed"),
        (result(achieved=400.0), "the server fell behind"),
    ],
)
def test_the_plan_refuses_a_bad_measurement_with_the_reason_and_the_fix(tmp_path, doc, fragment):
    with pytest.raises(ConfigError) as error:
        plan_sizing(_config(tmp_path, doc), tmp_path)
    message = str(error.value)
    assert "tritonfleet:tritonDeployments[0].loadtestResult.path" in message and fragment in message
    assert "fix: tritonfleet loadtest --model resnet --sweep --latency-target 50ms --json result.json" in message


def test_a_sweep_sizes_the_plan_and_its_source_says_which_point(tmp_path):
    config = _config(tmp_path, result(curve=CURVE, achieved=3300.0, p99=900.0))
    capacity = deployment_capacities(config, tmp_path)[config.triton_deployments[0].name]
    assert (capacity.kind, capacity.inferences_per_second, capacity.p99_ms) == ("measured", 2960, 48)
    assert "poisson arrivals, sweep point 3,000.0 requests/s offered, p99 48 ms" in capacity.source
    assert all("arrivals" not in f["message"] for f in plan_sizing(config, tmp_path)["findings"])


def test_one_load_point_is_said_to_be_a_lower_bound(tmp_path):
    single = plan_sizing(_config(tmp_path, result()), tmp_path)["findings"]
    assert any("measured at one load point: the capacity is at least 1,000/s" in f["message"] for f in single)
    swept = plan_sizing(_config(tmp_path, result(curve=CURVE)), tmp_path)["findings"]
    assert not any("one load point" in f["message"] for f in swept)


def test_uniform_arrivals_and_a_missing_target_are_said(tmp_path):
    uniform = plan_sizing(_config(tmp_path, result(arrivals="uniform")), tmp_path)["findings"]
    assert any("measured with uniform arrivals" in f["message"] and "--sweep" in f["message"] for f in uniform)
    old = {k: v for k, v in result().items() if k != "arrivals"}  # a result from before arrivals were recorded
    assert any("uniform arrivals" in f["message"] for f in plan_sizing(_config(tmp_path, old), tmp_path)["findings"])
    untargeted = plan_sizing(_config(tmp_path, result(p99=900.0), latencyTarget=None), tmp_path)["findings"]
    assert any(f["key"] == "tritonDeployments[0].latencyTarget" for f in untargeted)


def test_size_estimates_other_gpus_only_from_a_measurement_within_the_target(stack_config):
    config = stack_config("prod")
    vision = next(d for d in config.triton_deployments if d.name == "vision")  # L40S, latencyTarget 50ms
    vouched = Guardrails(benchmark_model="resnet50")  # other GPUs are scaled only by a benchmark said to represent it
    good = rank_options(config, vision, Capacity(900.0, "measured", "loadtest", 40.0), vouched)
    kinds = {o.gpu: o.capacity_kind for o in good.options}
    assert kinds["L40S"] == "measured" and kinds["H200"] == "estimate: measured L40S x H200/L40S benchmark"
    assert good.winner is not None
    over = rank_options(config, vision, Capacity(900.0, "measured", "loadtest", 80.0), vouched)
    assert {o.gpu for o in over.options if o.capacity is not None} == {"L40S"} and over.winner is None
    assert any("estimated from a measurement over the latency target" in n for n in over.notes)
    benchmark_only = rank_options(config, vision, None, vouched)
    assert all(o.capacity_kind == "estimate: benchmark" for o in benchmark_only.options if o.capacity is not None)
