"""The rest of the bill as the budget policies see it: the lines a plan's resources show besides GPU pools, priced
with the same catalog (servicePrices) in the stack's region as `tritonfleet plan` prices them (tritonfleet/core/bill.py):
each cluster's control plane (EKS: its fee on today's date, extended support included; GKE: the management fee),
every node group or node pool without accelerators (the system nodes), and each NAT gateway (AWS).

The lines no resource proves (traffic, NAT GB, log ingestion, bucket storage, volumes, load balancers; GCP's Cloud
NAT hours) rest on the stack's `usage` assumptions, model sizes and node counts: the program registers their
quantities on the Platform component (`billLines`, tritonfleet.core.bill.registered_lines) and they are priced here
by the plan's own code (bill.priced_registered_lines). A price the catalog
lacks in the region is unknown (None), never 0: the budget policies report it, and fail on it where the environment
demands (unknownPrices: fail), as for GPU prices.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from policies._match import EKS_CLUSTER, EKS_NODE_GROUP, GKE_CLUSTER, GKE_NODE_POOL, get, items, number
from policies._pools import _gke_bounds, gpu_pool, stack_region
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.conventions import HOURS_PER_MONTH

NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
PLATFORM = "tritonfleet:platform:Platform"
PROVIDERS = {"pulumi:providers:aws": "aws", "pulumi:providers:gcp": "gcp"}


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


def _priced(cloud: str, item: str, region: str | None, name: str, what: str, low: float, high: float) -> PlatformLine:
    price = load_catalog().service_price(cloud, item, region) if region else None
    if price is None:
        where = f" in {region}" if region else " (the stack's region is unknown)"
        return PlatformLine(name, what, None, None, f"no published {item} price{where}")
    return PlatformLine(name, what, round(low * price.usd, 2), round(high * price.usd, 2))


def _eks_control_plane(props: Any, name: str) -> PlatformLine:
    from tritonfleet.clouds.aws.support import usd_per_cluster_hour

    monthly = round(usd_per_cluster_hour(str(get(props, "version", "")), date.today()) * HOURS_PER_MONTH, 2)
    return PlatformLine(name, "EKS control plane", monthly, monthly)


def platform_line(resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
    """The non-GPU line one resource adds, or None when it adds none here (GPU pools are priced by _pools)."""
    hours = HOURS_PER_MONTH
    if resource_type == EKS_CLUSTER:
        return _eks_control_plane(props, name)
    if resource_type == GKE_CLUSTER:
        return _priced("gcp", "control-plane", region, name, "GKE management fee", hours, hours)
    if resource_type == NAT_GATEWAY:
        return _priced("aws", "nat-gateway", region, name, "NAT gateway", hours, hours)
    if resource_type not in (EKS_NODE_GROUP, GKE_NODE_POOL) or gpu_pool(resource_type, props, urn, name) is not None:
        return None
    if resource_type == EKS_NODE_GROUP:
        types = [str(t) for t in items(get(props, "instanceTypes"))]
        low, high = number(get(props, "scalingConfig.minSize")), number(get(props, "scalingConfig.maxSize"))
        cloud = "aws"
    else:
        types = [str(get(props, "nodeConfig.machineType", ""))]
        low, high, _ = _gke_bounds(props)
        cloud = "gcp"
    what = f"system nodes ({', '.join(types) or 'type unknown'})"
    if low is None or high is None or len(types) != 1:
        return PlatformLine(name, what, None, None, "its node bounds or its one instance type are not set")
    return _priced(cloud, f"instance:{types[0]}", region, name, what, low * hours, high * hours)


def _quantities(charge: dict[str, Any]) -> bool:
    return all(isinstance(charge[k], int | float) and not isinstance(charge[k], bool) for k in ("floor", "expected", "ceiling"))


def registered_lines(resources: list[Any], region: str | None) -> list[PlatformLine]:
    """The Platform component's billLines, priced in the stack's region as `tritonfleet plan` prices them."""
    from tritonfleet.core.bill import priced_registered_lines

    cloud = next((PROVIDERS[r.resource_type] for r in resources if r.resource_type in PROVIDERS), None)
    found = []
    for r in resources:
        if cloud is None or r.resource_type != PLATFORM:
            continue
        registered = [
            {
                "line": get(entry, "line", ""),
                "assumption": get(entry, "assumption", ""),
                "charges": [
                    {key: get(c, key) for key in ("item", "floor", "expected", "ceiling")} for c in items(get(entry, "charges"))
                ],
            }
            for entry in items(get(r.props, "billLines"))
        ]
        unreadable = [e["line"] for e in registered if not all(_quantities(c) for c in e["charges"])]
        why = "its registered quantities are not numbers"
        found += [PlatformLine(str(name), str(name), None, None, why) for name in unreadable]
        registered = [e for e in registered if e["line"] not in unreadable]
        for line in priced_registered_lines(registered, cloud, region):
            unknown = f"no published {', '.join(line.unknown)} price in {region}" if line.unknown else ""
            found.append(
                PlatformLine(line.line, line.assumption or line.line, line.monthly_floor_usd, line.monthly_ceiling_usd, unknown)
            )
    return found


def platform_lines(resources: Iterable[Any]) -> list[PlatformLine]:
    """Every non-GPU line: the resources' (control plane, system nodes, NAT gateways) and the registered ones."""
    resources = list(resources)
    region = stack_region(resources)
    proven = [
        line
        for r in resources
        if (line := platform_line(r.resource_type, r.props, r.name, r.urn, region)) is not None
    ]
    return proven + registered_lines(resources, region)
