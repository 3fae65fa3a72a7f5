"""GPU pools as the policies see them: read back from Karpenter NodePool (AWS), GKE node pool (and a kept GKE default
pool) and EKS managed node group properties. Every node group that can start accelerators is one, system nodes
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

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from policies._match import (
    EKS_NODE_GROUP,
    GKE_CLUSTER,
    GKE_NODE_POOL,
    K8S_DEPLOYMENT,
    KARPENTER_NODE_POOL,
    get,
    is_mapping,
    items,
    number,
)
from tritonfleet.clouds.aws.accelerators import accelerator as aws_accelerator
from tritonfleet.clouds.aws.facts import EKS_CAPACITY_TYPE, EKS_TAINT_EFFECT
from tritonfleet.clouds.gcp.accelerators import accelerator as gcp_accelerator
from tritonfleet.clouds.gcp.facts import GKE_TAINT_EFFECT
from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.conventions import ASSUMED_PRICE_LABEL, CAPACITY_LABEL, HOURS_PER_MONTH, POOL_LABEL
from tritonfleet.core.cost import nodes_monthly_usd

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
    on_demand_fallback: bool = False  # a spot NodePool that launches on-demand when spot is unavailable
    weight: int = 0  # Karpenter NodePool weight (higher is filled first)
    priced_by_first_type: bool = False  # a NodePool: priced at its first (the pool's own, cheapest on-demand) type
    region: str | None = None  # the stack's region (its cloud provider's): prices hold per region, else unknown

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

    @property
    def gpu_class(self) -> str | None:
        """The catalog's GPU of the types the pool is priced by, when they share one (None: unknown or mixed)."""
        entries = self.catalog_entries[:1] if self.priced_by_first_type else self.catalog_entries
        classes = {entry.gpu for entry in entries if entry}
        return next(iter(classes)) if entries and all(entries) and len(classes) == 1 else None

    def assumed_floor_usd_per_hour(self, floors: Mapping[str, float]) -> float | None:
        """The least $/node-hour an assumed price may state here: the floor per GPU-hour of the pool's GPU class
        (policy config) times its GPUs per node; None when none applies (class or GPU count unknown, no floor)."""
        per_gpu = floors.get(self.gpu_class) if self.gpu_class else None
        return None if per_gpu is None or self.gpus_per_node is None else float(per_gpu) * self.gpus_per_node

    def counted_assumed_usd_per_hour(self, floors: Mapping[str, float] | None = None) -> float | None:
        """The assumed price the budget counts: the stated one, never below the floor of its GPU class."""
        assumed, floor = self.assumed_usd_per_hour, self.assumed_floor_usd_per_hour(floors or {})
        return assumed if assumed is None or floor is None else max(assumed, floor)

    @property
    def priced_purchase(self) -> str:
        """The purchase option the budget prices: on-demand for a burst that falls back (spot unavailable)."""
        return "on-demand" if self.on_demand_fallback else self.purchase

    def _costs(self, nodes: int) -> list[float | None]:
        entries = self.catalog_entries[:1] if self.priced_by_first_type else self.catalog_entries
        return [nodes_monthly_usd(entry, self.priced_purchase, nodes, self.region) if entry else None for entry in entries]

    def priced_by_assumption(self, basis: str) -> bool:
        """Whether this pool's cost on this basis uses the assumed price because the catalog has none."""
        nodes = self.min_nodes if basis == "floor" else self.max_nodes
        costs = self._costs(nodes or 0)
        return bool(nodes) and (not costs or any(c is None for c in costs)) and self.assumed_usd_per_hour is not None

    def monthly_usd(self, basis: str, floors: Mapping[str, float] | None = None) -> float | None:
        """Monthly cost at the minimum (floor) or maximum (ceiling) node count; the dearest type when several.

        A type without a published price is priced at the pool's acknowledged assumed price when it states one, never
        below the floor of its GPU class in `floors` ($/GPU-hour by GPU, from the policy config)."""
        nodes = self.min_nodes if basis == "floor" else self.max_nodes
        if nodes is None:
            return None
        assumed = self.counted_assumed_usd_per_hour(floors)
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


def _aws_accelerated(types: Iterable[str]) -> bool:
    """Whether any of these types carries accelerators: catalogued, or of an accelerated family (clouds/aws)."""
    catalog = load_catalog()
    return any(catalog.find("aws", t) or aws_accelerator(t) for t in types)


def _eks_pool(props: Any, urn: str, name: str) -> GpuPool | None:
    types = tuple(str(t) for t in items(get(props, "instanceTypes")))
    catalog = load_catalog()
    gpu_ami = any(marker in str(get(props, "amiType", "")) for marker in ("NVIDIA", "GPU", "NEURON"))
    # Without instanceTypes the type comes from the launch template, which this resource does not show: any type.
    from_template = not types and is_mapping(get(props, "launchTemplate"))
    if not (gpu_ami or from_template or _aws_accelerated(types)):
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


