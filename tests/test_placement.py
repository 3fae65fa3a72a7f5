"""The nodes the autoscalers make for the shipped replicas (tritonfleet/core/placement.py), and the plan's floor and
expected figures priced from exactly those nodes: every shipped stack, and the edge cases (1-GPU replicas on 8-GPU
nodes, a replica that fills a node, zones, a compute class's fallback pool, pools shared by deployments)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import STACKS, engine_config
from tritonfleet.core.capacity import fallback_nodes, fill_split
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.conventions import HOURS_PER_MONTH
from tritonfleet.core.cost import pool_prices, pool_usd_per_hour, stack_cost
from tritonfleet.core.placement import (
    HARD,
    SOFT,
    ceiling_placement,
    floor_placement,
    hostname_spread,
    place,
    replica_nodes,
)

# stack -> pool -> (nodes at the floor, nodes at maxReplicas), what the autoscalers make (docs/serving.md).
SHIPPED = {
    "dev": {"l40s": (1, 2)},  # resnet's one replica keeps a spot node up (minNodes 0)
    "staging": {"l40s": (1, 6)},
    "prod": {"h200": (2, 3), "l40s": (2, 8)},  # llm's two replicas on two p5en: zones and the hard node spread
    "gcp-dev": {"l4": (1, 2)},
    "gcp-prod": {"l4": (2, 8), "h200": (1, 1), "h200-spot": (1, 1)},  # llm: the reservation, then one spot node
}


def config_with(stack: str, pools: list[dict] | None = None, deployments: list[dict] | None = None, **cluster):
    raw = engine_config(stack)
    if pools is not None:
        raw["tritonfleet:gpuPools"] = json.dumps(pools)
    if deployments is not None:
        raw["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    if cluster:
        raw["tritonfleet:cluster"] = json.dumps({**json.loads(raw["tritonfleet:cluster"]), **cluster})
    raw["tritonfleet:gpuLimit"] = "200"
    raw["tritonfleet:budget"] = json.dumps({"monthlyUsd": 10_000_000, "basis": "ceiling"})
    return load_stack_config(raw, stack)


def deployment(name: str, pool: str, min_replicas: int, max_replicas: int, **more) -> dict:
    return {"name": name, "pool": pool, "modelPrefix": f"{name}/", "minReplicas": min_replicas,
            "maxReplicas": max_replicas, "throughputPerReplica": 10, **more}


H200_AWS = {"name": "h200", "gpu": "H200", "instanceType": "p5en.48xlarge", "minNodes": 0, "maxNodes": 6,
            "spotShare": 1}


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_places_its_replicas_on_the_nodes_the_plan_counts(stack, stack_config):
    config = stack_config(stack)
    floor, ceiling = floor_placement(config), ceiling_placement(config)
    assert {name: (floor[name].nodes, ceiling[name].nodes) for name in floor} == SHIPPED[stack]
    cost = stack_cost(config)
    for pc in cost.pools:
        pool = config.pool(pc.pool)
        assert (pc.floor_nodes, pc.ceiling_nodes) == SHIPPED[stack][pc.pool]
        prices = pool_prices(pool, config.instance_type(pool), config.region, config.cloud)
        # The floor is a bound: priced with spot unavailable where Karpenter falls back; expected: the spotShare mix.
        floor = pool_usd_per_hour(pool, pc.floor_nodes, prices, fallback_nodes(config.cloud, pool, pc.floor_nodes))
        expected = pool_usd_per_hour(pool, pc.ceiling_nodes, prices, fill_split(config.cloud, pool, pc.ceiling_nodes))
        assert (pc.monthly_floor_usd, pc.monthly_expected_ceiling_usd) == (
            round(floor * HOURS_PER_MONTH, 2), round(expected * HOURS_PER_MONTH, 2)
        )
        assert pc.floor_nodes <= pc.ceiling_nodes <= pool.max_nodes


def test_the_plan_document_carries_the_placement(stock_plan):
    cost = stock_plan("prod")["cost"]
    h200 = next(p for p in cost["pools"] if p["pool"] == "h200")
    assert (h200["floorNodes"], h200["ceilingNodes"]) == (2, 3)
    assert h200["nodes"] == {"on-demand": {"min": 1, "max": 1}, "spot": {"min": 1, "max": 2}}
    assert cost["spotShareEnforced"] is False and stock_plan("gcp-prod")["cost"]["spotShareEnforced"] is True


def test_dev_floor_counts_the_node_min_replicas_keep_up(stock_plan):
    """dev's pool has minNodes 0, but resnet's one replica keeps one spot g6e.xlarge up: the floor is not $0."""
    cost = stock_plan("dev")["cost"]
    assert cost["monthlyFloorUsd"] == round(1.208 * HOURS_PER_MONTH, 2) > 0


def test_one_gpu_replicas_on_eight_gpu_nodes_pack_on_aws(stack_config):
    """Karpenter counts a new node from 0 in a hostname spread: with maxSkew = replicas per node (8) nine 1-GPU
    replicas open two p5en per zone they spread over, not nine."""
    config = config_with("prod", [{**H200_AWS, "zones": ["us-east-1a"]}], [deployment("llm", "h200", 1, 16)])
    (llm,) = config.triton_deployments
    assert hostname_spread(config, llm).values() == {"maxSkew": 8, "whenUnsatisfiable": SOFT, "minDomains": None}
    assert replica_nodes(config, llm, 9) == 2 and replica_nodes(config, llm, 8) == 1


def test_zones_count_on_aws_only(stack_config):
    """Karpenter holds the preferred zone spread as required when it launches nodes; GKE's autoscaler does not."""
    pools = [{**H200_AWS, "zones": ["us-east-1a", "us-east-1b", "us-east-1c"]}]
    aws = config_with("staging", pools, [deployment("llm", "h200", 1, 16)])
    (llm,) = aws.triton_deployments
    assert [replica_nodes(aws, llm, n) for n in (1, 2, 3, 4, 24, 25)] == [1, 2, 3, 3, 3, 4]
    l4 = {"name": "l4", "gpu": "L4", "instanceType": "g2-standard-48", "minNodes": 0, "maxNodes": 4, "spotShare": 1}
    gcp = config_with("gcp-dev", [l4], [deployment("x", "l4", 1, 16)])
    (x,) = gcp.triton_deployments
    assert [replica_nodes(gcp, x, n) for n in (1, 2, 4, 5)] == [1, 1, 1, 2]  # 4 L4s a node, zones not counted


