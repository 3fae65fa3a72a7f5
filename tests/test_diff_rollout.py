"""The PR diff shows a rollout: a deployment's pins or Triton image change between the base and the head plan (a
canary starts when the change merges), or its rollout settings change: what changes, the steps and thresholds it
runs with, and the canary's extra GPUs and their cost, as compared data and as the comment GitHub renders."""

from __future__ import annotations

import copy

from test_diff import base_plan
from test_diff_markdown import outline
from test_rollout import ROLLOUT, prod_with

from tritonfleet.core.config import load_stack_config
from tritonfleet.core.rollout import summary
from tritonfleet.diff import compare_plans, report
from tritonfleet.diff.compare import compare_stack
from tritonfleet.diff.render import to_json


def rollout_entry(**changes) -> dict:
    """prod's vision deployment's `rollouts` entry of the plan, as `tritonfleet plan` writes it."""
    config = load_stack_config(prod_with(**changes), "prod")
    return summary(config, next(d for d in config.triton_deployments if d.name == "vision"))


def plans(base_entry: dict | None, head_entry: dict | None) -> tuple[dict, dict]:
    base, head = base_plan(), copy.deepcopy(base_plan())
    base["rollouts"] = [base_entry] if base_entry else []
    head["rollouts"] = [head_entry] if head_entry else []
    return base, head


def test_a_pin_change_starts_a_rollout_with_its_steps_thresholds_and_canary_cost():
    before = rollout_entry(rollout=ROLLOUT, modelVersions={"resnet50": 3})
    after = rollout_entry(rollout=ROLLOUT, modelVersions={"resnet50": 4}, imageTag="26.08-py3")
    diff = compare_stack(*plans(before, after), "prod")
    assert diff.status == "changed"  # nothing else differs: the rollout alone makes the stack changed
    [r] = diff.rollouts
    assert r.starts and not r.settings_changed
    assert r.pins.before == {"resnet50": 3} and r.pins.after == {"resnet50": 4}
    assert (r.image.before, r.image.after) == ("26.07-py3", "26.08-py3")
    assert to_json([diff])["stacks"][0]["rollouts"][0]["starts"] is True

    doc = outline(report([diff]))
    stack = doc.sections[1]
    items = [text for tag, text in stack.blocks if tag == "li"]
    extra = after["extraGpus"]
    assert f"Rollouts starting: vision (+{extra} GPU, ${after['usdPerRollout']:,.2f} a rollout)" in items
    [item] = [t for t in items if t.startswith("vision starts:")]
    assert "pins resnet50 v3 → resnet50 v4; image 26.07-py3 → 26.08-py3." in item
    assert "10% (~33.3% at 1:2), 50%, then 100%; every 5m (10 min)" in item
    assert "errors <= 0.02, latency <= 1.2x stable" in item and "inconclusive" in item
    assert f"${after['extraUsdPerHour']:,.2f}/hour" in item
    assert ("p", "Rollouts (Argo Rollouts canary, judged against stable)") in stack.blocks


def test_changed_settings_show_each_change_without_starting_a_rollout():
    before = rollout_entry(rollout=ROLLOUT, modelVersions={"resnet50": 3})
    slower = {**ROLLOUT, "steps": [25, 50, 100], "interval": "10m", "analysis": {"maxErrorRatio": 0.01}}
    after = rollout_entry(rollout=slower, modelVersions={"resnet50": 3})
    [r] = compare_stack(*plans(before, after), "prod").rollouts
    assert r.settings_changed and not r.starts
    items = [t for tag, t in outline(report(compare_plans(*({"prod": p} for p in plans(before, after))))).sections[1].blocks
             if tag == "li"]
    [item] = [t for t in items if t.startswith("vision changes:")]
    assert "steps 10% (~33.3% at 1:2), 50% → 25% (~33.3% at 1:2), 50%; interval 5m → 10m; maxErrorRatio 0.02 → 0.01." in item
    assert not any(t.startswith("Rollouts starting") for t in items)


def test_a_rollout_declared_or_removed_is_said_and_an_unchanged_one_is_not_shown():
    entry = rollout_entry(rollout=ROLLOUT, modelVersions={"resnet50": 3})
    [added] = compare_stack(*plans(None, entry), "prod").rollouts
    [removed] = compare_stack(*plans(entry, None), "prod").rollouts
    assert not added.starts and not removed.starts
    for base, head, said in (
        (None, entry, "vision changes: rollout declared, it runs from the next pin or image change. Runs as: canary"),
        (entry, None, "vision: rollout removed: the next pin or image change reaches every replica at once"),
    ):
        items = [t for tag, t in outline(report([compare_stack(*plans(base, head), "prod")])).sections[1].blocks]
        assert any(t.startswith(said) for t in items), [t for t in items if "vision" in t]
    same = compare_stack(*plans(entry, copy.deepcopy(entry)), "prod")
    assert same.rollouts == [] and same.status == "unchanged"



def test_a_real_plan_behind_a_public_alb_rolls_out_by_weight_and_the_diff_says_so(tmp_path):
    """prod's vision moved behind a public ALB: the plan's release values route the canary through the ALB (the
    rendered Rollout passes its CRD schema), its rollout entry gives the declared weights, and the diff shows it."""
    from conftest import copy_project
    from plan_cache import stock_plan
    from test_diff import edited_plan
    from test_rollout_chart import argo_validator

    from tests.access_helpers import ACM_ARN
    from tests.serving_helpers import by_kind, render

    def public_vision(config):
        vision = next(d for d in config["tritonfleet:tritonDeployments"] if d["name"] == "vision")
        vision["access"] = {"exposure": "public", "hostname": "vision.example.com",
                            "tls": {"certificateArn": ACM_ARN}, "restrictInference": True}

    head = edited_plan(copy_project(tmp_path / "tritonfleet"), "prod", public_vision)
    [entry] = [r for r in head["rollouts"] if r["deployment"] == "vision"]
    assert entry["trafficSplit"] == "alb weights"
    assert [s["effectiveWeight"] for s in entry["steps"]] == [10.0, 25.0, 50.0]
    [release] = [r for r in head["resources"]
                 if r["type"] == "kubernetes:helm.sh/v3:Release" and r["inputs"]["name"] == "triton-vision"]
    assert release["inputs"]["values"]["rollout"]["trafficRouting"] == "alb"
    rollout_object = by_kind(render(release["inputs"]["values"], name="triton-vision"))["Rollout"]
    argo_validator("rollout-crd.yaml").validate(rollout_object)
    assert rollout_object["spec"]["strategy"]["canary"]["trafficRouting"]["alb"]["ingress"] == "triton-vision-http"

    diff = compare_stack(stock_plan("prod"), head, "prod")
    [r] = [r for r in diff.rollouts if r.deployment == "vision"]
    assert r.settings_changed and not r.starts
    items = [t for tag, t in outline(report([diff])).sections[1].blocks if tag == "li"]
    assert any(t.startswith(
        "vision changes: steps 10% (~33.3% at 1:2), 25% (~33.3% at 1:2), 50% → 10%, 25%, 50%; trafficSplit "
        "replica-ratio → alb weights. Runs as: canary by argo-rollouts (alb weights)") for t in items), [t for t in items if "vision" in t]
