"""GPU pools as the policies see them: read back from EKS node group / GKE node pool properties.

Counts, GPUs per node and prices come from the shared catalog and cost model (`tritonfleet.core`), so the budget
policy prices a plan exactly as `tritonfleet plan` does. A bound or price that cannot be known is None, never 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from policies._match import EKS_NODE_GROUP, GKE_NODE_POOL, get, is_mapping, items, number
from tritonfleet.clouds.aws.facts import EKS_CAPACITY_TYPE, EKS_TAINT_EFFECT
from tritonfleet.clouds.gcp.facts import GKE_TAINT_EFFECT
from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.conventions import ASSUMED_PRICE_LABEL, HOURS_PER_MONTH, POOL_LABEL
from tritonfleet.core.cost import nodes_monthly_usd

# Instance families that carry NVIDIA GPUs even when our catalog does not list the exact type.
AWS_GPU_FAMILY = re.compile(r"^(p\d|g\d)")
GCP_GPU_FAMILY = re.compile(r"^(a2|a3|a4|g2|g4)-")
PURCHASE_FROM_EKS = {value: option for option, value in EKS_CAPACITY_TYPE.items()}
K8S_EFFECT = {value: effect for effects in (EKS_TAINT_EFFECT, GKE_TAINT_EFFECT) for effect, value in effects.items()}
# A pool pinned to a named reservation; ANY_RESERVATION is on-demand capacity that may use a matching one.
GKE_RESERVATION_TYPES = ("SPECIFIC_RESERVATION",)
ZONE = re.compile(r"^[a-z]+-[a-z]+\d+-[a-z]$")


@dataclass(frozen=True)
class GpuPool:
    """One GPU node group (EKS) or node pool (GKE): one purchase option, one node range."""

    urn: str
    name: str
    cloud: str
    pool: str  # the tritonfleet pool label, or the resource name when the label is missing
    instance_types: tuple[str, ...]
    purchase: str  # on-demand, spot, capacity-block, reservation or flex-start (the raw value if unrecognised)
    min_nodes: int | None
    max_nodes: int | None
    bounds_note: str  # why the node bounds are unknown; '' when known
    gpus_per_node: int | None
    taints: tuple[tuple[str, str, str], ...]  # (key, value, Kubernetes effect)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def catalog_entries(self) -> list[InstanceType | None]:
        catalog = load_catalog()
        return [catalog.find(self.cloud, name) for name in self.instance_types]

    @property
    def max_gpus(self) -> int | None:
        if self.max_nodes is None or self.gpus_per_node is None:
            return None
        return self.max_nodes * self.gpus_per_node

    @property
    def guaranteed(self) -> bool:
        """Nodes that a spot reclaim cannot take away."""
        return self.purchase != "spot"

    @property
    def assumed_usd_per_hour(self) -> float | None:
        """The acknowledged assumed $/node-hour the stack states for this pool (gpuPools[].assumedPrice), if any."""
        try:
            value = float(self.labels.get(ASSUMED_PRICE_LABEL, ""))
        except ValueError:
            return None
        return value if value > 0 else None

    def _costs(self, nodes: int) -> list[float | None]:
        return [nodes_monthly_usd(entry, self.purchase, nodes) if entry else None for entry in self.catalog_entries]

    def priced_by_assumption(self, basis: str) -> bool:
        """Whether this pool's cost on this basis uses the assumed price because the catalog has none."""
        nodes = self.min_nodes if basis == "floor" else self.max_nodes
        costs = self._costs(nodes or 0)
        return bool(nodes) and (not costs or any(c is None for c in costs)) and self.assumed_usd_per_hour is not None

    def monthly_usd(self, basis: str) -> float | None:
        """Monthly cost at the minimum (floor) or maximum (ceiling) node count; the dearest type when several.

        A type without a published price is priced at the pool's acknowledged assumed price when it states one."""
        nodes = self.min_nodes if basis == "floor" else self.max_nodes
        if nodes is None:
            return None
        assumed = self.assumed_usd_per_hour
        costs = [
            cost if cost is not None or assumed is None else nodes * assumed * HOURS_PER_MONTH for cost in self._costs(nodes)
        ]
        if not costs and assumed is not None:
            costs = [nodes * assumed * HOURS_PER_MONTH]
        if not costs or any(cost is None for cost in costs):
            return None if nodes else 0.0
        return max(cost for cost in costs if cost is not None)


def _taints(raw: Any) -> tuple[tuple[str, str, str], ...]:
    return tuple(
        (str(get(t, "key", "")), str(get(t, "value", "")), K8S_EFFECT.get(get(t, "effect", ""), str(get(t, "effect", ""))))
        for t in items(raw)
    )