def test_a_replica_that_fills_a_node_gets_a_node_each(stack_config):
    config = config_with("prod", [H200_AWS], [deployment("big", "h200", 2, 5, gpusPerReplica=8)])
    (big,) = config.triton_deployments
    spread = hostname_spread(config, big)
    assert (spread.max_skew, spread.when_unsatisfiable) == (1, SOFT)  # apart already: no hard spread needed
    assert [replica_nodes(config, big, n) for n in (2, 5)] == [2, 5]
    assert (floor_placement(config)["h200"].nodes, ceiling_placement(config)["h200"].nodes) == (2, 5)


def test_gke_node_pools_hold_the_floor_the_plan_counts(stack_config):
    """gcp-prod's llm floor needs a spot H200 node beside the reservation: the spot node pool's minimum is 1."""
    from tritonfleet.clouds.gcp.node_pools import gpu_node_pool_specs

    config = stack_config("gcp-prod")
    mins = {s.name: s.autoscaling.total_min for p in config.enabled_pools for s in gpu_node_pool_specs(config, p)}
    assert mins == {"l4-on-demand": 2, "l4-spot": 0, "h200-reservation": 1, "h200-spot-spot": 1}


def test_a_prod_minimum_never_shares_one_node(stack_config):
    """Prod, minReplicas >= 2, replicas that could share a node: DoNotSchedule with minDomains 2 and maxSkew
    minReplicas-1, so one node alone takes at most all but one replica of the minimum."""
    for minimum, skew in ((2, 1), (3, 2), (8, 7)):
        config = config_with("prod", [{**H200_AWS, "zones": ["us-east-1a"]}], [deployment("llm", "h200", minimum, 24)])
        (llm,) = config.triton_deployments
        assert hostname_spread(config, llm).values() == {"maxSkew": skew, "whenUnsatisfiable": HARD, "minDomains": 2}
        assert floor_placement(config)["h200"].nodes >= 2
    staging = config_with("staging", [{**H200_AWS, "zones": ["us-east-1a"]}], [deployment("llm", "h200", 2, 24)])
    assert hostname_spread(staging, staging.triton_deployments[0]).when_unsatisfiable == SOFT  # prod only


def test_pools_keep_min_nodes_and_cap_at_max_nodes(stack_config):
    pool = {**H200_AWS, "minNodes": 3, "maxNodes": 4}
    config = config_with("prod", [pool], [deployment("llm", "h200", 2, 32)])
    floor, ceiling = floor_placement(config)["h200"], ceiling_placement(config)["h200"]
    assert (floor.replica_nodes, floor.nodes, floor.warm_nodes) == (2, 3, 1)
    assert (ceiling.replica_nodes, ceiling.nodes) == (4, 4)  # 32 replicas fill the 4 nodes (more: a config error)


