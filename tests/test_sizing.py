"""Sizing: replicas from a target load, bin-packing onto whole nodes, idle GPUs and $ per 1M at the real utilisation."""

from __future__ import annotations

import pytest

from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import GpuPool
from tritonfleet.core.cost import cost_per_million, pool_prices
from tritonfleet.core.packing import NodeShape, ReplicaShape, pack, replica_shape, replicas_per_node
from tritonfleet.core.sizing import Capacity, Demand, pool_at_load, replicas_needed, size_stack

P5EN = load_catalog().find("aws", "p5en.48xlarge")
G6E = load_catalog().find("aws", "g6e.xlarge")
G6E_12 = load_catalog().find("aws", "g6e.12xlarge")


@pytest.mark.parametrize(
    "load,capacity,headroom,expected",
    [
        (0, 100, 0.25, 0),
        (75, 100, 0.25, 1),  # exactly 75 % of one replica
        (76, 100, 0.25, 2),
        (300, 100, 0.0, 3),
        (300, 100, 0.5, 6),
        (1000, 2500, 0.25, 1),
        (400, 180, 0.25, 3),
    ],
)
def test_replicas_needed(load, capacity, headroom, expected):
    assert replicas_needed(load, capacity, headroom) == expected


@pytest.mark.parametrize("capacity,headroom", [(0, 0.25), (-5, 0.25), (100, 1.0), (100, -0.1)])
def test_replicas_needed_refuses_bad_input(capacity, headroom):
    with pytest.raises(ValueError):
        replicas_needed(100, capacity, headroom)


@pytest.mark.parametrize(
    "node,replica,expected",
    [
        (NodeShape(8, 144, 1536), ReplicaShape(1, 18, 192), 8),
        (NodeShape(8, 144, 1536), ReplicaShape(2, 36, 384), 4),
        (NodeShape(8, 144, 1536), ReplicaShape(3), 2),
        (NodeShape(1, 3, 24), ReplicaShape(1, 3, 24), 1),
        (NodeShape(8, 144, 1536), ReplicaShape(1, 100, 10), 1),  # CPU binds before GPUs
        (NodeShape(4, 36, 288), ReplicaShape(8), 0),  # an 8-GPU replica fits no 4-GPU node
    ],
)
def test_replicas_per_node(node, replica, expected):
    assert replicas_per_node(node, replica) == expected


@pytest.mark.parametrize(
    "demands,min_nodes,nodes,used,idle",
    [
        ([("a", ReplicaShape(1), 2)], 0, 1, 2, 6),  # 2 x 1-GPU replicas pay a whole 8-GPU node
        ([("a", ReplicaShape(1), 8)], 0, 1, 8, 0),
        ([("a", ReplicaShape(1), 9)], 0, 2, 9, 7),
        ([("a", ReplicaShape(3), 3)], 0, 2, 9, 7),  # 2 per node: 3+3 on one, 3 on the next
        ([("a", ReplicaShape(4), 1), ("b", ReplicaShape(2), 2)], 0, 1, 8, 0),
        ([("a", ReplicaShape(1), 0)], 2, 2, 0, 16),  # minNodes are paid even when empty
    ],
)
def test_pack_on_8_gpu_nodes(demands, min_nodes, nodes, used, idle):
    packing = pack(NodeShape(8, 144, 1536), demands, min_nodes)
    assert (packing.nodes, packing.gpus_used, packing.idle_gpus) == (nodes, used, idle)
    assert packing.gpus_paid == nodes * 8


def test_a_replica_that_fits_no_node_is_reported_not_placed():
    packing = pack(NodeShape(4, 36, 288), [("big", ReplicaShape(8), 2), ("ok", ReplicaShape(1), 1)])
    assert packing.unplaceable == ("big",) and packing.nodes == 1 and packing.gpus_used == 1


def _first_fit_one_at_a_time(node: NodeShape, demands, min_nodes: int = 0) -> tuple[int, int, tuple[str, ...]]:
    """The definition pack() must keep: each replica, largest first, on the first node with room, else a new node."""
    nodes: list[list[float]] = []
    used, unplaceable = 0, []
    for name, shape, count in sorted(demands, key=lambda d: (d[1].gpus, d[1].cpu, d[1].memory_gib), reverse=True):
        if count and replicas_per_node(node, shape) == 0:
            unplaceable.append(name)
            continue
        for _ in range(count):
            fits = (n for n in nodes if n[0] >= shape.gpus and n[1] + 1e-9 >= shape.cpu and n[2] + 1e-9 >= shape.memory_gib)
            slot = next(fits, None)
            if slot is None:
                slot = [node.gpus, node.vcpu, node.memory_gib]
                nodes.append(slot)
            slot[0], slot[1], slot[2] = slot[0] - shape.gpus, slot[1] - shape.cpu, slot[2] - shape.memory_gib
            used += shape.gpus
    return max(len(nodes), min_nodes), used, tuple(unplaceable)


