"""Planned resources as neutral code reads them: their engine (camelCase) properties, and what a cloud reads from them
(GPU pools, NetworkPolicy enforcement, the non-GPU bill lines, the inputs a diff watches).

Each cloud reads its own resources (tritonfleet/clouds/<cloud>/resources.py, reached through `Cloud`) into the
shapes defined here; the policy pack, the plan document and the diff only loop over the registered clouds.
Properties arrive as read-only Mapping/Sequence proxies (not dicts or lists) and numbers as floats, so everything
here goes through `collections.abc` and converts numbers itself. No Pulumi import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.conventions import ASSUMED_PRICE_LABEL, HOURS_PER_MONTH
from tritonfleet.core.cost import nodes_monthly_usd

# The certificate authority every cluster of the offline plan shows (a stand-in: the plan talks to no cluster).
OFFLINE_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm9mZmxpbmUtcGxhbgotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="


def is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


def is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def get(props: Any, path: str, default: Any = None) -> Any:
    """props['a']['b']... for a dotted path; `default` when any step is missing or not an object."""
    value = props
    for part in path.split("."):
        if not is_mapping(value) or part not in value:
            return default
        value = value[part]
    return default if value is None else value


def items(value: Any) -> list[Any]:
    return list(value) if is_list(value) else []


def number(value: Any) -> int | None:
    """An integral count from the wire (4.0 -> 4); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def decoded(value: Any) -> Any:
    """Providers send nested objects as JSON text, resources as objects: the object either way (None if unreadable)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def string_map(value: Any) -> dict[str, str]:
    """A tags/labels map, from an object or from a provider's JSON text."""
    value = decoded(value)
    return {str(k): str(v) for k, v in value.items()} if is_mapping(value) else {}


def taints(raw: Any, effects: Mapping[str, str]) -> tuple[tuple[str, str, str], ...]:
    """(key, value, Kubernetes effect) of a taint list; `effects` maps the cloud's API spelling to Kubernetes'."""
    return tuple(
        (str(get(t, "key", "")), str(get(t, "value", "")), effects.get(get(t, "effect", ""), str(get(t, "effect", ""))))
        for t in items(raw)
    )


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


@dataclass(frozen=True)
class PlatformLine:
    """One non-GPU resource's monthly cost at the floor and at the ceiling (None: unknown, with why)."""

    name: str
    what: str
    floor_usd: float | None
    ceiling_usd: float | None
    unknown: str = ""

    def monthly_usd(self, basis: str) -> float | None:
        return self.floor_usd if basis == "floor" else self.ceiling_usd


def priced_line(cloud: str, item: str, region: str | None, name: str, what: str, low: float, high: float) -> PlatformLine:
    """A line of `low`..`high` units of the catalog's service price `item` of `cloud` in `region` (unknown: None)."""
    price = load_catalog().service_price(cloud, item, region) if region else None
    if price is None:
        where = f" in {region}" if region else " (the stack's region is unknown)"
        return PlatformLine(name, what, None, None, f"no published {item} price{where}")
    return PlatformLine(name, what, round(low * price.usd, 2), round(high * price.usd, 2))


@dataclass(frozen=True)
class Enforcement:
    """Whether a planned cluster enforces NetworkPolicy."""

    cluster: str  # the cluster resource's name
    enforced: bool
    how: str  # what enforces it, or why nothing does


@dataclass(frozen=True)
class Watched:
    """A resource type a diff reviewer must not miss (tritonfleet/diff/replacement.py)."""

    kind: str  # what a reviewer calls it: cluster, node pool, bucket
    replace: tuple[str, ...]  # input paths (camelCase wire form) whose change replaces the resource
    rolls_nodes: tuple[str, ...] = ()  # input paths whose change recreates every node of the pool in place
