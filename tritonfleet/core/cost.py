"""The cost model: how a pool's nodes split into on-demand and spot, and what a stack costs a month.

One implementation, used by the program (node group sizes), the CLI (plan tables) and the budget policy.
A price nobody published makes the affected figure `None` (unknown), never 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config import GpuPool, StackConfig, TritonDeployment
from tritonfleet.core.conventions import HOURS_PER_MONTH


@dataclass(frozen=True)
class NodeRange:
    min: int
    max: int


@dataclass(frozen=True)
class CapacitySplit:
    """How many nodes of a pool are bought which way, at the pool's minimum and at its maximum."""

    purchase: dict[str, NodeRange]  # purchase option -> node range; ranges add up to the pool's min/max


def spot_nodes(pool: GpuPool, nodes: int) -> int:
    """Spot nodes among `nodes` in a mixed pool: the share of the nodes above the on-demand base, rounded down."""
    above_base = max(0, nodes - pool.on_demand_base)
    return math.floor(above_base * pool.spot_share + 1e-9)


def split_capacity(pool: GpuPool) -> CapacitySplit:
    if pool.capacity != "mixed":
        return CapacitySplit({pool.capacity: NodeRange(pool.min_nodes, pool.max_nodes)})
    spot = NodeRange(spot_nodes(pool, pool.min_nodes), spot_nodes(pool, pool.max_nodes))
    on_demand = NodeRange(pool.min_nodes - spot.min, pool.max_nodes - spot.max)
    return CapacitySplit({name: r for name, r in (("on-demand", on_demand), ("spot", spot)) if r.max > 0})


def nodes_monthly_usd(itype: InstanceType, option: str, nodes: int) -> float | None:
    """What `nodes` nodes of one type bought one way cost a month; None when that price is unknown (and nodes > 0)."""
    if nodes == 0:
        return 0.0
    price = itype.price(option)
    return None if price is None else nodes * price.usd * HOURS_PER_MONTH


def _cost(split: CapacitySplit, itype: InstanceType, bound: str) -> float | None:
    total = 0.0
    for option, nodes in split.purchase.items():
        usd = nodes_monthly_usd(itype, option, getattr(nodes, bound))
        if usd is None:
            return None
        total += usd
    return round(total, 2)


@dataclass(frozen=True)
class PoolCost:
    pool: str
    gpu: str
    instance_type: str
    gpus_per_node: int
    split: CapacitySplit
    monthly_floor_usd: float | None
    monthly_ceiling_usd: float | None
    gpu_hours_floor: int
    gpu_hours_ceiling: int
    unknown_prices: tuple[str, ...]  # purchase options used by the pool whose price is unknown

    @property
    def max_gpus(self) -> int:
        return sum(r.max for r in self.split.purchase.values()) * self.gpus_per_node


def pool_cost(config: StackConfig, pool: GpuPool) -> PoolCost:
    itype = config.instance_type(pool)
    split = split_capacity(pool)
    unknown = tuple(o for o, r in split.purchase.items() if r.max > 0 and itype.price(o) is None)
    return PoolCost(
        pool=pool.name,
        gpu=pool.gpu,
        instance_type=itype.name,
        gpus_per_node=itype.gpu_count,
        split=split,
        monthly_floor_usd=_cost(split, itype, "min"),
        monthly_ceiling_usd=_cost(split, itype, "max"),
        gpu_hours_floor=pool.min_nodes * itype.gpu_count * HOURS_PER_MONTH,
        gpu_hours_ceiling=pool.max_nodes * itype.gpu_count * HOURS_PER_MONTH,
        unknown_prices=unknown,
    )


def _sum(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else round(sum(v for v in values if v is not None), 2)


@dataclass(frozen=True)
class StackCost:
    pools: tuple[PoolCost, ...]

    @property
    def monthly_floor_usd(self) -> float | None:
        return _sum([p.monthly_floor_usd for p in self.pools])

    @property
    def monthly_ceiling_usd(self) -> float | None:
        return _sum([p.monthly_ceiling_usd for p in self.pools])

    @property
    def max_gpus(self) -> int:
        return sum(p.max_gpus for p in self.pools)

    def monthly_usd(self, basis: str) -> float | None:
        return self.monthly_floor_usd if basis == "floor" else self.monthly_ceiling_usd


def stack_cost(config: StackConfig) -> StackCost:
    """GPU pool costs of the enabled pools (system nodes, storage and traffic are not counted)."""
    return StackCost(tuple(pool_cost(config, p) for p in config.enabled_pools))


def cost_per_million(usd_per_hour: float | None, inferences_per_second: float | None) -> float | None:
    """$ per 1M inferences = $/hour / (inferences/s x 3600) x 1e6, at full utilisation."""
    if usd_per_hour is None or not inferences_per_second:
        return None
    return usd_per_hour / (inferences_per_second * 3600) * 1e6


def replica_usd_per_hour(config: StackConfig, deployment: TritonDeployment) -> float | None:
    """What one replica's share of a node costs per hour, priced at the pool's on-demand-first purchase option."""
    pool = config.pool(deployment.pool)
    itype = config.instance_type(pool)
    option = next(iter(split_capacity(pool).purchase), "on-demand")
    price = itype.price(option)
    return None if price is None else price.usd * deployment.gpus_per_replica / itype.gpu_count
