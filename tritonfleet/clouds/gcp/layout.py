"""The address plan of the VPC a GKE stack creates (plain data, no Pulumi): the defaults below, each replaceable by
cluster.gkeRanges. components/gcp/network.py and cluster.py build it, the config rules check the user's ranges
against each other and the proxy-only range, and the exposure facts admit that range in Triton's NetworkPolicy."""

from __future__ import annotations

from tritonfleet.core.config import StackConfig
from tritonfleet.core.config.schema import GkeRanges
from tritonfleet.core.exposure import INTERNAL_APPLICATION

# VPC-native: pods and services come from secondary ranges of the node subnet.
NODE_CIDR = "10.10.0.0/20"
POD_CIDR = "10.16.0.0/14"
SERVICE_CIDR = "10.20.0.0/20"
CONTROL_PLANE_CIDR = "172.16.0.0/28"
PODS_RANGE, SERVICES_RANGE = "pods", "services"
# The proxy-only subnet of internal Application Load Balancers (cluster.proxyOnlySubnetCidr): next to the node range,
# outside every other range; /23 is the size Google recommends.
PROXY_ONLY_CIDR = "10.10.16.0/23"
# The ranges a proxy-only subnet must stay out of, by the config key's words.
PLANNED_RANGES = {"node": NODE_CIDR, "pod": POD_CIDR, "service": SERVICE_CIDR, "control-plane": CONTROL_PLANE_CIDR}


# cluster.gkeRanges' config key and field per range, by PLANNED_RANGES' words.
RANGE_KEYS = {
    "node": ("nodes", "nodes"),
    "pod": ("pods", "pods"),
    "service": ("services", "services"),
    "control-plane": ("controlPlane", "control_plane"),
}


def planned_ranges(ranges: GkeRanges | None) -> dict[str, str]:
    """The stack's address plan: cluster.gkeRanges where set, PLANNED_RANGES elsewhere (by PLANNED_RANGES' words)."""
    return {
        word: (getattr(ranges, RANGE_KEYS[word][1]) if ranges is not None else None) or default
        for word, default in PLANNED_RANGES.items()
    }


def proxy_only_cidr(config: StackConfig) -> str:
    return config.cluster.proxy_only_subnet_cidr or PROXY_ONLY_CIDR


def needs_proxy_only_subnet(config: StackConfig) -> bool:
    """An internal Application Load Balancer needs the region's proxy-only subnet in the VPC."""
    return any(d.access.mode == INTERNAL_APPLICATION for d in config.triton_deployments)
