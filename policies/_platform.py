"""The rest of the bill as the budget policies see it: the lines a plan's resources show besides GPU pools, priced
with the same catalog (servicePrices) in the stack's region as `tritonfleet plan` prices them (tritonfleet/core/bill.py):
each cluster's control plane (EKS: its fee on today's date, extended support included; GKE: the management fee),
every node group or node pool without accelerators (the system nodes), and each NAT gateway (AWS): each cloud reads
its own (`Cloud.platform_line`, tritonfleet/clouds/<cloud>/resources.py).

The lines no resource proves (traffic, NAT GB, log ingestion, bucket storage, volumes, load balancers; GCP's Cloud
NAT hours) rest on the stack's `usage` assumptions, model sizes and node counts: the program registers their
quantities on the Platform component (`billLines`, tritonfleet.core.bill.registered_lines) and they are priced here
by the plan's own code (bill.priced_registered_lines). A price the catalog
lacks in the region is unknown (None), never 0: the budget policies report it, and fail on it where the environment
demands (unknownPrices: fail), as for GPU prices.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from policies._match import get, items
from policies._pools import stack_region
from tritonfleet.core.cloud import cloud, cloud_names
from tritonfleet.core.planned import PlatformLine

PLATFORM = "tritonfleet:platform:Platform"


def platform_line(resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
    """The non-GPU line one resource adds (each cloud reads its own), or None when it adds none here (GPU pools are
    priced by _pools)."""
    for cloud_name in cloud_names():
        found = cloud(cloud_name).platform_line(resource_type, props, name, urn, region)
        if found is not None:
            return found
    return None


def _quantities(charge: dict[str, Any]) -> bool:
    return all(isinstance(charge[k], int | float) and not isinstance(charge[k], bool) for k in ("floor", "expected", "ceiling"))


def registered_lines(resources: list[Any], region: str | None) -> list[PlatformLine]:
    """The Platform component's billLines, priced in the stack's region as `tritonfleet plan` prices them."""
    from tritonfleet.core.bill import priced_registered_lines

    providers = {cloud(name).provider_type: name for name in cloud_names()}
    stack_cloud = next((providers[r.resource_type] for r in resources if r.resource_type in providers), None)
    found = []
    for r in resources:
        if stack_cloud is None or r.resource_type != PLATFORM:
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
        for line in priced_registered_lines(registered, stack_cloud, region):
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
