"""GPU pools as the policies see them: each registered cloud reads its planned node groups and node pools
(`Cloud.gpu_pool`, tritonfleet/clouds/<cloud>/resources.py; on AWS Karpenter NodePools and EKS managed node groups,
on GCP GKE node pools and a kept default pool). Every node group that can start accelerators is one, system nodes
included: a type the catalog lists, or of an accelerated family (tritonfleet/clouds/<cloud>/accelerators.py), a
GPU/Neuron AMI, declared guestAccelerators, or a type this resource does not show (a NodePool without an instance-type
list, a node group typed by its launch template). What cannot be counted or priced is None, and the policies refuse it.

A Karpenter NodePool is one tier of a pool (reserved, on-demand base, or burst: spot preferred with on-demand
fallback). Its node maximum is its `nvidia.com/gpu` limit over the GPUs per node; Karpenter keeps no minimum, so a
pool's minimum is its warm-capacity placeholder Deployment's replicas, assigned to its NodePools by weight (the order
Karpenter fills them). A burst NodePool that falls back is priced on-demand on both bases, the case of spot being
unavailable, as the plan's ceiling is.

Counts, GPUs per node and prices come from the shared catalog and cost model (`tritonfleet.core`), so the budget
policy prices a plan exactly as `tritonfleet plan` does. A bound or price that cannot be known is None, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from policies._match import K8S_DEPLOYMENT, get, is_mapping, number
from tritonfleet.core.cloud import cloud, cloud_names
from tritonfleet.core.conventions import POOL_LABEL
from tritonfleet.core.planned import GpuPool


def gpu_pool(resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
    """The GPU pool a node group / node pool describes (each cloud reads its own), or None when it is not a GPU pool."""
    for cloud_name in cloud_names():
        found = cloud(cloud_name).gpu_pool(resource_type, props, urn, name)
        if found is not None:
            return found
    return None


WARM_CAPACITY_NAME = "warm-capacity"  # app.kubernetes.io/name of the placeholder Deployments (node_pools.py)


def _warm_nodes(resources: list[Any]) -> dict[str, int]:
    """pool -> nodes kept up at its minimum: the floor its node pools declare (on AWS, Triton's minReplicas and the
    warm nodes its Karpenter NodePools carry, `Cloud.floor_nodes`), else what its warm-capacity placeholder
    Deployment keeps up (one pod per node)."""
    warm: dict[str, int] = {}
    floor: dict[str, int] = {}
    clouds = [cloud(name) for name in cloud_names()]
    for r in resources:
        labels = get(r.props, "metadata.labels", {}) or {}
        if r.resource_type == K8S_DEPLOYMENT and labels.get("app.kubernetes.io/name") == WARM_CAPACITY_NAME:
            pool = str(labels.get(POOL_LABEL, ""))
            warm[pool] = warm.get(pool, 0) + (number(get(r.props, "spec.replicas")) or 0)
        for each in clouds:
            if (declared := each.floor_nodes(r.resource_type, r.props, r.name)) is not None:
                pool, nodes = declared
                floor[pool] = floor.get(pool, 0) + nodes
    return {**warm, **floor}


def stack_region(resources: Iterable[Any]) -> str | None:
    """The region of the stack's cloud provider resource (a registered cloud's `provider_type`, input `region`), or
    None."""
    providers = {cloud(name).provider_type for name in cloud_names()}
    for r in resources:
        if r.resource_type in providers:
            region = get(r.props, "region", None)
            if isinstance(region, str) and region:
                return region
    return None


def gpu_pools(resources: Iterable[Any]) -> list[GpuPool]:
    """Every GPU pool among a stack's PolicyResources; Karpenter NodePools get their pool's warm nodes by weight.
    Each is priced in the stack's region: a price the catalog lists for other regions only is unknown there."""
    resources = list(resources)
    region = stack_region(resources)
    found = [
        replace(p, region=region) for r in resources if (p := gpu_pool(r.resource_type, r.props, r.urn, r.name)) is not None
    ]
    warm = _warm_nodes(resources)
    karpenter = sorted((p for p in found if p.priced_by_first_type), key=lambda p: -p.weight)
    assigned: dict[str, GpuPool] = {}
    for node_pool in karpenter:
        left = warm.get(node_pool.pool, 0)
        take = left if node_pool.max_nodes is None else min(left, node_pool.max_nodes)
        warm[node_pool.pool] = left - take
        assigned[node_pool.urn] = replace(node_pool, min_nodes=take)
    return [assigned.get(p.urn, p) for p in found]


