"""Per-pool scheduling facts: what the Kubernetes layer needs to know about a GPU pool, for any cloud."""

from __future__ import annotations

from dataclasses import dataclass

from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import POOL_LABEL, gpu_taint, spot_notice_seconds
from tritonfleet.core.cost import split_capacity


@dataclass(frozen=True)
class PoolFacts:
    name: str
    gpu: str
    gpus_per_node: int
    node_selector: dict[str, str]
    taint: dict[str, str]  # Kubernetes spelling: key, value, effect
    spot: bool  # some nodes of the pool can be spot
    spot_notice_seconds: int | None  # None when the pool has no spot nodes


def pool_facts(config: StackConfig, pool: GpuPool) -> PoolFacts:
    spot = "spot" in split_capacity(pool).purchase
    return PoolFacts(
        name=pool.name,
        gpu=pool.gpu,
        gpus_per_node=config.instance_type(pool).gpu_count,
        node_selector={POOL_LABEL: pool.name},
        taint=gpu_taint(config.cloud),
        spot=spot,
        spot_notice_seconds=spot_notice_seconds(config.cloud) if spot else None,
    )