def _requirement(props: Any, key: str) -> tuple[str, ...]:
    for requirement in items(get(props, "spec.template.spec.requirements")):
        if get(requirement, "key") == key and get(requirement, "operator") == "In":
            return tuple(str(v) for v in items(get(requirement, "values")))
    return ()


def _karpenter_pool(props: Any, urn: str, name: str) -> GpuPool | None:
    types = _requirement(props, "node.kubernetes.io/instance-type")
    catalog = load_catalog()
    limits = get(props, "spec.limits", {}) or {}
    gpu_limit = limits.get("nvidia.com/gpu") if hasattr(limits, "get") else None
    if gpu_limit is None and types and not _aws_accelerated(types):
        return None  # a NodePool without an instance-type list may launch any type, accelerated ones included
    per_node = [entry.gpu_count for t in types if (entry := catalog.find("aws", t))]
    gpus_per_node = per_node[0] if types and len(per_node) == len(types) and len(set(per_node)) == 1 else None
    try:
        gpus = int(str(gpu_limit)) if gpu_limit is not None else None
    except ValueError:
        gpus = None
    high = gpus // gpus_per_node if gpus is not None and gpus_per_node else None
    note = "" if high is not None else (
        "spec.limits['nvidia.com/gpu'] is not set" if gpus is None else "its instance types differ in GPUs per node"
    )
    capacity = set(_requirement(props, "karpenter.sh/capacity-type"))
    labels = {str(k): str(v) for k, v in (get(props, "spec.template.metadata.labels", {}) or {}).items()}
    if "spot" in capacity:
        purchase = "spot"
    elif "reserved" in capacity:
        purchase = labels.get(CAPACITY_LABEL) if labels.get(CAPACITY_LABEL) in ("capacity-block", "reservation") else "reservation"
    else:
        purchase = "on-demand" if capacity else "unrestricted"
    return GpuPool(
        urn=urn,
        name=name,
        cloud="aws",
        pool=labels.get(POOL_LABEL, name),
        instance_types=types,
        purchase=purchase,
        min_nodes=0,
        max_nodes=high,
        bounds_note=note,
        gpus_per_node=gpus_per_node,
        taints=_taints(get(props, "spec.template.spec.taints")),
        labels=labels,
        on_demand_fallback="spot" in capacity and "on-demand" in capacity,
        weight=number(get(props, "spec.weight")) or 0,
        priced_by_first_type=True,
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
    if not (accelerators or entry or gcp_accelerator(machine)):
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
    if resource_type == KARPENTER_NODE_POOL:
        return _karpenter_pool(props, urn, name)
    if resource_type == EKS_NODE_GROUP:
        return _eks_pool(props, urn, name)
    if resource_type == GKE_NODE_POOL:
        return _gke_pool(props, urn, name)
    if resource_type == GKE_CLUSTER and get(props, "removeDefaultNodePool") is not True:
        return _gke_pool(props, urn, name)  # the default node pool, kept: the cluster's nodeConfig and node count
    return None


WARM_CAPACITY_NAME = "warm-capacity"  # app.kubernetes.io/name of the placeholder Deployments (node_pools.py)
FLOOR_ANNOTATION = "tritonfleet.io/floor-nodes"  # a NodePool's nodes at the plan's floor (node_pools.py)


def _warm_nodes(resources: list[Any]) -> dict[str, int]:
    """pool -> nodes kept up at its minimum: the floor its NodePools carry (Triton's minReplicas and the warm nodes,
    components/aws/node_pools.py FLOOR_ANNOTATION), else what its warm-capacity placeholder Deployment keeps up (one
    pod per node)."""
    warm: dict[str, int] = {}
    floor: dict[str, int] = {}
    for r in resources:
        labels = get(r.props, "metadata.labels", {}) or {}
        if r.resource_type == K8S_DEPLOYMENT and labels.get("app.kubernetes.io/name") == WARM_CAPACITY_NAME:
            pool = str(labels.get(POOL_LABEL, ""))
            warm[pool] = warm.get(pool, 0) + (number(get(r.props, "spec.replicas")) or 0)
        annotations = get(r.props, "metadata.annotations", {}) or {}
        if r.resource_type == KARPENTER_NODE_POOL and hasattr(annotations, "get") and FLOOR_ANNOTATION in annotations:
            pool_labels = get(r.props, "spec.template.metadata.labels", {}) or {}
            pool = str(pool_labels.get(POOL_LABEL, r.name))
            value = str(annotations.get(FLOOR_ANNOTATION))
            floor[pool] = floor.get(pool, 0) + (int(value) if value.isdigit() else 0)
    return {**warm, **floor}


def stack_region(resources: Iterable[Any]) -> str | None:
    """The region of the stack's cloud provider resource (`pulumi:providers:aws|gcp` input `region`), or None."""
    for r in resources:
        if r.resource_type in ("pulumi:providers:aws", "pulumi:providers:gcp"):
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
