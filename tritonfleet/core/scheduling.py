"""Per-pool scheduling facts: what the Kubernetes layer needs to know about a GPU pool, for any cloud.

`pool_facts` gives the neutral default (select the pool label, tolerate the GPU taint); a cloud adapter may hand up
another scheduling target for a pool (GKE: the pool's compute class, which also reaches its fallback pool's nodes).
"""

from __future__ import annotations

from dataclasses import dataclass

from tritonfleet.core.capacity import split_capacity
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import CAPACITY_LABEL, POOL_LABEL, gpu_taint, spot_notice_seconds


@dataclass(frozen=True)
class PoolFacts:
    name: str
    gpu: str
    gpus_per_node: int
    node_selector: dict[str, str]  # what a pod of this pool selects: it reaches every node pool of the pool's target
    taints: tuple[dict[str, str], ...]  # every taint on those nodes, Kubernetes spelling (key, value, effect)
    spot: bool  # some nodes the selector reaches can be spot
    spot_notice_seconds: int | None  # the spot node's life after its notice; None when no node is spot
    # The longest grace period a pod gets when a spot node goes, where the node's own shutdown gives pods less than
    # the notice (GKE: the non-system share of graceful node shutdown); None: the notice alone bounds it.
    spot_pod_shutdown_seconds: int | None = None
    # The node label whose value says how each node was bought (spot, on-demand, ...): Triton spreads its replicas
    # over it. tritonfleet.io/capacity unless the cloud's provisioner labels the truth (AWS: Karpenter's).
    capacity_type_label: str = CAPACITY_LABEL
    # Node labels whose presence marks a node replicas should avoid (GKE: cloud.google.com/scheduled-maintenance-time);
    # the chart prefers nodes without them.
    avoid_node_labels: tuple[str, ...] = ()


def pool_members(config: StackConfig, pool: GpuPool) -> list[GpuPool]:
    """The enabled pools whose nodes a pod of `pool` may use: the pool's head (itself, or the pool it is the
    fallback of) first, then the head's fallback pool (`gpuPools[].fallbackPool`)."""
    head = next((p for p in config.enabled_pools if p.fallback_pool == pool.name), pool)
    fallback = [p for p in config.enabled_pools if p.name == head.fallback_pool]
    return [head, *fallback]


def pool_facts(config: StackConfig, pool: GpuPool) -> PoolFacts:
    spot = "spot" in split_capacity(pool).purchase
    return PoolFacts(
        name=pool.name,
        gpu=pool.gpu,
        gpus_per_node=config.instance_type(pool).gpu_count,
        node_selector={POOL_LABEL: pool.name},
        taints=(gpu_taint(config.cloud),),
        spot=spot,
        spot_notice_seconds=spot_notice_seconds(config.cloud) if spot else None,
    )