def _eks_pool(props: Any, urn: str, name: str) -> GpuPool | None:
    types = tuple(str(t) for t in items(get(props, "instanceTypes")))
    catalog = load_catalog()
    gpu_ami = any(marker in str(get(props, "amiType", "")) for marker in ("NVIDIA", "GPU"))
    if not (gpu_ami or any(catalog.find("aws", t) or AWS_GPU_FAMILY.match(t) for t in types)):
        return None
    per_node = [entry.gpu_count for t in types if (entry := catalog.find("aws", t))]
    capacity = str(get(props, "capacityType", "ON_DEMAND"))
    low, high = number(get(props, "scalingConfig.minSize")), number(get(props, "scalingConfig.maxSize"))
    labels = {str(k): str(v) for k, v in (get(props, "labels", {}) or {}).items()}
    return GpuPool(
        urn=urn,
        name=name,
        cloud="aws",
        pool=labels.get(POOL_LABEL, name),
        instance_types=types,
        purchase=PURCHASE_FROM_EKS.get(capacity, capacity.lower()),
        min_nodes=low,
        max_nodes=high,
        bounds_note="" if low is not None and high is not None else "scalingConfig.minSize/maxSize are not set",
        gpus_per_node=max(per_node) if types and len(per_node) == len(types) else None,
        taints=_taints(get(props, "taints")),
        labels=labels,
    )


def _gke_bounds(props: Any) -> tuple[int | None, int | None, str]:
    """Total node bounds: GKE's minNodeCount/maxNodeCount/nodeCount are per zone, total* are per pool."""
    total_min, total_max = (
        number(get(props, "autoscaling.totalMinNodeCount")),
        number(get(props, "autoscaling.totalMaxNodeCount")),
    )
    if total_max is not None:
        return total_min or 0, total_max, ""
    per_zone_min, per_zone_max = number(get(props, "autoscaling.minNodeCount")), number(get(props, "autoscaling.maxNodeCount"))
    if per_zone_max is None:
        fixed = number(get(props, "nodeCount"))
        fixed = number(get(props, "initialNodeCount")) if fixed is None else fixed
        per_zone_min = per_zone_max = fixed
    if per_zone_max is None:
        return None, None, "neither autoscaling bounds nor nodeCount are set"
    zones = len(items(get(props, "nodeLocations")))
    if not zones and ZONE.match(str(get(props, "location", ""))):
        zones = 1
    if not zones:
        return (
            None,
            None,
            ("autoscaling.minNodeCount/maxNodeCount count nodes per zone and this regional pool lists no nodeLocations"),
        )
    return (per_zone_min or 0) * zones, per_zone_max * zones, ""


def _gke_purchase(props: Any) -> str:
    if get(props, "nodeConfig.spot") is True or get(props, "nodeConfig.preemptible") is True:
        return "spot"
    if get(props, "nodeConfig.reservationAffinity.consumeReservationType") in GKE_RESERVATION_TYPES:
        return "reservation"
    if get(props, "nodeConfig.flexStart") is True or get(props, "queuedProvisioning.enabled") is True:
        return "flex-start"
    return "on-demand"


def _gke_pool(props: Any, urn: str, name: str) -> GpuPool | None:
    machine = str(get(props, "nodeConfig.machineType", ""))
    accelerators = items(get(props, "nodeConfig.guestAccelerators"))
    entry = load_catalog().find("gcp", machine)
    if not (accelerators or entry or GCP_GPU_FAMILY.match(machine)):
        return None
    declared = sum(number(get(a, "count")) or 0 for a in accelerators)
    low, high, note = _gke_bounds(props)
    labels = {str(k): str(v) for k, v in (get(props, "nodeConfig.labels", {}) or {}).items()}
    return GpuPool(
        urn=urn,
        name=name,
        cloud="gcp",
        pool=labels.get(POOL_LABEL, name),
        instance_types=(machine,) if machine else (),
        purchase=_gke_purchase(props),
        min_nodes=low,
        max_nodes=high,
        bounds_note=note,
        gpus_per_node=entry.gpu_count if entry else (declared or None),
        taints=_taints(get(props, "nodeConfig.taints")),
        labels=labels,
    )


def gpu_pool(resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
    """The GPU pool a node group / node pool describes, or None when it is not a GPU pool."""
    if resource_type == EKS_NODE_GROUP:
        return _eks_pool(props, urn, name)
    if resource_type == GKE_NODE_POOL:
        return _gke_pool(props, urn, name)
    return None


def gpu_pools(resources: Iterable[Any]) -> list[GpuPool]:
    """Every GPU pool among a stack's PolicyResources."""
    found = (gpu_pool(r.resource_type, r.props, r.urn, r.name) for r in resources)
    return [p for p in found if p is not None]


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
    known_usd: float
    unpriced: tuple[str, ...]  # "<resource>: <why>" for each pool whose cost is unknown
    assumed: tuple[str, ...] = ()  # "<resource>: $X/node-hour" for each pool priced at its acknowledged assumption

    @property
    def complete(self) -> bool:
        return not self.unpriced


def stack_spend(pools: Iterable[GpuPool], basis: str) -> StackSpend:
    known, unpriced, assumed = 0.0, [], []
    for pool in pools:
        if pool.priced_by_assumption(basis):
            assumed.append(f"{pool.name}: assumed ${pool.assumed_usd_per_hour:,.2f}/node-hour ({pool.purchase})")
        usd = pool.monthly_usd(basis)
        if usd is not None:
            known += usd
        elif pool.bounds_note:
            unpriced.append(f"{pool.name}: {pool.bounds_note}")
        else:
            unpriced.append(f"{pool.name}: no published {pool.purchase} price for {', '.join(pool.instance_types) or 'its type'}")
    return StackSpend(basis, round(known, 2), tuple(unpriced), tuple(assumed))
