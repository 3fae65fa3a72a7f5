"""The GPU pools as Karpenter objects, tested as data: every rendered NodePool / EC2NodeClass validates against the
pinned CRD schema (tests/upstream/karpenter-1.14.1), and the capacity semantics hold on the rendered objects:
reserved first, the on-demand base next, the burst preferring spot and falling back to on-demand."""

from __future__ import annotations

import json
from functools import cache

import jsonschema
import pytest
import yaml

from components.k8s.triton import ON_DEMAND_SHUTDOWN_SECONDS
from policies._pools import gpu_pool
from tests.conftest import ROOT, engine_config
from tritonfleet.clouds.aws.node_pools import (
    FLOOR_ANNOTATION,
    MIN_TERMINATION_GRACE_SECONDS,
    NODE_CLASS_API,
    NODE_POOL_API,
    PLACEHOLDER_PRIORITY,
    ami_alias,
    burst_instance_types,
    ephemeral_storage_gi,
    node_class_spec,
    node_pool_specs,
    node_storage_gi,
    nvme_room_gi,
    placeholder_deployment,
    placeholder_priority_class,
)
from tritonfleet.clouds.aws.resources import KARPENTER_NODE_POOL
from tritonfleet.core.capacity import split_capacity
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import load_stack_config

CRDS = ROOT / "tests" / "upstream" / "karpenter-1.14.1" / "crds"
AWS_STACKS = ["dev", "staging", "prod"]


