"""The cost model: how a pool's nodes split into on-demand and spot, and what a stack costs a month.

One implementation, used by the program (node group sizes), the CLI (plan tables) and the budget policy.
A price nobody published makes the affected figure `None` (unknown), never 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config import GpuPool, StackConfig
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


def split_nodes(pool: GpuPool, nodes: int) -> dict[str, int]:
    """How `nodes` running nodes of a pool are bought: every purchase option the pool uses, with its node count."""
    if pool.capacity != "mixed":
        return {pool.capacity: nodes}
    spot = spot_nodes(pool, nodes)
    return {"on-demand": nodes - spot, "spot": spot}


def split_capacity(pool: GpuPool) -> CapacitySplit:
    low, high = split_nodes(pool, pool.min_nodes), split_nodes(pool, pool.max_nodes)
    return CapacitySplit({option: NodeRange(low[option], high[option]) for option in high if high[option] > 0})


def nodes_usd_per_hour(itype: InstanceType, option: str, nodes: int, region: str | None = None) -> float | None:
    """What `nodes` nodes of one type bought one way cost an hour; None when that price is unknown (and nodes > 0)."""
    if nodes == 0:
        return 0.0
    price = itype.price(option, region)
    return None if price is None else nodes * price.usd


def nodes_monthly_usd(itype: InstanceType, option: str, nodes: int, region: str | None = None) -> float | None:
    """What `nodes` nodes of one type bought one way cost a month; None when that price is unknown (and nodes > 0)."""
    hourly = nodes_usd_per_hour(itype, option, nodes, region)
    return None if hourly is None else hourly * HOURS_PER_MONTH


def pool_prices(pool: GpuPool, itype: InstanceType, region: str | None) -> dict[str, float | None]:
    """$/node-hour per purchase option the pool uses: the catalog's price in the region, else the pool's acknowledged
    assumed price (`assumedPrice`), else None (unknown)."""
    prices: dict[str, float | None] = {}
    for option in split_nodes(pool, max(pool.max_nodes, 1)):
        hourly = nodes_usd_per_hour(itype, option, 1, region)
        if hourly is None and pool.assumed_price is not None:
            hourly = pool.assumed_price.usd_per_hour
        prices[option] = hourly
    return prices


def pool_usd_per_hour(pool: GpuPool, nodes: int, prices: dict[str, float | None]) -> float | None:
    """What `nodes` running nodes of a pool cost an hour, split into purchase options as its node groups are."""
    total = 0.0
    for option, count in split_nodes(pool, nodes).items():
        if count == 0:
            continue
        usd = prices.get(option)
        if usd is None:
            return None
        total += count * usd
    return total


def _monthly(pool: GpuPool, nodes: int, prices: dict[str, float | None]) -> float | None:
    hourly = pool_usd_per_hour(pool, nodes, prices)
    return None if hourly is None else round(hourly * HOURS_PER_MONTH, 2)


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
    assumed_prices: tuple[str, ...] = ()  # purchase options priced with the pool's acknowledged assumed price

    @property
    def max_gpus(self) -> int:
        return sum(r.max for r in self.split.purchase.values()) * self.gpus_per_node


def pool_cost(config: StackConfig, pool: GpuPool) -> PoolCost:
    itype = config.instance_type(pool)
    split = split_capacity(pool)
    prices = pool_prices(pool, itype, config.region)
    unknown = tuple(o for o, r in split.purchase.items() if r.max > 0 and prices.get(o) is None)
    assumed = tuple(o for o in split.purchase if prices.get(o) is not None and itype.price(o, config.region) is None)
    return PoolCost(
        pool=pool.name,
        gpu=pool.gpu,
        instance_type=itype.name,
        gpus_per_node=itype.gpu_count,
        split=split,
        monthly_floor_usd=_monthly(pool, pool.min_nodes, prices),
        monthly_ceiling_usd=_monthly(pool, pool.max_nodes, prices),
        gpu_hours_floor=pool.min_nodes * itype.gpu_count * HOURS_PER_MONTH,
        gpu_hours_ceiling=pool.max_nodes * itype.gpu_count * HOURS_PER_MONTH,
        unknown_prices=unknown,
        assumed_prices=assumed,
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