def release_node_selector(props: Any) -> dict[str, str]:
    """A Triton release's values.nodeSelector ({} when it has none)."""
    selector = get(props, "values.nodeSelector", {})
    return {str(k): str(v) for k, v in selector.items()} if is_mapping(selector) else {}


def selected_pools(selector: dict[str, str], pools: Iterable[GpuPool]) -> list[GpuPool]:
    """The GPU pools whose nodes carry every label of `selector` (none for an empty selector): where the release's
    pods may land (one pool label on EKS; every node pool of the compute class on GKE)."""
    if not selector:
        return []
    return [p for p in pools if all(p.labels.get(key) == value for key, value in selector.items())]


def selected_pool_names(pools: Iterable[GpuPool]) -> str:
    """The configured pools among `pools`, for messages: 'h200' or 'h200', 'h200-spot'."""
    return ", ".join(f"'{name}'" for name in dict.fromkeys(p.pool for p in pools))


@dataclass(frozen=True)
class StackSpend:
    """A stack's monthly GPU spend on one basis: the sum of what is known, and what could not be priced."""

    basis: str
    known_usd: float  # GPU pools and the rest of the bill together
    unpriced: tuple[str, ...]  # "<resource>: <why>" for each pool or other line whose cost is unknown
    assumed: tuple[str, ...] = ()  # "<resource>: $X/node-hour" for each pool priced at its acknowledged assumption
    platform_usd: float = 0.0  # the known part of the non-GPU lines (policies/_platform.py)

    @property
    def parts(self) -> str:
        """'GPU pools $X, the rest $Y (control plane, system nodes, NAT gateways)' for messages."""
        gpu = round(self.known_usd - self.platform_usd, 2)
        return (
            f"GPU pools ${gpu:,.2f}, the rest ${self.platform_usd:,.2f} (control plane, system nodes, NAT, "
            "load balancers, volumes, storage, logs, traffic)"
        )

    @property
    def complete(self) -> bool:
        return not self.unpriced


def stack_spend(
    pools: Iterable[GpuPool], basis: str, floors: Mapping[str, float] | None = None, platform: Iterable[Any] = ()
) -> StackSpend:
    """The spend of `pools` and the `platform` lines (policies/_platform.py) on `basis`; assumed prices count at least
    the floor of their GPU class in `floors`."""
    known, unpriced, assumed = 0.0, [], []
    platform_usd = 0.0
    for line in platform:
        usd = line.monthly_usd(basis)
        if usd is None:
            unpriced.append(f"{line.name}: {line.unknown}")
        else:
            platform_usd += usd
    for pool in pools:
        if pool.priced_by_assumption(basis):
            stated, counted = pool.assumed_usd_per_hour, pool.counted_assumed_usd_per_hour(floors)
            at_floor = f", counted at the floor ${counted:,.2f}" if counted != stated else ""
            assumed.append(f"{pool.name}: assumed ${stated:,.2f}/node-hour{at_floor} ({pool.priced_purchase})")
        usd = pool.monthly_usd(basis, floors)
        if usd is not None:
            known += usd
        elif pool.bounds_note:
            unpriced.append(f"{pool.name}: {pool.bounds_note}")
        else:
            unpriced.append(
                f"{pool.name}: no published {pool.priced_purchase} price for {', '.join(pool.instance_types) or 'its type'}"
                + (f" in {pool.region}" if pool.region else "")
            )
    return StackSpend(basis, round(known + platform_usd, 2), tuple(unpriced), tuple(assumed), round(platform_usd, 2))