@cache
def crd_schema(file: str) -> dict:
    crd = yaml.safe_load((CRDS / file).read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return version["schema"]["openAPIV3Schema"]


def validate(kind: str, name: str, spec: dict) -> None:
    """jsonschema over the CRD's openAPIV3Schema (the API server also runs CEL rules, which this does not)."""
    if kind == "NodePool":
        doc, schema = {"apiVersion": NODE_POOL_API, "kind": kind}, crd_schema("karpenter.sh_nodepools.yaml")
    else:
        doc, schema = {"apiVersion": NODE_CLASS_API, "kind": kind}, crd_schema("karpenter.k8s.aws_ec2nodeclasses.yaml")
    jsonschema.validate({**doc, "metadata": {"name": name}, "spec": spec}, schema)


def aws_config(pool: dict, deployments: list | None = None, **cluster):
    raw = engine_config("dev")
    raw["tritonfleet:gpuPools"] = json.dumps([pool])
    raw["tritonfleet:cluster"] = json.dumps({"zones": ["us-east-1a", "us-east-1b", "us-east-1c"], **cluster})
    raw["tritonfleet:tritonDeployments"] = json.dumps(deployments or [])
    return load_stack_config(raw, "test")


def enabled_b200(stack: str = "prod"):
    raw = engine_config(stack)
    pools = json.loads(raw["tritonfleet:gpuPools"])
    for pool in pools:
        pool["enabled"] = True
    raw["tritonfleet:gpuPools"] = json.dumps(pools)
    raw["tritonfleet:gpuLimit"] = "64"
    return load_stack_config(raw, stack)


def by_tier(config, pool):
    return {spec.tier: spec for spec in node_pool_specs(config, pool)}


def capacity_types(spec) -> list[str]:
    (req,) = [r for r in spec.spec["template"]["spec"]["requirements"] if r["key"] == "karpenter.sh/capacity-type"]
    return req["values"]


def rendered_configs():
    configs = [load_stack_config(engine_config(stack), stack) for stack in AWS_STACKS] + [enabled_b200()]
    configs.append(aws_config({"name": "odcr", "gpu": "H100", "capacity": "reservation", "reservationId": "cr-0abc123",
                               "minNodes": 1, "maxNodes": 2}))
    return configs


def test_every_rendered_node_pool_and_node_class_validates_against_the_pinned_crds():
    count = 0
    for config in rendered_configs():
        for pool in config.enabled_pools:
            validate("EC2NodeClass", pool.name, {**node_class_spec(config, pool, config.cluster_name), "role": "tf-node"})
            for spec in node_pool_specs(config, pool):
                validate("NodePool", spec.name, spec.spec)
                count += 1
    assert count >= 8


def test_a_wrong_object_fails_the_schema_check():
    config = rendered_configs()[2]
    spec = node_pool_specs(config, config.enabled_pools[0])[0]
    bad = json.loads(json.dumps(spec.spec))
    bad["disruption"]["consolidationPolicy"] = "WhenIdle"
    with pytest.raises(jsonschema.ValidationError):
        validate("NodePool", spec.name, bad)


@pytest.mark.parametrize(
    ("mix", "tiers"),
    [
        pytest.param({"maxNodes": 4, "spotShare": 1}, {"burst": (4, ["spot", "on-demand"])}, id="all-burst-falls-back"),
        pytest.param({"maxNodes": 4, "spotShare": 0}, {"burst": (4, ["on-demand"])}, id="on-demand-only"),
        pytest.param(
            {"minNodes": 2, "maxNodes": 8, "onDemandBase": 2, "spotShare": 0.5},
            {"base": (2, ["on-demand"]), "burst": (6, ["spot", "on-demand"])},
            id="base-then-burst",
        ),
        pytest.param(
            {"maxNodes": 3, "spotShare": 1, "onDemandFallback": False}, {"burst": (3, ["spot"])}, id="spot-only"
        ),
    ],
)
def test_node_pool_limits_add_up_to_max_nodes_and_burst_falls_back(mix, tiers):
    config = aws_config({"name": "l40s", "gpu": "L40S", "instanceType": "g6e.xlarge", **mix})
    pool = config.gpu_pools[0]
    specs = by_tier(config, pool)
    assert {t: (s.nodes, capacity_types(s)) for t, s in specs.items()} == tiers
    assert sum(int(s.spec["limits"]["nvidia.com/gpu"]) for s in specs.values()) == pool.max_nodes  # 1 GPU per node
    for spec in specs.values():
        template = spec.spec["template"]
        assert template["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
        assert template["metadata"]["labels"]["tritonfleet.io/pool"] == "l40s"
        assert template["metadata"]["labels"]["tritonfleet.io/gpu"] == "L40S"
        assert template["spec"]["nodeClassRef"]["name"] == "l40s"
        # The policies read the same object back: one tier, counted once.
        read = gpu_pool(KARPENTER_NODE_POOL, {"spec": spec.spec}, "urn", spec.name)
        assert (read.pool, read.max_nodes, read.max_gpus) == ("l40s", spec.nodes, spec.nodes)
        assert read.on_demand_fallback == (capacity_types(spec) == ["spot", "on-demand"])


def test_base_first_then_burst_by_weight(stack_config):
    config = stack_config("prod")
    h200 = config.pool("h200")
    specs = by_tier(config, h200)
    base, burst = specs["base"], specs["burst"]
    assert base.spec["weight"] > burst.spec["weight"]
    assert capacity_types(base) == ["on-demand"] and base.nodes == h200.on_demand_base
    assert base.spec["limits"] == {"nvidia.com/gpu": "8", "cpu": "192"}
    # Spot preferred, on-demand allowed: when spot H200 is unavailable the pool still grows to maxNodes.
    assert capacity_types(burst) == ["spot", "on-demand"] and burst.nodes == 2
    assert [s.tier for s in node_pool_specs(config, h200)] == ["base", "burst"]  # highest weight first


def test_reserved_first_with_the_reservation_on_the_node_class():
    config = enabled_b200()
    b200 = config.pool("b200")
    (reserved,) = node_pool_specs(config, b200)
    assert reserved.tier == "reserved" and capacity_types(reserved) == ["reserved"]
    assert reserved.spec["weight"] == max(s.spec["weight"] for p in config.enabled_pools for s in node_pool_specs(config, p))
    assert reserved.spec["template"]["metadata"]["labels"]["tritonfleet.io/capacity"] == "capacity-block"
    spec = node_class_spec(config, b200, config.cluster_name)
    assert spec["capacityReservationSelectorTerms"] == [{"id": "cr-0b200example0000"}]
    zones = [r for r in reserved.spec["template"]["spec"]["requirements"] if r["key"] == "topology.kubernetes.io/zone"]
    assert zones[0]["values"] == ["us-east-1c"]  # the capacity block's zone
    # An On-Demand Capacity Reservation pool: the same reserved tier, priced at the on-demand rate.
    odcr = aws_config({"name": "odcr", "gpu": "H100", "capacity": "reservation", "reservationId": "cr-0abc123", "maxNodes": 2})
    (tier,) = node_pool_specs(odcr, odcr.gpu_pools[0])
    assert capacity_types(tier) == ["reserved"]
    read = gpu_pool(KARPENTER_NODE_POOL, {"spec": tier.spec}, "urn", tier.name)
    assert read.purchase == "reservation" and read.guaranteed
    assert read.monthly_usd("ceiling") == pytest.approx(2 * 55.04 * 730)


def test_node_class_ami_imds_storage_and_discovery(stack_config):
    config = stack_config("prod")
    spec = node_class_spec(config, config.pool("h200"), config.cluster_name)
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260903"}]  # from the pinned 1.35.7-20260903 release
    assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert spec["metadataOptions"]["httpTokens"] == "required"
    assert spec["instanceStorePolicy"] == "RAID0"
    discovery = [{"tags": {"karpenter.sh/discovery": config.cluster_name}}]
    assert spec["subnetSelectorTerms"] == discovery and spec["securityGroupSelectorTerms"] == discovery
    assert {"team", "cost-center"} <= set(spec["tags"]) and spec["tags"]["tritonfleet.io/pool"] == "h200"
    assert "capacityReservationSelectorTerms" not in spec


def test_bottlerocket_alias_comes_from_its_release():
    config = aws_config(
        {"name": "l40s", "gpu": "L40S", "maxNodes": 1, "spotShare": 1},
        gpuNodeImage="bottlerocket",
        amiReleaseVersion="1.42.0-a1b2c3d4",
    )
    assert ami_alias(config) == "bottlerocket@v1.42.0"
    spec = node_class_spec(config, config.gpu_pools[0], config.cluster_name)
    assert spec["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"  # Bottlerocket's data volume


def test_disruption_never_consolidates_busy_gpu_nodes_and_outlasts_tritons_grace(stack_config):
    """No forceful expiry (drift replaces nodes, within budgets); the grace period outlasts a PDB-paced drain of a
    full node: prod's p5en holds 4 two-GPU llm replicas, PDB 1, 1200 s loads + 120 s stops = 5,280 s; consolidation waits
    for the pool's longest model load."""
    config = stack_config("prod")
    seconds = {"h200": (5280, 1200), "l40s": (MIN_TERMINATION_GRACE_SECONDS, 600)}
    for pool in config.enabled_pools:
        longest_load = max(d.model_load_seconds for d in config.triton_deployments if d.pool == pool.name)
        for spec in node_pool_specs(config, pool):
            disruption = spec.spec["disruption"]
            assert disruption["consolidationPolicy"] == "WhenEmpty"
            assert {"nodes": "1", "reasons": ["Drifted"]} in disruption["budgets"]
            template = spec.spec["template"]["spec"]
            assert template["expireAfter"] == "Never"
            grace, after = seconds[pool.name]
            assert (template["terminationGracePeriod"], disruption["consolidateAfter"]) == (f"{grace}s", f"{after}s")
            assert grace >= ON_DEMAND_SHUTDOWN_SECONDS + longest_load


def test_the_grace_period_grows_with_replicas_per_node_and_shrinks_with_a_wider_pdb():
    pool = {"name": "h200", "gpu": "H200", "instanceType": "p5en.48xlarge", "maxNodes": 2, "spotShare": 1}
    llm = {"name": "llm", "pool": "h200", "modelPrefix": "llm/", "minReplicas": 2, "maxReplicas": 16,
           "modelLoadSeconds": 1800, "throughputPerReplica": 20}
    config = aws_config(pool, [llm])
    (burst,) = node_pool_specs(config, config.gpu_pools[0])
    assert burst.spec["template"]["spec"]["terminationGracePeriod"] == f"{8 * (1800 + 120)}s"
    wide = aws_config(pool, [{**llm, "minReplicas": 5, "maxUnavailable": 4}])
    (burst,) = node_pool_specs(wide, wide.gpu_pools[0])
    assert burst.spec["template"]["spec"]["terminationGracePeriod"] == f"{2 * (1800 + 120)}s"
    whole = aws_config(pool, [{**llm, "gpusPerReplica": 8, "maxReplicas": 2, "modelLoadSeconds": 600}])
    (burst,) = node_pool_specs(whole, whole.gpu_pools[0])
    assert burst.spec["template"]["spec"]["terminationGracePeriod"] == f"{MIN_TERMINATION_GRACE_SECONDS}s"


def test_spot_diversity_keeps_gpu_and_count_and_never_costs_more_than_on_demand():
    config = aws_config({"name": "l40s", "gpu": "L40S", "instanceType": "g6e.xlarge", "maxNodes": 2, "spotShare": 1})
    types = burst_instance_types(config, config.gpu_pools[0])
    assert types[0] == "g6e.xlarge" and len(types) >= 2
    catalog = load_catalog()
    base = catalog.find("aws", "g6e.xlarge")
    for name in types:
        itype = catalog.find("aws", name)
        assert (itype.gpu, itype.gpu_count) == ("L40S", 1)
        assert itype.vcpu >= base.vcpu and itype.memory_gib >= base.memory_gib
        assert itype.price("spot").usd <= base.price("on-demand").usd <= itype.price("on-demand").usd
    assert "g6e.8xlarge" not in types  # its spot price is above g6e.xlarge on-demand
    (burst,) = node_pool_specs(config, config.gpu_pools[0])
    (req,) = [r for r in burst.spec["template"]["spec"]["requirements"] if r["key"] == "node.kubernetes.io/instance-type"]
    assert req["values"] == types
    assert burst.spec["limits"]["cpu"] == str(2 * max(catalog.find("aws", t).vcpu for t in types))


def test_spot_diversity_with_one_candidate_is_the_pool_type():
    config = aws_config({"name": "h200", "gpu": "H200", "instanceType": "p5en.48xlarge", "maxNodes": 2, "spotShare": 1})
    assert burst_instance_types(config, config.gpu_pools[0]) == ["p5en.48xlarge"]


def test_warm_capacity_placeholders_fill_only_the_gap_to_min_nodes(stack_config):
    """Prod's minimum replicas keep as many nodes as minNodes asks for (llm: 2 p5en, vision: 2 g6e): no placeholder
    opens a node beside them. minNodes 3 on h200 leaves one node to keep warm: one whole-node placeholder."""
    config = stack_config("prod")
    assert all(placeholder_deployment(config, pool) is None for pool in config.enabled_pools)
    raw = engine_config("prod")
    pools = json.loads(raw["tritonfleet:gpuPools"])
    pools[0]["minNodes"] = 3
    raw["tritonfleet:gpuPools"] = json.dumps(pools)
    config = load_stack_config(raw, "prod")
    h200 = config.pool("h200")
    deployment = placeholder_deployment(config, h200)
    assert deployment["spec"]["replicas"] == 1
    assert deployment["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}  # `up` never waits for GPU boots
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "8"  # a whole p5en node
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]
    assert pod["nodeSelector"] == {"tritonfleet.io/pool": "h200"}
    priority = placeholder_priority_class()
    assert pod["priorityClassName"] == priority["metadata"]["name"]
    assert priority["value"] == PLACEHOLDER_PRIORITY < 0 and priority["preemption_policy"] == "Never"
    assert [spec.floor_nodes for spec in node_pool_specs(config, h200)] == [1, 2]  # base first, then the burst
    dev = stack_config("dev")
    assert placeholder_deployment(dev, dev.enabled_pools[0]) is None  # minNodes 0: nothing kept warm


def test_node_pools_carry_the_floor_the_policy_pack_counts(stack_config):
    """Each NodePool says how many of its nodes the floor keeps up (Karpenter has no minimum); the pack's pool
    reader takes them as the NodePools' minimum, in weight order."""
    from policies._pools import gpu_pools

    class Resource:
        def __init__(self, kind, props, name):
            self.resource_type, self.props, self.name, self.urn = kind, props, name, f"urn:{name}"

    config = stack_config("prod")
    resources = [
        Resource(KARPENTER_NODE_POOL, {"metadata": spec.metadata(), "spec": spec.spec}, spec.name)
        for pool in config.enabled_pools
        for spec in node_pool_specs(config, pool)
    ]
    assert {r.name: r.props["metadata"]["annotations"][FLOOR_ANNOTATION] for r in resources} == {
        "h200-base": "1", "h200-burst": "1", "l40s-base": "2", "l40s-burst": "0"
    }
    assert {p.name: p.min_nodes for p in gpu_pools(resources)} == {
        "h200-base": 1, "h200-burst": 1, "l40s-base": 2, "l40s-burst": 0
    }


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_tritons_model_copies_fit_the_nvme_raid(stack, stack_config):
    config = stack_config(stack)
    for pool in config.enabled_pools:
        needed, available = ephemeral_storage_gi(config, pool)
        assert needed <= available, (pool.name, needed, available)


def test_the_nvme_arithmetic():
    """A node full of one deployment's replicas against the smallest array (the config rule refuses more)."""
    assert node_storage_gi(1, 250, 1) == 30 + 252  # images + (repositoryGi + 2)
    assert node_storage_gi(8, 100, 2) == 30 + 4 * 102
    assert nvme_room_gi(["g6e.xlarge", "g6e.2xlarge"]) == 209.5  # 250 GB = 232.8 GiB, less 10 %
    assert nvme_room_gi(["p5en.48xlarge"]) == round(30400e9 / 2**30 * 0.9, 1)


def test_limits_match_the_cost_model(stack_config):
    for stack in AWS_STACKS:
        config = stack_config(stack)
        for pool in config.enabled_pools:
            total = sum(s.nodes for s in node_pool_specs(config, pool))
            assert total == pool.max_nodes == sum(r.max for r in split_capacity(pool).purchase.values())


def test_prods_plan_shows_base_burst_and_fallback_per_pool(stock_plan):
    from tritonfleet.plan.text import cost_lines, pool_lines

    plan = stock_plan("prod")
    h200 = next(p for p in plan["cost"]["pools"] if p["pool"] == "h200")
    assert h200["fallsBackToOnDemand"] is True
    assert [(t["tier"], t["nodes"], t["purchase"]) for t in h200["capacity"]] == [
        ("base", 1, ["on-demand"]),
        ("burst", 2, ["spot", "on-demand"]),
    ]
    assert h200["monthlyCeilingUsd"] == round(3 * 63.296 * 730, 2) > h200["monthlyExpectedCeilingUsd"]
    text = " ".join(line.text for line in pool_lines(plan["cost"], 200) + cost_lines(plan["cost"], 200))
    assert "h200 at max: base 1 on-demand $46,206.08; burst 2 spot first $39,712.00 expected, fallback 2 on-demand $92,412.16" in text
    assert "ceiling (maxNodes, spot unavailable)" in text and "expected (maxReplicas, spotShare estimate)" in text
    assert "spotShare is an estimate: Karpenter takes spot whenever EC2 has it" in text
    assert plan["cost"]["spotShareEnforced"] is False


def aws_config_in(region: str, pool: dict):
    raw = engine_config("dev")
    raw["tritonfleet:region"] = region
    raw["tritonfleet:gpuPools"] = json.dumps([pool])
    raw["tritonfleet:cluster"] = json.dumps({"zones": [f"{region}a", f"{region}b", f"{region}c"]})
    raw["tritonfleet:tritonDeployments"] = "[]"
    return load_stack_config(raw, "test")


def test_spot_diversity_uses_the_regions_prices_or_admits_no_type():
    """eu-central-1's g6e.xlarge is priced there (on-demand $2.327) but its bigger siblings are not: no sibling is
    admitted on us-east-1's figures, whose ceiling ($1.861) is not eu-central-1's. In eu-west-1 nothing is priced."""
    pool = {"name": "l40s", "gpu": "L40S", "instanceType": "g6e.xlarge", "maxNodes": 2, "spotShare": 1}
    assert len(burst_instance_types(aws_config(pool), aws_config(pool).gpu_pools[0])) >= 2
    for region in ("eu-central-1", "eu-west-1"):
        config = aws_config_in(region, pool)
        assert burst_instance_types(config, config.gpu_pools[0]) == ["g6e.xlarge"], region
        (burst,) = node_pool_specs(config, config.gpu_pools[0])
        (req,) = [r for r in burst.spec["template"]["spec"]["requirements"] if r["key"] == "node.kubernetes.io/instance-type"]
        assert req["values"] == ["g6e.xlarge"]


def test_spot_diversity_admits_a_type_priced_in_the_region(monkeypatch):
    """A sibling priced in eu-central-1 within that region's ceiling is admitted there (and only there)."""
    from tritonfleet.core import catalog as catalog_module

    pool = {"name": "l40s", "gpu": "L40S", "instanceType": "g6e.xlarge", "maxNodes": 2, "spotShare": 1}
    config = aws_config_in("eu-central-1", pool)
    real = catalog_module.load_catalog()
    sibling = real.find("aws", "g6e.2xlarge")
    regional = (
        catalog_module.RegionalPrice(option="on-demand", usd=2.9, source=sibling.prices["on-demand"].source, regions=("eu-central-1",)),
        catalog_module.RegionalPrice(option="spot", usd=1.1, source=sibling.prices["spot"].source, regions=("eu-central-1",)),
    )
    priced = sibling.model_copy(update={"regional_prices": regional})
    patched = real.model_copy(update={"instance_types": [priced if t is sibling else t for t in real.instance_types]})
    monkeypatch.setattr("tritonfleet.clouds.aws.node_pools.load_catalog", lambda: patched)
    assert burst_instance_types(config, config.gpu_pools[0]) == ["g6e.xlarge", "g6e.2xlarge"]
