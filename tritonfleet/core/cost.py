"""The cost model: what a pool's nodes cost (tritonfleet/core/capacity.py splits them into purchase options), and what
a stack costs a month.

The floor is the nodes the autoscalers keep up with every deployment at minReplicas (and every pool at minNodes), the
expected figure the nodes they reach with every deployment at maxReplicas (tritonfleet/core/placement.py); the
ceiling is every pool at maxNodes (the node pools' limits). Floor and ceiling, the bounds a budget checks, are priced
with spot unavailable where the provisioner falls back to on-demand (AWS); the expected figure in the spotShare mix.

One implementation, used by the program (node pool limits), the CLI (plan tables), preflight and the budget policy.
Each pool's maximum is counted once: its base (on-demand first), its burst (spot preferred) and any reservation add up
to maxNodes. Where the cloud's provisioner falls back from spot to on-demand (AWS: Karpenter), the ceiling is priced
for that fallback (spot unavailable: the whole burst on-demand) and the expected mix (spotShare) is shown beside it.
A price nobody published makes the affected figure `None` (unknown), never 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tritonfleet.core.capacity import (
    CapacitySplit,
    CapacityTier,
    NodeRange,
    capacity_tiers,
    fallback_nodes,
    falls_back,
    fill_split,
    split_nodes,
    spot_share_enforced,
)
from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.conventions import HOURS_PER_MONTH

if TYPE_CHECKING:  # annotations only: the policy pack imports this module without the config schema (0.1 s)
    from tritonfleet.core.config import GpuPool, StackConfig


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


def pool_prices(
    pool: GpuPool, itype: InstanceType, region: str | None, cloud: str | None = None
) -> dict[str, float | None]:
    """$/node-hour per purchase option the pool uses (on-demand too where its burst falls back): the catalog's price in
    the region, else the pool's acknowledged assumed price (`assumedPrice`), else None (unknown)."""
    prices: dict[str, float | None] = {}
    options = list(split_nodes(pool, max(pool.max_nodes, 1)))
    if cloud is not None and falls_back(cloud, pool) and "on-demand" not in options:
        options.append("on-demand")
    for option in options:
        hourly = nodes_usd_per_hour(itype, option, 1, region)
        if hourly is None and pool.assumed_price is not None:
            hourly = pool.assumed_price.usd_per_hour
        prices[option] = hourly
    return prices


def pool_usd_per_hour(
    pool: GpuPool, nodes: int, prices: dict[str, float | None], split: dict[str, int] | None = None
) -> float | None:
    """What `nodes` running nodes of a pool cost an hour, bought as the expected mix (or as `split` says)."""
    total = 0.0
    for option, count in (split if split is not None else split_nodes(pool, nodes)).items():
        if count == 0:
            continue
        usd = prices.get(option)
        if usd is None:
            return None
        total += count * usd
    return total


def _monthly(
    pool: GpuPool, nodes: int, prices: dict[str, float | None], split: dict[str, int] | None = None
) -> float | None:
    hourly = pool_usd_per_hour(pool, nodes, prices, split)
    return None if hourly is None else round(hourly * HOURS_PER_MONTH, 2)


def _tier_split(tier: CapacityTier, pool: GpuPool, fallback: bool, cloud: str) -> dict[str, int]:
    """The nodes of one full tier by purchase option: the reserved tier as the pool's capacity, the base on-demand,
    the burst as the expected spot share (or all on-demand when spot is unavailable and the pool falls back)."""
    if tier.name != "burst":
        return {tier.purchase[0]: tier.nodes}
    if tier.purchase == ("on-demand",):
        return {"on-demand": tier.nodes}
    if fallback and falls_back(cloud, pool):
        return {"on-demand": tier.nodes}
    spot = math.floor(tier.nodes * pool.spot_share + 1e-9)
    return {"spot": spot, "on-demand": tier.nodes - spot}


@dataclass(frozen=True)
class PoolCost:
    pool: str
    gpu: str
    instance_type: str
    gpus_per_node: int
    split: CapacitySplit
    monthly_floor_usd: float | None
    monthly_ceiling_usd: float | None  # the bound the budget checks: every pool at maxNodes, spot unavailable
    gpu_hours_floor: int
    gpu_hours_ceiling: int
    unknown_prices: tuple[str, ...]  # purchase options used by the pool whose price is unknown
    assumed_prices: tuple[str, ...] = ()  # purchase options priced with the pool's acknowledged assumed price
    monthly_expected_ceiling_usd: float | None = None  # the nodes maxReplicas need (ceiling_nodes), expected mix
    tiers: tuple[CapacityTier, ...] = ()  # reserved/base/burst, each counted once; nodes add up to maxNodes
    falls_back: bool = False  # the burst launches on-demand when spot is unavailable
    floor_nodes: int = 0  # nodes the autoscaler keeps up at minReplicas (and minNodes)
    ceiling_nodes: int = 0  # nodes the autoscaler reaches at maxReplicas (with the warm nodes), at most maxNodes
    spot_share_enforced: bool = True  # False: the spot/on-demand mix is an estimate of the provisioner's choice

    @property
    def max_nodes(self) -> int:
        return sum(r.max for r in self.split.purchase.values())

    @property
    def max_gpus(self) -> int:
        return self.max_nodes * self.gpus_per_node


