"""The HPA's signal and targets, its config errors, and the HPA model the live proof (test_autoscaling_live.py) uses."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from components.k8s.autoscaling import (
    INFERENCES_PER_SECOND,
    LLM_KV_CACHE,
    LLM_SEQUENCES,
    LLM_TTFT_MS,
    QUEUE_MS_PER_REQUEST,
    target_inferences_per_second,
    target_kv_cache,
    triton_adapter_rules,
)
from components.k8s.triton import autoscaling_values
from tests.hpa_model import Hpa, quantity
from tests.serving_helpers import by_kind, render
from tritonfleet.core.config import ConfigError, TritonDeployment, load_stack_config
from tritonfleet.monitoring.autoscaling import WANTED, autoscaling_rules, hpa_target
from tritonfleet.plan.project import engine_string


def _dev_raw(**deployment_changes) -> dict[str, str]:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    deployment = doc["config"]["tritonfleet:tritonDeployments"][0]
    deployment.update(deployment_changes)
    for key in [k for k, v in deployment_changes.items() if v is None]:
        del deployment[key]
    return {k: engine_string(v) for k, v in doc["config"].items()}


def _problems(**changes) -> dict[str, object]:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(_dev_raw(**changes), "dev")
    return {p.key: p for p in caught.value.problems}


def test_the_primary_signal_counts_inferences_not_requests():
    rules = {r["name"]["as"]: r for r in triton_adapter_rules()}
    primary = rules[INFERENCES_PER_SECOND]
    assert primary["seriesQuery"].startswith("nv_inference_count{")  # batch rows; request_success counts a batch once
    assert primary["metricsQuery"] == "sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)"
    guard = rules[QUEUE_MS_PER_REQUEST]["metricsQuery"]
    assert "clamp_min(" in guard and guard.endswith("/ 1000"), "idle reads 0 ms, not NaN; microseconds become ms"


def test_targets_from_the_stated_capacity_and_the_guard():
    deployment = TritonDeployment(
        name="a", pool="p", min_replicas=1, max_replicas=4, throughput_per_replica=2000, queue_time_target="0.5s"
    )
    values = autoscaling_values(deployment, monitoring=True)
    assert values["enabled"] is True
    assert quantity(values["inferencesPerSecond"]["target"]) == 1600  # 2000 inferences/s × targetUtilization 0.8
    assert values["queueTime"]["targetMs"] == "500"
    assert target_inferences_per_second(0.001, 0.5) == "1m", "a tiny capacity never rounds to a 0 target"
    bare = TritonDeployment(name="a", pool="p", min_replicas=1, max_replicas=4, queue_time_target="20ms")
    assert autoscaling_values(bare, monitoring=True)["inferencesPerSecond"]["target"] == ""
    assert autoscaling_values(bare, monitoring=False)["enabled"] is False


def test_the_kv_cache_signal_reads_each_backends_share_of_its_cache():
    """vLLM reports the share itself (0-1); TensorRT-LLM reports blocks by kv_cache_block_type, of which the rule
    reads only used over max (not free, tokens_per, reused or fraction, which older backends lack)."""
    rules = {r["name"]["as"]: r for r in triton_adapter_rules()}
    vllm, trtllm = rules[LLM_KV_CACHE["vllm"]], rules[LLM_KV_CACHE["tensorrtllm"]]
    assert vllm["seriesQuery"].startswith("vllm:gpu_cache_usage_perc{")
    assert vllm["metricsQuery"] == "max(avg_over_time(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)"
    used, capacity = trtllm["metricsQuery"].split(" / ")
    assert 'kv_cache_block_type="used",<<.LabelMatchers>>' in used
    assert capacity.startswith("clamp_min(") and 'kv_cache_block_type="max",' in capacity, "no capacity reads 0, not NaN"
    assert len(rules) == len(triton_adapter_rules()), "one rule per served name"


def test_tensorrt_llm_sequences_are_its_active_requests():
    """Its "waiting" is active minus scheduled (tensorrtllm_backend model_instance_state.cc): adding it to "active"
    would count a paused request twice."""
    query = next(r for r in triton_adapter_rules() if r["name"]["as"] == LLM_SEQUENCES["tensorrtllm"])["metricsQuery"]
    assert 'nv_trt_llm_request_metrics{request_type="active",<<.LabelMatchers>>}' in query and "waiting" not in query


@pytest.mark.parametrize("backend", ["vllm", "tensorrtllm"])
def test_an_llm_hpa_scales_on_sequences_kv_cache_and_ttft(backend):
    deployment = TritonDeployment.model_validate({
        "name": "llm", "pool": "h200", "minReplicas": 1, "maxReplicas": 4, "targetUtilization": 0.7,
        "llm": {"backend": backend, "model": "Llama-3.1-8B", "precision": "bf16", "maxContext": 4096,
                "maxSequences": 16, "ttftTarget": "1.5s"},
    })  # fmt: skip
    values = autoscaling_values(deployment, monitoring=True)
    assert values["kvCache"] == {"metric": LLM_KV_CACHE[backend], "target": "700m"}  # the whole cache x 0.7
    rendered = {"modelRepository": "s3://models", "replicas": {"min": 1, "max": 4}, "autoscaling": values}
    spec = by_kind(render(rendered))["HorizontalPodAutoscaler"]["spec"]
    metrics = {m["pods"]["metric"]["name"]: m["pods"]["target"] for m in spec["metrics"]}
    assert metrics == {
        LLM_SEQUENCES[backend]: {"type": "AverageValue", "averageValue": "11200m"},
        LLM_KV_CACHE[backend]: {"type": "AverageValue", "averageValue": "700m"},
        LLM_TTFT_MS[backend]: {"type": "AverageValue", "averageValue": "1500"},
    }
    hpa = Hpa(spec, current=2)
    busy = {LLM_SEQUENCES[backend]: 4.0, LLM_KV_CACHE[backend]: 0.98, LLM_TTFT_MS[backend]: 200.0}
    assert hpa.proposal(busy) == 3, "long prompts: the cache fills (0.98 / 0.7 x 2) before the batch does"


def test_kv_cache_target_is_the_share_at_target_utilization():
    assert (target_kv_cache(0.8), target_kv_cache(0.9), target_kv_cache(0.0001)) == ("800m", "900m", "1m")
    plain = TritonDeployment(name="a", pool="p", min_replicas=1, max_replicas=4, throughput_per_replica=10)
    assert "kvCache" not in autoscaling_values(plain, monitoring=True), "a model that is not an LLM has no KV cache"


def test_the_hpa_and_its_wanted_replicas_rule_read_one_target():
    config = load_stack_config(_dev_raw(throughputPerReplica=1234.5, targetUtilization=0.7), "dev")
    deployment = config.triton_deployments[0]
    target = hpa_target(1234.5, 0.7)
    assert quantity(autoscaling_values(deployment, True)["inferencesPerSecond"]["target"]) == pytest.approx(target)
    wanted = next(r for r in autoscaling_rules(config) if r.get("record") == WANTED)
    assert wanted["expr"].endswith(f" / {target!r})"), "the rule divides by the HPA's own target"


def test_rendered_hpa_scales_up_fast_and_down_stabilised():
    deployment = TritonDeployment(name="a", pool="p", min_replicas=2, max_replicas=24, throughput_per_replica=100)
    values = {"modelRepository": "s3://models", "replicas": {"min": 2, "max": 24}, "autoscaling": autoscaling_values(deployment, True)}
    spec = by_kind(render(values))["HorizontalPodAutoscaler"]["spec"]
    assert [m["pods"]["metric"]["name"] for m in spec["metrics"]] == [INFERENCES_PER_SECOND]
    hpa = Hpa(spec)
    load = {INFERENCES_PER_SECOND: 80 * 10 / 2}  # offered: 10 replicas' worth
    assert hpa.sync(load) == 6, "the larger of doubling and 4 pods per minute, at once (no scale-up window)"
    trace = [hpa.sync({INFERENCES_PER_SECOND: 80 * 10 / hpa.current}) for _ in range(4)]
    assert trace == [6, 6, 6, 10], "the next step once the first minute's period has passed"
    idle = [hpa.sync({INFERENCES_PER_SECOND: 0}) for _ in range(28)]
    assert idle[:19] == [10] * 19, "the 300 s scale-down window holds the count"
    assert idle[19:27] == [5] * 8 and idle[27] == 2, "then at most half per 120 s, down to minReplicas"


def test_hpa_model_tolerance_and_largest_proposal():
    spec = {
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [
            {"pods": {"metric": {"name": "load"}, "target": {"averageValue": "100"}}},
            {"pods": {"metric": {"name": "queue"}, "target": {"averageValue": "20"}}},
        ],
        "behavior": {
            "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 10, "periodSeconds": 60}]},
            "scaleDown": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 10, "periodSeconds": 60}]},
        },
    }
    hpa = Hpa(spec, current=4)
    assert hpa.proposal({"load": 109, "queue": 0}) == 4, "within the 10 % tolerance"
    assert hpa.proposal({"load": 111, "queue": 0}) == 5
    assert hpa.proposal({"load": 50, "queue": 60}) == 12, "the larger proposal wins"
    assert hpa.proposal({"queue": 0}) == 0, "a metric not served is skipped"
    with pytest.raises(AssertionError, match="NaN"):
        hpa.proposal({"load": float("nan")})


@pytest.mark.parametrize(
    ("changes", "key", "expected", "fix"),
    [
        ({"queueTimeTarget": 20}, "queueTimeTarget", "ms or s", "20ms"),
        ({"queueTimeTarget": "20 minutes"}, "queueTimeTarget", "ms or s", "20ms"),
        ({"throughputPerReplica": 0}, "throughputPerReplica", ">= 0.001", "tritonDeployments[0].throughputPerReplica' 0.001"),
        ({"targetUtilization": 1.0}, "targetUtilization", "(0, 0.9]", "0.9"),  # the nearest valid value
        ({"targetUtilization": 0}, "targetUtilization", "(0, 0.9]", "0.8"),
        ({"throughputPerReplica": None}, "throughputPerReplica", "queueTimeTarget", "<inferences/s per replica>"),
        ({"minReplicas": 3, "maxReplicas": 2}, "maxReplicas", ">= minReplicas", "maxReplicas' 3"),
    ],
    ids=["guard-without-unit", "guard-bad-unit", "capacity-zero", "utilization-1", "utilization-zero",
         "autoscaled-without-capacity", "min-over-max"],
)
def test_bad_autoscaling_config_names_the_key_and_the_fix(changes, key, expected, fix):
    problem = _problems(**changes)[f"tritonDeployments[0].{key}"]
    assert expected in problem.allowed
    assert fix in problem.fix and "pulumi config set" in problem.fix and "--stack dev" in problem.fix


def test_guard_alone_or_no_monitoring_needs_no_capacity():
    load_stack_config(_dev_raw(throughputPerReplica=None, queueTimeTarget="20ms"), "dev")
    raw = _dev_raw(throughputPerReplica=None)
    raw["tritonfleet:monitoring"] = engine_string({"enabled": False})
    load_stack_config(raw, "dev")
