"""Sizing an LLM deployment in tokens: a `loadtest --llm` result is its capacity in output tokens/s per replica,
held to the llm block's TTFT/ITL targets and checked against the deployment's model and GPU; the target load is in
output tokens/s (or requests/s with lengths); replicas = ceil(peak / capacity with headroom); $/1M is per 1M output
tokens at whole nodes; the plan shows tokens/s at min and max replicas."""

from __future__ import annotations

import json

import pytest

from tests.conftest import engine_config, one_line
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import CONFIG_NAMESPACE
from tritonfleet.core.sizing import TOKENS
from tritonfleet.plan.sizing import deployment_capacities, plan_sizing, with_measured_capacities
from tritonfleet.plan.text import sizing_lines


def llm_result(**changes) -> dict:
    def latency(p99: float) -> dict:
        return {"p50": p99 / 2, "p90": p99, "p95": p99, "p99": p99, "max": p99}

    doc = {
        "format": "tritonfleet-loadtest-llm/1", "model": "llama", "gpu": "H200", "url": "127.0.0.1:8001",
        "protocol": "grpc", "mode": "rate", "offeredRate": 10.0, "arrivals": "poisson", "replicas": 1,
        "startedAt": "2026-12-05T08:00:00+00:00", "durationS": 60.0, "requests": 600, "succeeded": 600, "errors": 0,
        "inputTokens": {"distribution": "fixed 512", "mean": 512}, "outputTokens": {"distribution": "fixed 200", "mean": 200},
        "ttftMs": latency(500.0), "ttftMinMs": 120.0, "itlMs": latency(30.0), "e2eMs": latency(6500.0),
        "latencyMeasuredFrom": "scheduled send time (open loop)", "requestsPerSecond": 10.0,
        "outputTokensPerSecond": 2000.0, "totalTokensPerSecond": 7120.0,
        "goodput": {"requestsPerSecond": 10.0, "share": 1.0}, "saturation": {"saturated": False, "reasons": []},
    }  # fmt: skip
    doc.update(changes)
    return doc


def _config(tmp_path, doc: dict | None, target: dict | None = None, llm: dict | None = None, **changes):
    """prod with its llm deployment (2 x H200 a replica, 2..12 replicas) measured by `doc`."""
    if doc is not None:
        (tmp_path / "llm.json").write_text(json.dumps(doc))
    raw = dict(engine_config("prod"))
    key = f"{CONFIG_NAMESPACE}:tritonDeployments"
    deployments = json.loads(raw[key])
    llm_deployment = next(d for d in deployments if d.get("llm"))
    llm_deployment.pop("throughputPerReplica", None)
    llm_deployment.update({
        "loadtestResult": {"path": "llm.json", "model": "llama"},
        "targetLoad": target or {"peak": 12000, "average": 4000, "unit": "outputTokens/s"}, **changes,
    })  # fmt: skip
    llm_deployment["llm"].update(llm or {})
    raw[key] = json.dumps(deployments)
    return load_stack_config(raw, "prod")


def _llm(section: dict) -> dict:
    return next(d for d in section["deployments"] if d["deployment"] == "llm")


def test_a_token_target_is_sized_on_the_measured_tokens_per_replica(tmp_path):
    config = _config(tmp_path, llm_result())
    capacity = deployment_capacities(config, tmp_path)["llm"]
    assert (capacity.unit, capacity.inferences_per_second, capacity.kind) == (TOKENS, 2000.0, "measured")
    assert "loadtest --llm llm.json (llama on H200" in capacity.source and "TTFT p99 500 ms" in capacity.source
    section = plan_sizing(config, tmp_path)
    llm = _llm(section)
    # ceil(12000 / (2000 x 0.75)) = 8 at the peak; ceil(4000 / 1500) = 3 at the average
    assert llm["replicas"] == {"minimum": 2, "average": 3, "peak": 8}
    assert llm["unit"] == "output tokens" and llm["capacity"]["outputTokensPerSecond"] == 2000.0
    assert llm["outputTokensPerSecond"] == {"minReplicas": 4000.0, "maxReplicas": 24000.0, "peak": 12000}
    assert llm["maxReplicasCarryPeak"] is True
    peak, average = llm["usdPer1M"]["peak"], llm["usdPer1M"]["average"]
    assert isinstance(peak, float) and isinstance(average, float) and average > peak > 0  # idle share is paid
    text = "\n".join(sizing_lines({"sizing": section}))
    assert "$/1M output tokens peak" in text and "output tokens/s at 4,000 (min replicas) to 24,000" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_requests_with_an_output_length_are_tokens(tmp_path):
    config = _config(tmp_path, llm_result(), {"peak": 60, "average": 20, "unit": "requests/s", "outputTokens": 200,
                                              "inputTokens": 512})  # fmt: skip
    assert _llm(plan_sizing(config, tmp_path))["replicas"] == {"minimum": 2, "average": 3, "peak": 8}


