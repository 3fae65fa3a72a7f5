"""Capacity: how a pool's nodes split into purchase options (on-demand base, spot burst, reservations), in the
order its autoscaler fills them, and what happens when spot is unavailable. No prices here: the cost model
(tritonfleet/core/cost.py) prices these splits; the scheduling facts and the placement model read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tritonfleet.core.conventions import spot_falls_back

if TYPE_CHECKING:  # annotations only: the policy pack imports this module without the config schema
    from tritonfleet.core.config import GpuPool


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
