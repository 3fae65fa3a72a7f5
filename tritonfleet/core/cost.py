"""The cost model: how a pool's nodes split into on-demand and spot, and what a stack costs a month.

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

from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.conventions import HOURS_PER_MONTH, spot_falls_back

if TYPE_CHECKING:  # annotations only: the policy pack imports this module without the config schema (0.1 s)
    from tritonfleet.core.config import GpuPool, StackConfig


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


def falls_back(cloud: str, pool: GpuPool) -> bool:
    """Whether the pool's burst launches on-demand nodes when spot is unavailable: the cloud's provisioner does it
    (AWS Karpenter, not GKE node pools), the pool has spot nodes, and it does not opt out (onDemandFallback: false)."""
    has_spot = pool.capacity == "mixed" and pool.spot_share > 0 and pool.max_nodes > pool.on_demand_base
    return has_spot and pool.on_demand_fallback is not False and spot_falls_back(cloud)


def spot_share_enforced(cloud: str) -> bool:
    """Whether the cloud's node pools hold a mixed pool's spotShare (GKE: a spot node pool with its own maximum) or
    the plan's spot/on-demand mix is an estimate of what the provisioner will get (AWS Karpenter)."""
    from tritonfleet.core.cloud import cloud as cloud_named

    return cloud_named(cloud).spot_share_enforced


def fill_split(cloud: str, pool: GpuPool, nodes: int) -> dict[str, int]:
    """How `nodes` running nodes of a pool are bought, in the order its autoscaler adds them: the on-demand base
    first; then, where the cloud holds the share (GKE, the compute class tries spot before on-demand), spot up to
    the spot pool's maximum and on-demand after it; elsewhere (AWS) the spotShare mix of the nodes above the base."""
    if pool.capacity != "mixed" or not spot_share_enforced(cloud):
        return split_nodes(pool, nodes)
    base = min(pool.on_demand_base, nodes)
    spot = min(nodes - base, spot_nodes(pool, pool.max_nodes))
    return {"on-demand": nodes - spot, "spot": spot}


def fallback_nodes(cloud: str, pool: GpuPool, nodes: int) -> dict[str, int]:
    """How `nodes` running nodes of a pool are bought when spot is unavailable: where the pool falls back, every spot
    node of the expected mix is on-demand instead; elsewhere the expected mix (a spot node that cannot launch is simply
    missing, which costs less, never more)."""
    split = fill_split(cloud, pool, nodes)
    if not falls_back(cloud, pool):
        return split
    return {"on-demand": split.get("on-demand", 0) + split.get("spot", 0), "spot": 0}


@dataclass(frozen=True)
class CapacityTier:
    """One step of a pool's capacity, in the order the provisioner fills them (highest priority first)."""

    name: str  # reserved, base or burst
    nodes: int  # nodes of this tier at the pool's maximum (the tiers add up to maxNodes)
    purchase: tuple[str, ...]  # purchase options the tier may launch, preferred first
    monthly_expected_usd: float | None  # the tier full, bought as the expected mix
    monthly_fallback_usd: float | None  # the tier full with spot unavailable


def capacity_tiers(cloud: str, pool: GpuPool) -> list[CapacityTier]:
    """The pool's tiers without prices (see `pool_cost` for the priced ones): a reservation pool is one reserved
    tier; a mixed pool is its on-demand base, then its burst (spot first where it has a spot share, on-demand where it
    falls back or has no spot share)."""
    if pool.capacity != "mixed":
        return [CapacityTier("reserved", pool.max_nodes, (pool.capacity,), None, None)]
    base = min(pool.on_demand_base, pool.max_nodes)
    burst = pool.max_nodes - base
    tiers = [CapacityTier("base", base, ("on-demand",), None, None)] if base else []
    if burst:
        if pool.spot_share == 0:
            purchase: tuple[str, ...] = ("on-demand",)
        elif falls_back(cloud, pool):
            purchase = ("spot", "on-demand")
        else:
            purchase = ("spot",) if pool.spot_share == 1 else ("spot", "on-demand")
        tiers.append(CapacityTier("burst", burst, purchase, None, None))
    return tiers


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