def test_the_hpa_keeps_counting_inferences_not_the_token_capacity(tmp_path):
    """Where the layout exports sequences (TensorRT-LLM's engine), they carry the load; TensorRT-LLM's LLM API layout
    exports none, so its HPA counts requests against the profile's: 2000 output tokens/s at 200 a request, 10/s."""
    engine = with_measured_capacities(_config(tmp_path, llm_result(), llm={"layout": "engine"}), tmp_path)
    assert next(d for d in engine.triton_deployments if d.llm).capacity_per_replica is None
    llmapi = next(d for d in with_measured_capacities(_config(tmp_path, llm_result()), tmp_path).triton_deployments
                  if d.llm)  # fmt: skip
    assert llmapi.capacity_per_replica == 10.0


def test_a_token_capacity_with_a_load_in_requests_and_no_length_names_the_key(tmp_path):
    config = _config(tmp_path, llm_result(), {"peak": 60, "unit": "requests/s"})
    with pytest.raises(ConfigError) as error:
        plan_sizing(config, tmp_path)
    text = one_line(str(error.value))
    assert "targetLoad.outputTokens" in text and "the measurement averaged 200 output tokens" in text
    assert "pulumi config set" in text and "targetLoad.outputTokens to 200" in text


def test_past_the_peak_max_replicas_is_refused_in_tokens(tmp_path):
    config = _config(tmp_path, llm_result(), {"peak": 40000, "unit": "outputTokens/s"})
    with pytest.raises(ConfigError) as error:
        plan_sizing(config, tmp_path)
    assert "the peak of 40,000 output tokens/s needs 27 replicas" in one_line(str(error.value))


@pytest.mark.parametrize(
    ("doc", "llm", "fragment"),
    [
        (llm_result(model="mistral"), {}, "it measured model 'mistral', the deployment serves 'llama'"),
        (llm_result(gpu="L40S"), {}, "it was measured on L40S, the deployment runs on H200"),
        (llm_result(gpu=None), {}, "it does not say which GPU served it (--gpu)"),
        (llm_result(), {"ttftTarget": "300ms"}, "TTFT p99 500.0 ms is above the target of 300 ms: rerun"),
        (llm_result(), {"ttftTarget": "100ms"}, "the target is below the measured minimum"),
        (llm_result(), {"itlTarget": "20ms"}, "inter-token latency p99 30.0 ms is above the target of 20 ms"),
        (llm_result(errors=60, succeeded=540), {}, "60 of 600 requests failed"),
    ],
)
def test_a_profile_of_another_model_or_gpu_or_past_its_targets_is_refused(tmp_path, doc, llm, fragment):
    with pytest.raises(ConfigError) as error:
        plan_sizing(_config(tmp_path, doc, llm=llm), tmp_path)
    text = one_line(str(error.value))
    assert "loadtestResult.path" in text and fragment in text
    assert "tritonfleet loadtest --llm --model llama --gpu H200" in text


def test_a_target_length_far_from_the_measured_one_is_a_warning(tmp_path):
    config = _config(tmp_path, llm_result(), {"peak": 12000, "unit": "outputTokens/s", "outputTokens": 1000})
    findings = plan_sizing(config, tmp_path)["findings"]
    assert any("outputTokens 1000 is far from the 200" in f["message"] for f in findings)


def test_tokens_on_a_deployment_without_an_llm_block_are_config_errors():
    raw = dict(engine_config("dev"))
    key = f"{CONFIG_NAMESPACE}:tritonDeployments"
    deployments = json.loads(raw[key])
    deployments[0]["targetLoad"] = {"peak": 100, "unit": "outputTokens/s", "outputTokens": 10}
    raw[key] = json.dumps(deployments)
    with pytest.raises(ConfigError) as error:
        load_stack_config(raw, "dev")
    text = one_line(str(error.value))
    assert "tritonDeployments[0].targetLoad.unit" in text and "tokens only for an llm deployment" in text
    assert "tritonDeployments[0].targetLoad.outputTokens" in text


