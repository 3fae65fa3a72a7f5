"""GPU nodes that live well: what the lifecycle decisions render for the shipped stacks and refuse as bad input
(compute-class order and consolidation, flex-start, host maintenance, the control plane's support fee by date)."""

from __future__ import annotations

from datetime import date

import pytest

from components.k8s.triton import node_affinity_values
from tests.gcp_helpers import decoded, encoded, mixed_l4_stack
from tritonfleet.clouds.aws.support import control_plane
from tritonfleet.clouds.gcp.compute_classes import compute_class_manifest, compute_class_specs, gke_pool_facts
from tritonfleet.clouds.gcp.node_pools import gpu_node_pool_specs
from tritonfleet.core.config import ConfigError, load_stack_config


def test_gke_classes_try_spot_before_on_demand_and_migrate_only_away_from_spot_toward_a_reservation(stack_config):
    specs = {s.head: s for s in compute_class_specs(stack_config("gcp-prod"))}
    assert specs["l4"].node_pools == ["l4-spot", "l4-on-demand"]
    assert specs["l4"].optimize_rule_priority is False  # it would move replicas off the on-demand base onto spot
    assert specs["h200"].node_pools == ["h200-reservation", "h200-spot-spot"]
    assert specs["h200"].optimize_rule_priority is True  # spot back to the reservation when it has room


def test_gke_classes_consolidate_only_gpu_empty_nodes_after_the_longest_model_load(stack_config):
    manifests = {s.head: compute_class_manifest(s) for s in compute_class_specs(stack_config("gcp-prod"))}
    assert manifests["h200"]["spec"]["autoscalingPolicy"] == {"consolidationDelayMinutes": 20, "gpuConsolidationThreshold": 1}
    assert manifests["l4"]["spec"]["autoscalingPolicy"]["consolidationDelayMinutes"] == 10  # at least 10 minutes


def test_a_mixed_gke_pool_keeps_its_on_demand_base_and_caps_spot_at_its_share():
    config = load_stack_config(encoded(mixed_l4_stack(0, 8, 2, 0.5)), "gcp-dev")
    bounds = {s.option: (s.autoscaling.total_min, s.autoscaling.total_max) for s in gpu_node_pool_specs(config, config.gpu_pools[0])}
    assert bounds == {"on-demand": (2, 5), "spot": (0, 3)}


def test_flex_start_is_no_serving_floor_and_lives_seven_days():
    data = decoded("gcp-prod")
    b200 = next(p for p in data["gpuPools"] if p["name"] == "b200")
    b200.update(enabled=True, minNodes=1)
    data["gpuLimit"] = 48
    with pytest.raises(ConfigError) as failure:
        load_stack_config(encoded(data), "gcp-prod")
    message = str(failure.value)
    assert "tritonfleet:gpuPools[3].minNodes = 1" in message and "cannot be a serving floor" in message
    assert "pulumi config set --path 'tritonfleet:gpuPools[3].minNodes' 0" in message
    b200["minNodes"] = 0
    config = load_stack_config(encoded(data), "gcp-prod")
    (spec,) = gpu_node_pool_specs(config, config.pool("b200"))
    assert (spec.flex_start, spec.max_run_duration) == (True, "604800s")
    assert all(s.max_run_duration is None for s in gpu_node_pool_specs(config, config.pool("l4")))


def test_gke_replicas_prefer_nodes_without_a_scheduled_host_maintenance(stack_config):
    config = stack_config("gcp-prod")
    affinity = node_affinity_values(gke_pool_facts(config, config.pool("h200")))
    (term,) = affinity["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["preference"]["matchExpressions"] == [
        {"key": "cloud.google.com/scheduled-maintenance-time", "operator": "DoesNotExist"}
    ]


def test_the_gcp_prod_plan_renders_the_affinity_and_the_extended_spot_window(stock_plan):
    plan = stock_plan("gcp-prod")
    releases = [r for r in plan["resources"] if r["type"] == "kubernetes:helm.sh/v3:Release" and "triton" in r["name"]]
    assert releases and all(r["inputs"]["values"]["nodeAffinity"] for r in releases)
    assert plan["cloudNotes"]["spotShutdown"] == {
        "gkeBuild": "1.35.0-gke.1171000", "windowSeconds": 120, "podSeconds": 105, "extendedFrom": "1.35.0-gke.1171000"
    }
    assert "spotShutdown" in stock_plan("gcp-dev")["cloudNotes"]  # "1.35" alone: 30 s, and the build that extends it
    assert stock_plan("gcp-dev")["cloudNotes"]["spotShutdown"]["podSeconds"] == 15


def test_the_extended_support_fee_counts_from_the_end_of_standard_support():
    prod = control_plane("1.35", "prod", date(2026, 12, 5))
    assert prod["supportType"] == "EXTENDED" and prod["monthlyUsdNow"] == 73.0  # $0.10/h x 730 h
    assert (prod["endOfStandardSupport"], prod["monthlyUsdInExtendedSupport"]) == ("2027-03-27", 438.0)  # $0.60/h in all
    assert prod["newerVersions"] == ["1.36"]
    later = control_plane("1.35", "prod", date(2027, 4, 1))
    assert later["monthlyUsdNow"] == 438.0
    staging = control_plane("1.35", "staging", date(2026, 12, 5))
    assert staging["supportType"] == "STANDARD" and "monthlyUsdInExtendedSupport" not in staging


def test_the_prod_plan_prints_the_fee_with_its_date(stock_plan):
    from tritonfleet.plan.text import cloud_note_lines

    text = " ".join(line.text for line in cloud_note_lines(stock_plan("prod")["cloudNotes"], 200))
    assert "Control plane: $" in text and "from 2027-03-27 (end of standard support) $438.00/month" in text
    assert "Newer: 1.36" in text