def pool_cost(config: StackConfig, pool: GpuPool, nodes: tuple[int, int] | None = None) -> PoolCost:
    """The pool's figures with `nodes` = (floor, ceiling) running nodes, default the placement's
    (tritonfleet/core/placement.py: the nodes the autoscalers keep up at minReplicas and reach at maxReplicas)."""
    if nodes is None:
        nodes = _placed_nodes(config)[pool.name]
    floor, ceiling = nodes
    itype = config.instance_type(pool)
    cloud = config.cloud
    low, high = fill_split(cloud, pool, floor), split_nodes(pool, pool.max_nodes)
    split = CapacitySplit({o: NodeRange(low.get(o, 0), high[o]) for o in high if high[o] > 0 or low.get(o, 0) > 0})
    prices = pool_prices(pool, itype, config.region, cloud)
    used = [*split.purchase, *(["on-demand"] if falls_back(cloud, pool) and "on-demand" not in split.purchase else [])]
    unknown = tuple(o for o in used if prices.get(o) is None and (o not in split.purchase or split.purchase[o].max > 0))
    assumed = tuple(o for o in used if prices.get(o) is not None and itype.price(o, config.region) is None)
    tiers = tuple(
        CapacityTier(
            tier.name,
            tier.nodes,
            tier.purchase,
            _monthly(pool, tier.nodes, prices, _tier_split(tier, pool, False, cloud)),
            _monthly(pool, tier.nodes, prices, _tier_split(tier, pool, True, cloud)),
        )
        for tier in capacity_tiers(cloud, pool)
    )
    return PoolCost(
        pool=pool.name,
        gpu=pool.gpu,
        instance_type=itype.name,
        gpus_per_node=itype.gpu_count,
        split=split,
        monthly_floor_usd=_monthly(pool, floor, prices, fallback_nodes(cloud, pool, floor)),
        monthly_ceiling_usd=_monthly(pool, pool.max_nodes, prices, fallback_nodes(cloud, pool, pool.max_nodes)),
        monthly_expected_ceiling_usd=_monthly(pool, ceiling, prices, fill_split(cloud, pool, ceiling)),
        tiers=tiers,
        falls_back=falls_back(cloud, pool),
        gpu_hours_floor=floor * itype.gpu_count * HOURS_PER_MONTH,
        gpu_hours_ceiling=pool.max_nodes * itype.gpu_count * HOURS_PER_MONTH,
        floor_nodes=floor,
        ceiling_nodes=ceiling,
        spot_share_enforced=spot_share_enforced(cloud),
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
    def monthly_expected_ceiling_usd(self) -> float | None:
        return _sum([p.monthly_expected_ceiling_usd for p in self.pools])

    @property
    def max_gpus(self) -> int:
        return sum(p.max_gpus for p in self.pools)

    def monthly_usd(self, basis: str) -> float | None:
        return self.monthly_floor_usd if basis == "floor" else self.monthly_ceiling_usd


def _placed_nodes(config: StackConfig) -> dict[str, tuple[int, int]]:
    """pool -> (floor, ceiling) running nodes, from the one placement model."""
    from tritonfleet.core.placement import ceiling_placement, floor_placement

    floor, ceiling = floor_placement(config), ceiling_placement(config)
    return {name: (floor[name].nodes, max(floor[name].nodes, ceiling[name].nodes)) for name in floor}


def stack_cost(config: StackConfig) -> StackCost:
    """GPU pool costs of the enabled pools (system nodes, storage and traffic are not counted)."""
    placed = _placed_nodes(config)
    return StackCost(tuple(pool_cost(config, p, placed[p.name]) for p in config.enabled_pools))


def cost_per_million(usd_per_hour: float | None, inferences_per_second: float | None) -> float | None:
    """$ per 1M inferences = $/hour / (inferences/s x 3600) x 1e6, at full utilisation."""
    if usd_per_hour is None or not inferences_per_second:
        return None
    return usd_per_hour / (inferences_per_second * 3600) * 1e6
