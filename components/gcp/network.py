"""The GKE network: a VPC-native subnet (pods and services from secondary ranges), Cloud NAT for private nodes, a
private DNS zone that sends Google API names to private.googleapis.com, and, when a deployment uses an internal
Application Load Balancer, the region's proxy-only subnet and its firewall rule.

Builders here are functions whose resources are children of the GCP adapter (their URNs are those of every existing
GKE stack); the address plan is plain data.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from tritonfleet.clouds.gcp.facts import (
    GOOGLE_APIS_DOMAIN,
    PRIVATE_GOOGLE_APIS_CIDR,
    PROXY_ONLY_PURPOSE,
    PROXY_ONLY_ROLE,
    control_plane_firewall_ports,
)
from tritonfleet.clouds.gcp.layout import PLANNED_RANGES, PODS_RANGE, SERVICES_RANGE
from tritonfleet.core.conventions import CONTROL_PLANE_CALLED_PORTS, TRITON_INFERENCE_PORTS, resource_name


@dataclass(frozen=True)
class GkeNetworkArgs:
    """The slice of the stack config the network is built from."""

    stack: str
    """The stack's name: resource names are tf-<stack>-<role> (`conventions.resource_name`)."""
    region: str
    """The GCP region of the subnet, router and NAT."""
    protected: bool = False
    """Protect the VPC and subnet (deleting them takes the cluster with them)."""
    proxy_only_cidr: str | None = None
    """The proxy-only subnet's range when a deployment uses an internal Application Load Balancer; None: no subnet."""
    proxy_only_ports: tuple[int, ...] = TRITON_INFERENCE_PORTS
    """Triton's ports the proxies connect to (`exposure.proxy_only_ports`): never the metrics port."""
    ranges: Mapping[str, str] = field(default_factory=lambda: dict(PLANNED_RANGES))
    """The address plan (`layout.planned_ranges`): node, pod, service and control-plane CIDRs."""


@dataclass(frozen=True)
class GkeNetwork:
    """What the cluster is placed in."""

    network: gcp.compute.Network
    subnet: gcp.compute.Subnetwork


def create_network(name: str, args: GkeNetworkArgs, opts: pulumi.ResourceOptions) -> GkeNetwork:
    """The VPC, its node subnet with the pod and service ranges, and NAT so private nodes can pull nvcr.io images."""
    protected = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=args.protected))
    network = gcp.compute.Network(
        f"{name}-vpc", name=resource_name(args.stack, "vpc"), auto_create_subnetworks=False, opts=protected
    )
    subnet = gcp.compute.Subnetwork(
        f"{name}-nodes-subnet",
        name=resource_name(args.stack, "nodes"),
        network=network.self_link,
        region=args.region,
        ip_cidr_range=args.ranges["node"],
        private_ip_google_access=True,
        secondary_ip_ranges=[
            gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=args.ranges["pod"]),
            gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=SERVICES_RANGE, ip_cidr_range=args.ranges["service"]),
        ],
        opts=protected,
    )
    # Private nodes have no public address: NAT lets them pull nvcr.io images (Triton, GPU Operator).
    router = gcp.compute.Router(
        f"{name}-router",
        name=resource_name(args.stack, "router"),
        network=network.self_link,
        region=args.region,
        opts=opts,
    )
    gcp.compute.RouterNat(
        f"{name}-nat",
        name=resource_name(args.stack, "nat"),
        router=router.name,
        region=args.region,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
        opts=opts,
    )
    # The private control plane reaches the nodes on 443 and 10250 only: prometheus-adapter's custom metrics API
    # (6443) needs its own rule, or every HPA stops (tritonfleet/clouds/gcp/facts.py). Source: the control plane's
    # /28 only, to the instances of this stack's own VPC.
    _allow_tcp_in(name, "control-plane-webhooks", args, network, args.ranges["control-plane"],
                  control_plane_firewall_ports(CONTROL_PLANE_CALLED_PORTS), opts)  # fmt: skip
    if args.proxy_only_cidr:
        create_proxy_only_subnet(name, args, network, opts)
    create_private_google_apis_zone(name, args, network, opts)
    return GkeNetwork(network=network, subnet=subnet)


def create_private_google_apis_zone(
    name: str, args: GkeNetworkArgs, network: gcp.compute.Network, opts: pulumi.ResourceOptions
) -> None:
    """Private Google Access by name: a private DNS zone for googleapis.com on this VPC that sends every Google API
    name to private.googleapis.com (199.36.153.8/30, reached through the subnet's Private Google Access), so Triton's
    Cloud Storage traffic goes to one known range its NetworkPolicy allows instead of to the whole internet
    (https://cloud.google.com/vpc/docs/configure-private-google-access#config-domain, read 2026-12-05)."""
    zone = gcp.dns.ManagedZone(
        f"{name}-googleapis",
        name=resource_name(args.stack, "googleapis"),
        dns_name=f"{GOOGLE_APIS_DOMAIN}.",
        description="Google APIs through Private Google Access (private.googleapis.com)",
        visibility="private",
        private_visibility_config=gcp.dns.ManagedZonePrivateVisibilityConfigArgs(
            networks=[gcp.dns.ManagedZonePrivateVisibilityConfigNetworkArgs(network_url=network.id)]
        ),
        opts=opts,
    )
    records = {
        "private": ("A", private_google_apis_addresses()),
        "wildcard": ("CNAME", [f"private.{GOOGLE_APIS_DOMAIN}."]),
    }
    for role, (kind, data) in records.items():
        gcp.dns.RecordSet(
            f"{name}-googleapis-{role}",
            managed_zone=zone.name,
            name=f"{'*' if role == 'wildcard' else role}.{GOOGLE_APIS_DOMAIN}.",
            type=kind,
            ttl=300,
            rrdatas=data,
            opts=opts,
        )


def private_google_apis_addresses() -> list[str]:
    """The four addresses of private.googleapis.com (PRIVATE_GOOGLE_APIS_CIDR)."""
    return [str(address) for address in ipaddress.ip_network(PRIVATE_GOOGLE_APIS_CIDR)]


def create_proxy_only_subnet(name: str, args: GkeNetworkArgs, network: gcp.compute.Network, opts: pulumi.ResourceOptions) -> None:
    """The region's proxy-only subnet, where internal Application Load Balancer proxies get their addresses, and the
    firewall rule that lets them reach Triton's pods (the GKE Ingress controller adds the health-check rule itself,
    not this one: tritonfleet/clouds/gcp/facts.py)."""
    assert args.proxy_only_cidr is not None
    gcp.compute.Subnetwork(
        f"{name}-proxy-only-subnet",
        name=resource_name(args.stack, "proxy-only"),
        network=network.self_link,
        region=args.region,
        ip_cidr_range=args.proxy_only_cidr,
        purpose=PROXY_ONLY_PURPOSE,
        role=PROXY_ONLY_ROLE,
        opts=opts,
    )
    _allow_tcp_in(name, "proxy-only-to-triton", args, network, args.proxy_only_cidr, args.proxy_only_ports, opts)


def _allow_tcp_in(
    name: str, rule: str, args: GkeNetworkArgs, network: gcp.compute.Network, source: str, ports: Iterable[int], opts: pulumi.ResourceOptions
) -> gcp.compute.Firewall:
    """An ingress firewall rule `tf-<stack>-<rule>` of the stack's VPC: TCP `ports` from the `source` range."""
    return gcp.compute.Firewall(
        f"{name}-{rule}",
        name=resource_name(args.stack, rule),
        network=network.self_link,
        direction="INGRESS",
        source_ranges=[source],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(p) for p in ports])],
        opts=opts,
    )