def test_pack_places_replicas_as_first_fit_one_at_a_time_does():
    import random

    draw = random.Random(20261204)
    for _ in range(400):
        node = NodeShape(draw.choice([1, 2, 4, 8]), draw.choice([8.0, 36.0, 144.0]), draw.choice([32.0, 288.0, 1536.0]))
        demands = [
            (f"d{i}", ReplicaShape(draw.choice([1, 1, 2, 3, 4, 8]), draw.choice([0.0, 2.0, 7.5, 30.0]), draw.choice([0.0, 16.0, 100.0])), draw.randint(0, 40))
            for i in range(draw.randint(1, 5))
        ]
        min_nodes = draw.randint(0, 3)
        packing = pack(node, demands, min_nodes)
        assert (packing.nodes, packing.gpus_used, packing.unplaceable) == _first_fit_one_at_a_time(node, demands, min_nodes), (node, demands)


def test_a_huge_target_load_is_packed_at_once():
    """A peak of millions of inferences/s (or a typo) once placed replica by replica, scanning every node each time:
    the plan hung. Nodes with the same room left are one group now."""
    packing = pack(NodeShape(8, 144, 1536), [("llm", ReplicaShape(1, 17.0), 10**12 + 3), ("big", ReplicaShape(4), 5)])
    assert packing.gpus_used == 10**12 + 3 + 20
    # 5 x 4 GPUs take 3 nodes, the third with 4 GPUs left for 4 of the 1-GPU replicas; the rest go 8 a node (8 x 17
    # vCPU fit in 144), the last node part full.
    assert packing.nodes == 3 + -(-(10**12 + 3 - 4) // 8)


def _pool(**kw) -> GpuPool:
    return GpuPool.model_validate({"name": "p", "gpu": "H200", "maxNodes": 3, **kw})


def test_two_1gpu_replicas_on_p5en_cost_the_whole_node():
    """The issue's case: the replicas' share (2/8) understates the bill four times; the whole node is paid."""
    pool = _pool(minNodes=1, onDemandBase=1)
    prices = pool_prices(pool, P5EN, "us-east-1")
    at_load = pool_at_load(pool, P5EN, prices, [Demand("llm", replica_shape(P5EN, 1), 2, 1000.0)])
    assert (at_load.nodes, at_load.gpus_paid, at_load.idle_gpus) == (1, 8, 6)
    assert at_load.usd_per_hour == pytest.approx(63.296)
    share = 63.296 * 2 / 8
    assert at_load.usd_per_million == pytest.approx(cost_per_million(63.296, 1000.0))
    assert at_load.usd_per_million == pytest.approx(4 * cost_per_million(share, 1000.0))
    assert at_load.deployment_usd_per_hour == {"llm": pytest.approx(63.296)}


@pytest.mark.parametrize(
    "pool,nodes,expected_usd,purchase",
    [
        (dict(onDemandBase=1, spotShare=1), 3, 63.296 + 2 * 27.20, {"on-demand": 1, "spot": 2}),
        (dict(spotShare=1), 2, 2 * 27.20, {"on-demand": 0, "spot": 2}),
        (dict(), 2, 2 * 63.296, {"on-demand": 2, "spot": 0}),
    ],
)
def test_purchase_mix_prices_each_node(pool, nodes, expected_usd, purchase):
    gpool = _pool(**pool)
    demand = Demand("llm", replica_shape(P5EN, 8), nodes, 100.0)
    at_load = pool_at_load(gpool, P5EN, pool_prices(gpool, P5EN, "us-east-1"), [demand])
    assert at_load.usd_per_hour == pytest.approx(expected_usd) and at_load.purchase == purchase


def test_unknown_price_stays_unknown_and_an_assumed_price_is_used():
    b200 = load_catalog().find("aws", "p6-b200.48xlarge")
    raw = dict(gpu="B200", capacity="capacity-block", reservationId="cr-1", maxNodes=1)
    pool = GpuPool.model_validate({"name": "b", **raw})
    demand = [Demand("x", replica_shape(b200, 1), 1, 10.0)]
    assert pool_at_load(pool, b200, pool_prices(pool, b200, "us-east-1"), demand).usd_per_million is None
    acked = GpuPool.model_validate({"name": "b", **raw, "assumedPrice": {"usdPerHour": 90, "note": "quote Q-1"}})
    assert pool_at_load(acked, b200, pool_prices(acked, b200, "us-east-1"), demand).usd_per_hour == 90


def test_a_price_published_for_another_region_is_unknown_here():
    p5e = load_catalog().find("aws", "p5e.48xlarge")
    assert p5e.price("capacity-block", "us-east-2").usd == 43.26
    assert p5e.price("capacity-block", "us-east-1") is None


def _config(stack_config, name="prod", **deployment_overrides):
    config = stack_config(name)
    deployments = [d.model_copy(update=deployment_overrides.get(d.name, {})) for d in config.triton_deployments]
    return config.model_copy(update={"triton_deployments": deployments})


def _target(peak, average=None, unit="inferences/s"):
    from tritonfleet.core.config.schema import TargetLoad

    return TargetLoad.model_validate({"peak": peak, "average": average, "unit": unit})


def test_prod_llm_two_replicas_keep_two_h200_nodes(stack_config):
    """Two 1-GPU replicas would pack on one p5en, but prod keeps its minimum on two nodes (the plan's floor,
    tritonfleet/core/placement.py): sizing never counts fewer nodes than the floor."""
    config = _config(stack_config, llm={"target_load": _target(150), "throughput_per_replica": 100.0})
    vision = Capacity(2500.0, "stated", "throughputPerReplica")
    sizing = size_stack(config, {"llm": Capacity(100.0, "stated", "throughputPerReplica"), "vision": vision})
    llm = next(d for d in sizing.deployments if d.deployment == "llm")
    assert llm.replicas == {"minimum": 2, "average": 2, "peak": 2}
    h200 = next(p for p in sizing.pools if p.pool == "h200").points["peak"]
    # prod's llm replica takes 2 GPUs (its model); the two replicas keep two nodes (the prod node spread).
    assert (h200.nodes, h200.gpus_used, h200.idle_gpus) == (2, 4, 12)
    assert llm.usd_per_million("peak") == pytest.approx(cost_per_million(63.296 + 27.20, 150))
    idle = [f for f in sizing.findings if f.key == "gpuPools[0]" and not f.blocking]
    assert idle and "12 of 16 paid GPUs idle" in idle[0].message
    assert not sizing.blocking


@pytest.mark.parametrize(
    "peak,key,needed",
    [
        (100_000, "tritonDeployments[0].maxReplicas", 1334),  # more replicas than maxReplicas 24
        # 1,800/s at 75/s per replica = 24 replicas (= maxReplicas) x 2 GPUs = 48 GPUs = 6 nodes > maxNodes 3
        (1_800, "gpuPools[0].maxNodes", 6),
    ],
)
def test_a_load_that_does_not_fit_fails_with_the_numbers(stack_config, peak, key, needed):
    config = _config(stack_config, llm={"target_load": _target(peak), "gpus_per_replica": 2 if key.startswith("gpu") else 1})
    sizing = size_stack(config, {"llm": Capacity(100.0, "stated", "throughputPerReplica"), "vision": Capacity(2500.0, "stated", "throughputPerReplica")})
    found = [f for f in sizing.blocking if f.key == key]
    assert found and found[0].suggestion == needed
    assert any(ch.isdigit() for ch in found[0].message)


def test_a_target_without_capacity_is_a_blocking_finding(stack_config):
    config = _config(stack_config, llm={"target_load": _target(100)})
    sizing = size_stack(config, {"llm": None, "vision": Capacity(2500.0, "stated", "throughputPerReplica")})
    assert [f.key for f in sizing.blocking] == ["tritonDeployments[0].throughputPerReplica"]


def test_average_load_needs_fewer_nodes_than_the_peak(stack_config):
    config = _config(stack_config, vision={"target_load": _target(6000, 1500)})
    sizing = size_stack(config, {"llm": Capacity(20.0, "stated", "x"), "vision": Capacity(1000.0, "stated", "x")})
    vision = next(d for d in sizing.deployments if d.deployment == "vision")
    assert vision.replicas == {"minimum": 2, "average": 2, "peak": 8}
    l40s = next(p for p in sizing.pools if p.pool == "l40s")
    assert l40s.points["peak"].nodes == 8 and l40s.points["average"].nodes == 2
    # 8 g6e.xlarge at peak: on-demand base 2, half of the rest spot -> 5 on-demand + 3 spot
    assert l40s.points["peak"].purchase == {"on-demand": 5, "spot": 3}
    assert vision.usd_per_million("peak") == pytest.approx(cost_per_million(5 * 1.861 + 3 * 1.208, 6000))
    assert vision.usd_per_million("average") == pytest.approx(cost_per_million(2 * 1.861, 1500))


@pytest.mark.parametrize(
    "cloud,gpu,name,gpus",
    [
        ("aws", "L4", "g6.xlarge", 1),
        ("aws", "L40S", "g6e.xlarge", 1),
        ("aws", "H100", "p5.48xlarge", 8),
        ("aws", "H200", "p5en.48xlarge", 8),
        ("aws", "B200", "p6-b200.48xlarge", 8),
        ("gcp", "H200", "a3-ultragpu-8g", 8),
        ("gcp", "B200", "a4-highgpu-8g", 8),
    ],
)
def test_smallest_purchasable_unit(cloud, gpu, name, gpus):
    unit = load_catalog().smallest_unit(cloud, gpu)
    assert (unit.name, unit.gpu_count) == (name, gpus)


def test_benchmarks_are_dated_and_cited_and_b200_has_none():
    catalog = load_catalog()
    # No closed ResNet-50 result for B200 was published; its only row is MLPerf's Llama 2 70B (output tokens/s).
    assert {b.gpu for b in catalog.benchmarks if b.model == "resnet50"} == {"L40S", "H100", "H200"}
    assert {b.model for b in catalog.benchmarks if b.gpu == "B200"} == {"llama2-70b"}
    for bench in catalog.benchmarks:
        assert catalog.sources[bench.source].as_of.year == 2024 and "MLCommons" in catalog.sources[bench.source].title
