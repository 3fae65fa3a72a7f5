"""The HPA's signal and targets, its config errors, and the HPA model the live proof (test_autoscaling_live.py) uses."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT, engine_config, one_line

from components.k8s.autoscaling import (
    INFERENCES_PER_SECOND,
    KV_CACHE,
    LLM_SIGNALS,
    QUEUE_MS_PER_REQUEST,
    SEQUENCES,
    TTFT,
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


def test_the_kv_cache_signal_reads_the_engines_share_of_its_cache():
    """TensorRT-LLM's engine layout reports blocks by kv_cache_block_type, of which the rule reads only used over max
    (not free, tokens_per, reused or fraction, which older backends lack). No other layout exports its KV cache."""
    rules = {r["name"]["as"]: r for r in triton_adapter_rules()}
    used, capacity = rules[LLM_SIGNALS["engine"][KV_CACHE]]["metricsQuery"].split(" / ")
    assert 'kv_cache_block_type="used",<<.LabelMatchers>>' in used
    assert capacity.startswith("clamp_min(") and 'kv_cache_block_type="max",' in capacity, "no capacity reads 0, not NaN"
    assert [layout for layout, signals in LLM_SIGNALS.items() if KV_CACHE in signals] == ["engine"]
    assert len(rules) == len(triton_adapter_rules()), "one rule per served name"


def test_vllm_sequences_come_from_its_latency_histogram_by_littles_law():
    """The vLLM backend exports no scheduler gauge: the seconds its requests spent in the engine, per second of the
    window, are the mean requests in the pod (Little's law)."""
    rule = next(r for r in triton_adapter_rules() if r["name"]["as"] == LLM_SIGNALS["vllm"][SEQUENCES])
    assert rule["seriesQuery"] == 'vllm:e2e_request_latency_seconds_sum{namespace!="",pod!=""}'
    assert rule["metricsQuery"] == "sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)"


def test_tensorrt_llm_sequences_are_its_active_requests():
    """Its "waiting" is active minus scheduled (tensorrtllm_backend model_instance_state.cc): adding it to "active"
    would count a paused request twice."""
    sequences = LLM_SIGNALS["engine"][SEQUENCES]
    query = next(r for r in triton_adapter_rules() if r["name"]["as"] == sequences)["metricsQuery"]
    assert 'nv_trt_llm_request_metrics{request_type="active",<<.LabelMatchers>>}' in query and "waiting" not in query


def _llm(backend: str, layout: str | None = None, **settings) -> TritonDeployment:
    llm = {"backend": backend, "model": "Llama-3.1-8B", "precision": "bf16", "maxContext": 4096, "maxSequences": 16,
           "ttftTarget": "1.5s"} | ({"layout": layout} if layout else {})
    return TritonDeployment.model_validate({"name": "llm", "pool": "h200", "minReplicas": 1, "maxReplicas": 4,
                                            "targetUtilization": 0.7, "llm": llm, **settings})


def _hpa_targets(deployment: TritonDeployment) -> dict[str, dict[str, str]]:
    values = autoscaling_values(deployment, monitoring=True)
    rendered = {"modelRepository": "s3://models", "replicas": {"min": 1, "max": 4}, "autoscaling": values}
    spec = by_kind(render(rendered))["HorizontalPodAutoscaler"]["spec"]
    return {m["pods"]["metric"]["name"]: m["pods"]["target"] for m in spec["metrics"]}


def test_an_engine_hpa_scales_on_sequences_kv_cache_and_ttft():
    deployment = _llm("tensorrtllm", "engine")
    signals = LLM_SIGNALS["engine"]
    assert autoscaling_values(deployment, monitoring=True)["kvCache"] == {"metric": signals[KV_CACHE], "target": "700m"}
    assert _hpa_targets(deployment) == {
        signals[SEQUENCES]: {"type": "AverageValue", "averageValue": "11200m"},  # 16 sequences x 0.7
        signals[KV_CACHE]: {"type": "AverageValue", "averageValue": "700m"},  # the whole cache x 0.7
        signals[TTFT]: {"type": "AverageValue", "averageValue": "1500"},
    }
    hpa = Hpa(by_kind(render({"modelRepository": "s3://models", "replicas": {"min": 1, "max": 4},
                              "autoscaling": autoscaling_values(deployment, monitoring=True)}))
              ["HorizontalPodAutoscaler"]["spec"], current=2)  # fmt: skip
    busy = {signals[SEQUENCES]: 4.0, signals[KV_CACHE]: 0.98, signals[TTFT]: 200.0}
    assert hpa.proposal(busy) == 3, "long prompts: the cache fills (0.98 / 0.7 x 2) before the batch does"


def test_a_vllm_hpa_scales_on_sequences_and_ttft_without_a_kv_cache():
    signals = LLM_SIGNALS["vllm"]
    assert _hpa_targets(_llm("vllm")) == {
        signals[SEQUENCES]: {"type": "AverageValue", "averageValue": "11200m"},
        signals[TTFT]: {"type": "AverageValue", "averageValue": "1500"},
    }


def test_an_llmapi_hpa_has_its_ttft_guard_and_the_request_rate_where_a_capacity_is_given():
    """TensorRT-LLM's LLM API layout (the default) exports no sequence or KV-cache family: the TTFT guard alone, and
    inferences/s against a stated or measured capacity; the chart renders a guard-only HPA."""
    ttft = LLM_SIGNALS["llmapi"][TTFT]
    assert _hpa_targets(_llm("tensorrtllm")) == {ttft: {"type": "AverageValue", "averageValue": "1500"}}
    assert _hpa_targets(_llm("tensorrtllm", throughputPerReplica=10)) == {
        INFERENCES_PER_SECOND: {"type": "AverageValue", "averageValue": "7000m"},
        ttft: {"type": "AverageValue", "averageValue": "1500"},
    }


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
    assert hpa.proposal({"queue": 0}) is None, "a metric not served blocks a scale-down"
    assert hpa.proposal({"queue": 30}) == 6, "and is skipped in a scale-up"
    assert hpa.proposal({"queue": 20}) == 4, "or where the others hold the count"
    with pytest.raises(AssertionError, match="NaN"):
        hpa.proposal({"load": float("nan")})


def test_an_llm_hpa_without_a_load_signal_is_a_plan_warning():
    """TensorRT-LLM's LLM API layout with only the queue-time guard: its HPA scales on TTFT alone (queue time stays near
    0 for a streaming model); a stated capacity or the engine layout give it a load signal."""
    from tritonfleet.monitoring.autoscaling import autoscaling_warnings, load_signals

    config = load_stack_config(engine_config("prod"), "prod")
    guard_only = _llm("tensorrtllm", queueTimeTarget="50ms")
    assert load_signals(guard_only) == [] and load_signals(_llm("tensorrtllm", "engine")) == [SEQUENCES, KV_CACHE]
    assert load_signals(_llm("vllm", throughputPerReplica=10)) == ["inferences/s", SEQUENCES]
    profiled = _llm("tensorrtllm", loadtestResult={"path": "llm.json", "model": "tensorrt_llm"})
    assert load_signals(profiled) == ["inferences/s"], "a loadtest --llm profile gives the LLM API layout a request rate"
    assert autoscaling_warnings(config) == [], "prod states throughputPerReplica"
    warned = config.model_copy(update={"triton_deployments": [guard_only, *config.triton_deployments[1:]]})
    assert [one_line(w) for w in autoscaling_warnings(warned)] == [
        "deployment llm: TensorRT-LLM's LLM API layout exports no sequence or KV-cache metric, so its HPA has no load "
        "signal and scales only on time to first token (queue time stays near 0 for a streaming model); set "
        "throughputPerReplica or loadtestResult (tritonfleet loadtest --llm), or serve the engine layout"]


def test_a_metric_the_pods_do_not_export_blocks_every_scale_down():
    """The hazard of an LLM HPA reading a family its backend lacks (a vLLM image without vllm_backend#92's gauges):
    it scales up on the metrics it has, then holds the peak forever once load falls, where the same HPA over metrics
    that exist returns to minReplicas (horizontal.go computeReplicasForMetrics, tests/hpa_model.py)."""
    signals = LLM_SIGNALS["vllm"]
    spec = by_kind(render({"modelRepository": "s3://models", "replicas": {"min": 1, "max": 4},
                           "autoscaling": autoscaling_values(_llm("vllm"), monitoring=True)}))["HorizontalPodAutoscaler"]
    complete, missing_one = Hpa(spec["spec"]), Hpa(spec["spec"])
    missing_one.targets["vllm:num_requests_running"] = 11.2  # as if the HPA also read the absent gauge
    busy, idle = {signals[SEQUENCES]: 40.0, signals[TTFT]: 300.0}, {signals[SEQUENCES]: 0.0, signals[TTFT]: 0.0}
    for hpa in (complete, missing_one):
        for _ in range(4):
            hpa.sync(busy)
        assert hpa.current == 4, "scale-up goes ahead on the metrics it has"
        for _ in range(40):  # 10 simulated minutes: past the 5-minute scale-down window
            hpa.sync(idle)
    assert (complete.current, complete.scale_downs_blocked) == (1, 0)
    assert (missing_one.current, missing_one.scale_downs_blocked) == (4, 40), "ScalingActive false: held at the peak"


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