def test_a_token_target_with_a_stated_inference_capacity_says_to_measure_with_llm(tmp_path):
    raw = dict(engine_config("prod"))
    key = f"{CONFIG_NAMESPACE}:tritonDeployments"
    deployments = json.loads(raw[key])
    next(d for d in deployments if d.get("llm"))["targetLoad"] = {"peak": 100, "unit": "outputTokens/s"}
    raw[key] = json.dumps(deployments)
    with pytest.raises(ConfigError) as error:
        plan_sizing(load_stack_config(raw, "prod"), tmp_path)
    assert "a load in output tokens/s needs a capacity in tokens" in one_line(str(error.value))


def test_size_ranks_gpus_by_dollars_per_million_output_tokens(tmp_path):
    from tritonfleet.core.size_options import rank_options

    config = _config(tmp_path, llm_result())
    deployment = next(d for d in config.triton_deployments if d.llm)
    ranking = rank_options(config, deployment, deployment_capacities(config, tmp_path)["llm"])
    assert ranking.unit == "output tokens"
    own = [o for o in ranking.options if o.gpu == "H200" and o.capacity is not None]
    assert own and all(o.capacity == 2000.0 and o.replicas == 8 and o.latency_checked for o in own)
    priced = [o for o in ranking.ranked if o.usd_per_million is not None]
    assert priced == sorted(priced, key=lambda o: o.usd_per_million)
    assert any("$/1M counts output tokens" in note for note in ranking.notes)


def test_size_estimates_an_llm_from_mlperf_llama2_70b_rows_in_output_tokens(tmp_path):
    """MLPerf Inference v4.1 Llama 2 70B Server rows (output tokens/s per GPU, read from the result logs), used
    only when named as representing the model, and labelled estimates."""
    from tritonfleet.core.catalog import load_catalog
    from tritonfleet.core.size_options import Guardrails, peak_load, rank_options

    rows = {b.gpu: b for b in load_catalog().benchmarks if b.model == "llama2-70b"}
    assert {g: r.inferences_per_second for g, r in rows.items()} == {"H100": 2700.7, "H200": 3653.5, "B200": 10755.6}
    assert all(r.unit == TOKENS and r.source == "MLPERF41" for r in rows.values())
    assert rows["H200"].inferences_per_second == pytest.approx(29228.22 / 8, abs=0.05)  # 8 GPUs in the system
    config = _config(tmp_path, None, {"peak": 12000, "unit": "outputTokens/s"}, loadtestResult=None,
                     throughputPerReplica=None)  # fmt: skip
    deployment = next(d for d in config.triton_deployments if d.llm)
    rails = Guardrails(benchmark_model="llama2-70b")
    ranking = rank_options(config, deployment, None, rails)
    assert ranking.unit == "output tokens"
    h200 = next(o for o in ranking.options if o.gpu == "H200")
    assert h200.capacity == pytest.approx(2 * 3653.5) and h200.capacity_kind == "estimate: benchmark"
    assert h200.replicas == 3  # ceil(12000 / (7307 x 0.75))
    requests = _config(tmp_path, None, {"peak": 60, "unit": "requests/s"}, loadtestResult=None, throughputPerReplica=None)
    with pytest.raises(ValueError, match="counts output tokens/s: give the target load in outputTokens/s"):
        peak_load(requests, next(d for d in requests.triton_deployments if d.llm), None, rails)


def test_the_pr_diff_names_an_llms_unit_cost_per_million_output_tokens(tmp_path):
    from tritonfleet.diff.compare import unit_cost_diffs

    base = {"sizing": plan_sizing(_config(tmp_path, llm_result(outputTokensPerSecond=1500.0)), tmp_path)}
    head = {"sizing": plan_sizing(_config(tmp_path, llm_result(outputTokensPerSecond=3000.0)), tmp_path)}
    change = next(d for d in unit_cost_diffs(base, head) if d.subject.startswith("deployment llm"))
    assert change.subject == "deployment llm (per 1M output tokens)"
    assert change.basis.before == "measured 1500.0 output tokens/s" and change.basis.after == "measured 3000.0 output tokens/s"
    # 11 replicas of 2 GPUs need 3 eight-GPU nodes at the peak, 6 replicas 2: whole nodes make tokens cheaper.
    assert change.peak.after < change.peak.before