def test_warm_nodes_stay_beside_a_growing_deployment(stack_config):
    """A preempted placeholder asks for a node again, so the expected figure counts the warm node above the
    replicas' own (up to maxNodes)."""
    pool = {**H200_AWS, "minNodes": 2, "maxNodes": 6, "zones": ["us-east-1a"]}
    config = config_with("staging", [pool], [deployment("llm", "h200", 1, 24)])
    assert (floor_placement(config)["h200"].warm_nodes, ceiling_placement(config)["h200"].nodes) == (1, 4)


def test_deployments_sharing_a_pool_share_its_nodes(stack_config):
    pool = {**H200_AWS, "zones": ["us-east-1a"]}
    config = config_with("staging", [pool], [deployment("a", "h200", 3, 3), deployment("b", "h200", 3, 3,
                                                                                      gpusPerReplica=2)])
    assert place(config, {"a": 3, "b": 3})["h200"].nodes == 2  # 3 + 6 GPUs: two 8-GPU nodes, not one per deployment
    assert place(config, {"a": 3})["h200"].nodes == 1


def test_a_compute_class_fills_its_head_then_its_fallback(stack_config):
    """gcp-prod's llm: the reservation's one node, then the spot pool: the floor's second node is spot."""
    config = stack_config("gcp-prod")
    placed = place(config, {"llm": 2})
    assert (placed["h200"].nodes, placed["h200-spot"].nodes) == (1, 1)
    assert place(config, {"llm": 1})["h200-spot"].nodes == 0


def test_gke_mixed_pools_keep_the_on_demand_base_and_fill_spot_first(stack_config):
    l4 = {"name": "l4", "gpu": "L4", "instanceType": "g2-standard-8", "minNodes": 0, "maxNodes": 8,
          "onDemandBase": 2, "spotShare": 0.5}
    config = config_with("gcp-dev", [l4], [deployment("x", "l4", 1, 8)])
    pool = config.pool("l4")
    assert floor_placement(config)["l4"].nodes == 2  # the base is the on-demand node pool's minimum
    assert [fill_split("gcp", pool, n) for n in (2, 3, 5, 8)] == [
        {"on-demand": 2, "spot": 0}, {"on-demand": 2, "spot": 1}, {"on-demand": 2, "spot": 3},
        {"on-demand": 5, "spot": 3},
    ]
    # On AWS the same pool's mix is the spotShare estimate of what Karpenter gets.
    assert fill_split("aws", pool, 4) == {"on-demand": 3, "spot": 1}


def test_placement_invariants_hold_for_any_pool_and_deployment():
    """Whatever the pool and deployment: never fewer nodes than the GPUs need or the pool keeps, never more than
    maxNodes, the ceiling never below the floor, and a prod minimum of two or more always on two nodes or more."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=60, deadline=None, derandomize=True)
    @hypothesis.given(
        stack=st.sampled_from(["prod", "staging"]),
        gpus=st.sampled_from([1, 2, 4, 8]),
        min_nodes=st.integers(0, 4),
        extra_nodes=st.integers(0, 6),
        base=st.integers(0, 3),
        min_replicas=st.integers(1, 12),
        extra_replicas=st.integers(0, 20),
        zones=st.sampled_from([["us-east-1a"], ["us-east-1a", "us-east-1b"], ["us-east-1a", "us-east-1b", "us-east-1c"]]),
    )
    def check(stack, gpus, min_nodes, extra_nodes, base, min_replicas, extra_replicas, zones):
        max_nodes = max(1, min_nodes + extra_nodes)
        pool = {**H200_AWS, "minNodes": min(min_nodes, max_nodes), "maxNodes": max_nodes,
                "onDemandBase": min(base, max_nodes), "spotShare": 0.5, "zones": zones}
        most = max_nodes * (8 // gpus)  # maxReplicas beyond what maxNodes holds is a config error
        max_replicas = min_replicas + extra_replicas
        max_replicas = most if max_replicas > most >= min_replicas else max_replicas
        llm = deployment("llm", "h200", min_replicas, max_replicas, gpusPerReplica=gpus)
        config = config_with(stack, [pool], [llm])
        floor, ceiling = floor_placement(config)["h200"], ceiling_placement(config)["h200"]
        needed = -(-min_replicas * gpus // 8)
        assert min(max_nodes, max(needed, pool["minNodes"])) <= floor.nodes <= ceiling.nodes <= max_nodes
        if stack == "prod" and min_replicas >= 2 and max_nodes >= 2:
            assert floor.nodes >= 2

    check()
