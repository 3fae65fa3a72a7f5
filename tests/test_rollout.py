"""Model rollouts declared in the stack: the config rules with their fixes, and the pure decisions (steps, replica
split as Argo Rollouts computes it, thresholds, the analysis queries and their verdicts)."""

from __future__ import annotations

import json
import math

import pytest

from tests.conftest import engine_config
from tritonfleet.core import rollout
from tritonfleet.core.config import ConfigError, load_stack_config

ROLLOUT = {"steps": [10, 50, 100], "interval": "5m", "analysis": {"maxErrorRatio": 0.02}}


def prod_with(**changes) -> dict[str, str]:
    """prod's config with its vision deployment changed."""
    raw = engine_config("prod")
    deployments = json.loads(raw["tritonfleet:tritonDeployments"])
    vision = next(d for d in deployments if d["name"] == "vision")
    vision.update(changes)
    raw["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    return raw


def vision(**changes):
    config = load_stack_config(prod_with(**changes), "prod")
    return next(d for d in config.triton_deployments if d.name == "vision")


def problems(**changes) -> dict[str, str]:
    with pytest.raises(ConfigError) as err:
        load_stack_config(prod_with(**changes), "prod")
    return {p.key: f"{p.allowed} | {p.fix}" for p in err.value.problems}


def test_a_declared_rollout_and_pins_load():
    deployment = vision(rollout=ROLLOUT, modelVersions={"resnet50": 3})
    assert deployment.model_versions == {"resnet50": 3}
    assert deployment.rollout.steps == [10, 50, 100] and deployment.rollout.analysis.max_error_ratio == 0.02


def test_weights_must_increase_and_end_at_100():
    found = problems(rollout={**ROLLOUT, "steps": [50, 10]})
    [(key, text)] = [(k, v) for k, v in found.items() if k.endswith("rollout.steps")]
    assert "end at 100" in text and "[10,50,100]" in text.replace(" ", "")


def test_an_interval_under_two_scrapes_is_refused_with_a_fix():
    found = problems(rollout={**ROLLOUT, "interval": "30s"})
    [text] = [v for k, v in found.items() if k.endswith("rollout.interval")]
    assert "at least 60s" in text and "5m" in text


def test_a_one_replica_deployment_cannot_roll_out():
    found = problems(rollout=ROLLOUT, minReplicas=1, maxUnavailable=None)
    [text] = [v for k, v in found.items() if k.endswith("minReplicas")]
    assert "at least 2 with a rollout" in text and text.endswith("minReplicas' 2 --stack prod")


def test_ttft_threshold_only_on_llm_deployments_and_bad_values_are_schema_errors():
    found = problems(rollout={**ROLLOUT, "analysis": {"maxTtftRatio": 1.5}}, modelVersions={"resnet50": -1})
    assert any(k.endswith("maxTtftRatio") and "llm" in v for k, v in found.items())
    assert any("modelVersions" in k for k in found)


@pytest.mark.parametrize(
    ("replicas", "weight", "surge", "expected"),
    # Rows of TestApproximateWeightedNewStableReplicaCounts, utils/replicaset/canary_test.go of argoproj/argo-rollouts
    # at v1.9.1 (https://github.com/argoproj/argo-rollouts/blob/v1.9.1/utils/replicaset/canary_test.go, 2026-12-05)
    [
        (0, 50, 1, (0, 0)), (1, 49, 0, (0, 1)), (1, 1, 1, (1, 1)), (2, 1, 1, (1, 2)), (2, 99, 1, (2, 1)),
        (3, 10, 1, (1, 3)), (3, 49, 1, (2, 2)), (3, 50, 0, (2, 1)), (10, 15, 0, (2, 8)), (10, 1, 1, (1, 10)),
        (10, 18, 1, (2, 9)), (10, 100, 1, (10, 0)),
    ],
)
def test_replica_split_follows_argo_rollouts(replicas, weight, surge, expected):
    assert rollout.canary_counts(replicas, weight, surge) == expected


def test_steps_show_the_weight_the_replicas_really_give():
    steps = rollout.steps(vision(rollout=ROLLOUT, minReplicas=4, maxReplicas=8))
    assert [(s.weight, s.canary, s.stable, s.effective_weight) for s in steps] == [(10, 1, 4, 20.0), (50, 2, 2, 50.0)]
    assert rollout.extra_replicas(vision(rollout=ROLLOUT, minReplicas=4, maxReplicas=8)) == 1


def test_thresholds_default_queue_from_the_deployment_and_ttft_for_llm():
    limits = rollout.thresholds(vision(rollout=ROLLOUT, queueTimeTarget="20ms"))
    assert (limits.max_queue_ms, limits.max_ttft_ratio, limits.max_error_ratio) == (20.0, None, 0.02)


def test_queries_compare_canary_with_stable_and_wait_for_traffic():
    metrics = {m.name: m for m in rollout.analysis_metrics(vision(rollout=ROLLOUT, queueTimeTarget="20ms"))}
    assert set(metrics) == {"error-ratio", "latency-vs-stable", "queue-ms"}
    latency = metrics["latency-vs-stable"].query
    assert 'tritonfleet_io_track="canary"' in latency and 'tritonfleet_io_track="stable"' in latency
    for metric in metrics.values():
        assert ">= 50)) or on() vector(-1)" in metric.query and "[5m]" in metric.query


@pytest.mark.parametrize(
    ("result", "expected"),
    [([0.001], "passed"), ([0.02], "passed"), ([0.5], "failed"), ([-1.0], "inconclusive"), ([math.nan], "inconclusive"), ([], "inconclusive")],
)
def test_no_traffic_is_inconclusive_never_passed(result, expected):
    metric = rollout.Metric("error-ratio", "q", 0.02)
    assert rollout.verdict(metric, result) == expected
    assert metric.success_condition == "result[0] >= 0 && result[0] <= 0.02"


def test_the_plan_shows_steps_thresholds_and_the_canary_gpus_with_their_cost(tmp_path):
    from tritonfleet.core.rollout import summary
    from tritonfleet.plan.text import rollout_lines

    raw = prod_with(rollout=ROLLOUT, modelVersions={"resnet50": 3}, queueTimeTarget="20ms")
    config = load_stack_config(raw, "prod")
    deployment = next(d for d in config.triton_deployments if d.name == "vision")
    shown = summary(config, deployment)
    assert shown["extraGpus"] == deployment.gpus_per_replica  # the surge replica of a 2-replica floor
    assert shown["minutes"] == 10 and shown["usdPerRollout"] == round(shown["extraUsdPerHour"] / 6, 2)
    text = " ".join(line.text.strip() for line in rollout_lines({"rollouts": [shown]}, 80))
    assert all(len(line.text) <= 80 for line in rollout_lines({"rollouts": [shown]}, 80))
    assert "pins resnet50 v3" in text and "10% (~33.3% at 1:2), 50%, then 100%" in text
    assert "errors <= 0.02, latency <= 1.2x stable, queue <= 20 ms" in text and "inconclusive" in text
    assert f"${shown['extraUsdPerHour']:,.2f}/hour" in text


def test_a_rollout_needs_the_prometheus_that_judges_it():
    raw = prod_with(rollout=ROLLOUT)
    raw["tritonfleet:monitoring"] = json.dumps({**json.loads(raw["tritonfleet:monitoring"]), "enabled": False})
    with pytest.raises(ConfigError) as err:
        load_stack_config(raw, "prod")
    [problem] = [p for p in err.value.problems if p.key == "monitoring.enabled"]
    assert "true with a rollout" in problem.allowed and problem.fix.endswith("monitoring.enabled' true --stack prod")


def test_behind_an_alb_the_weights_are_real_and_the_canary_runs_beside_every_stable_pod():
    from tests.access_helpers import ACM_ARN
    from tritonfleet.core.rollout import summary
    from tritonfleet.plan.text import rollout_lines

    public = {"exposure": "public", "hostname": "vision.example.com", "tls": {"certificateArn": ACM_ARN}, "restrictInference": True}
    config = load_stack_config(prod_with(rollout=ROLLOUT, access=public, minReplicas=4, maxReplicas=8), "prod")
    deployment = next(d for d in config.triton_deployments if d.name == "vision")
    assert rollout.traffic_router("aws", deployment) == "alb" and rollout.traffic_router("gcp", deployment) is None
    shown = summary(config, deployment)
    assert shown["trafficSplit"] == "alb weights"
    # ceil(weight x 4 replicas) canary pods beside all 4 stable ones; the ALB sends them the weight itself
    assert [(s["weight"], s["effectiveWeight"], s["canaryReplicas"], s["stableReplicas"]) for s in shown["steps"]] == [
        (10, 10.0, 1, 4), (50, 50.0, 2, 4),
    ]
    assert shown["extraGpus"] == 2 * deployment.gpus_per_replica
    text = " ".join(line.text.strip() for line in rollout_lines({"rollouts": [shown]}, 80))
    assert "(alb weights): 10%, 50%, then 100%" in text


def test_without_a_router_the_plan_keeps_the_replica_ratio():
    config = load_stack_config(prod_with(rollout=ROLLOUT, minReplicas=4, maxReplicas=8), "prod")
    deployment = next(d for d in config.triton_deployments if d.name == "vision")
    assert deployment.access.mode == "cluster" and rollout.traffic_router("aws", deployment) is None
    shown = rollout.summary(config, deployment)
    assert shown["trafficSplit"] == "replica-ratio" and shown["extraGpus"] == deployment.gpus_per_replica
