"""`tritonfleet size`: advice inside the stack's guardrails. Only options that pass its policies and limits are
ranked (on-demand base, GPU limit, allowed instance types, protected tiers, GPU memory), every excluded one says why,
an unmeasured latency is never called within the target, no benchmark stands in for a model unless the user says it
represents it, and the recommendation is planned before it is printed."""

from __future__ import annotations

import pytest
from conftest import ROOT, forked, run_cli

from tritonfleet.core.size_options import Guardrails, Option, rank_options
from tritonfleet.core.sizing import Capacity
from tritonfleet.plan.advice import guardrails, with_settings


@pytest.fixture
def prod(stack_config):
    return stack_config("prod")


def _deployment(config, name):
    return next(d for d in config.triton_deployments if d.name == name)


def _capacity(config, name):
    from tritonfleet.plan.sizing import deployment_capacities

    return deployment_capacities(config, ROOT).get(name)


def test_the_stacks_guardrails_come_from_its_config_and_policy_config(prod):
    rails = guardrails(prod, ROOT, None, None)
    assert rails.gpu_limit == 40 and rails.min_on_demand_nodes == 1
    assert "g6e.xlarge" in rails.allowed_instance_types and "p5.48xlarge" not in rails.allowed_instance_types
    assert rails.policy_file == "policies/config/prod.json"


def test_spot_advice_keeps_the_on_demand_base_and_protected_tiers(prod):
    vision = _deployment(prod, "vision")
    ranking = rank_options(prod, vision, _capacity(prod, "vision"), guardrails(prod, ROOT, None, None))
    assert ranking.ranked and all(o.gpu == "L40S" for o in ranking.ranked)
    for option in ranking.ranked:
        assert option.settings.get("gpuPools[1].onDemandBase", 2) >= 1  # never the "onDemandBase 0" of issue 36
        assert not option.latency_checked  # a stated capacity: the latency target is not checked
    spot = next(o for o in ranking.ranked if o.instance_type == "g6e.xlarge" and o.purchase == "spot")
    assert spot.base == 2 and spot.label == "L40S g6e.xlarge spot over an on-demand base of 2"
    reserved = next(o for o in ranking.excluded if o.instance_type == "g6e.xlarge" and o.purchase == "reservation")
    assert reserved.excluded == ("drops the pool's base and burst tiers (protected node pools)",)
    l4 = next(o for o in ranking.excluded if o.instance_type == "g6.xlarge" and o.purchase == "on-demand")
    assert l4.excluded == ("no capacity figure for this model on L4", "24 GB GPU memory per replica, under the 48 GB it has now")
    assert any("pass --benchmark-model (resnet50) only if that benchmark represents the model" in n for n in ranking.notes)


def test_an_llm_is_not_sized_from_resnet_ratios_and_the_gpu_limit_holds(prod):
    llm = _deployment(prod, "llm")
    capacity = _capacity(prod, "llm")
    default = rank_options(prod, llm, capacity, guardrails(prod, ROOT, None, None))
    assert {o.gpu for o in default.ranked} == {"H200"}  # no figure for the model elsewhere, and less memory
    vouched = rank_options(prod, llm, capacity, guardrails(prod, ROOT, 30, "resnet50"))
    # prod's llm replica is 2 GPUs (Llama 3.3 70B FP8): only nodes with 2 or more L40S are options, and the model's
    # 83 GB per GPU fits no L40S (48 GB) whatever a benchmark ratio says (tritonfleet/core/llm.py).
    l40s = next(o for o in vouched.options if o.instance_type == "g6e.12xlarge" and o.purchase == "on-demand")
    assert l40s.capacity_kind.startswith("estimate") and l40s.replicas == 19
    assert "the model needs 83.0 GB per GPU at gpusPerReplica 2, over L40S's 48 GB" in l40s.excluded
    assert "48 GPUs with the other pools, over the GPU limit of 40" in l40s.excluded
    too_big = rank_options(prod, llm, capacity, guardrails(prod, ROOT, 400, None))  # 2 B200 per replica hold 360 GB
    assert not too_big.ranked and all("under the model's 400 GiB" in " ".join(o.excluded) for o in too_big.options)


def test_a_measured_p99_over_the_target_is_excluded_and_within_it_is_checked(prod):
    vision = _deployment(prod, "vision")  # latency target 50ms
    slow = rank_options(prod, vision, Capacity(2500, "measured", "loadtest", p99_ms=80), Guardrails())
    assert not slow.ranked and any("measured p99 80 ms, over the latency target 50ms" in o.excluded for o in slow.options)
    fast = rank_options(prod, vision, Capacity(2500, "measured", "loadtest", p99_ms=20), Guardrails())
    assert fast.winner is not None and fast.winner.latency_checked


def test_instance_types_outside_the_policy_are_excluded(prod):
    vision = _deployment(prod, "vision")
    ranking = rank_options(prod, vision, _capacity(prod, "vision"), Guardrails(allowed_instance_types=("g6e.xlarge",)))
    assert {o.instance_type for o in ranking.ranked} == {"g6e.xlarge"}
    other = next(o for o in ranking.excluded if o.instance_type == "g6e.2xlarge")
    assert "g6e.2xlarge is not an allowed instance type (the policy config)" in other.excluded


def test_settings_apply_to_the_merged_config():
    raw = {"tritonfleet:gpuPools": '[{"name": "a", "maxNodes": 2}]', "tritonfleet:gpuLimit": "8"}
    edited = with_settings(raw, {"gpuPools[0].maxNodes": 4, "gpuLimit": 16})
    assert edited == {"tritonfleet:gpuPools": '[{"name": "a", "maxNodes": 4}]', "tritonfleet:gpuLimit": "16"}


def test_planning_catches_advice_that_breaks_a_policy_or_deletes_a_protected_pool(stock_plan):
    """The advice of issue 36 (onDemandBase 0, spotShare 1 on prod's L40S pool), planned: both reasons come back."""
    option = Option(
        "L40S", "g6e.xlarge", "spot", 2500, "stated", 5, 5, 0, 7.0, 0.2, False,
        {"gpuPools[1].onDemandBase": 0, "gpuPools[1].minNodes": 0, "gpuPools[1].spotShare": 1},
    )
    reasons = forked("tritonfleet.plan.advice:plan_reasons", ROOT, "prod", stock_plan("prod"), option)
    assert any(r.startswith("planned, spot-serving-pool-require-on-demand-base fails") for r in reasons)
    assert "planned, it would delete the protected node pool tf-aws-gpu-l40s-base" in reasons


def test_size_prints_the_planned_recommendation_as_yaml_and_commands_within_80_columns():
    result = run_cli("size", "--stack", "prod", "--deployment", "vision", env={"COLUMNS": "80"}, timeout=300)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "within the target" not in text and "latency not checked" in text
    assert "Recommended (planned: no policy violation, no protected resource deleted): L40S" in text
    assert "Edit stacks/Pulumi.prod.yaml:\n  tritonfleet:gpuPools[1].instanceType: \"g6e.2xlarge\"" in text
    assert "pulumi config set --path 'tritonfleet:gpuPools[1].instanceType' g6e.2xlarge \\\n      --stack prod" in text
    assert "Excluded (each reason given):" in text and "drops the pool's base and burst tiers" in text
    assert max(len(line) for line in text.splitlines()) <= 80
