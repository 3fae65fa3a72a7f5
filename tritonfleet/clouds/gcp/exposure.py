"""How Triton is exposed on GKE, as cloud-neutral ExposureFacts (plain data, no Pulumi).

`internal` is a passthrough internal load balancer (client addresses are kept, so the NetworkPolicy must allow the
clients' own ranges: clientCidrs). `public` is a GKE Ingress of class gce (external Application Load Balancer) and
`internal-application` one of class gce-internal (regional internal Application Load Balancer, whose proxies connect
from the VPC's proxy-only subnet: components/gcp/network.py); both use container-native load balancing. A GKE Ingress
speaks HTTP/2 to a backend only over TLS and Triton's gRPC port is cleartext, so the Ingress serves the REST-only case
(`loadBalancerGrpc: false`); otherwise the same load balancer comes from a GKE Gateway (gke-l7-global-external-managed,
gke-l7-rilb) whose HTTPRoute sends gRPC to the port with appProtocol kubernetes.io/h2c (docs/access.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tritonfleet.clouds.gcp.facts import (
    GKE_EXTERNAL_GATEWAY_CLASS,
    GKE_EXTERNAL_INGRESS_CLASS,
    GKE_GATEWAY_PRE_SHARED_CERT_OPTION,
    GKE_H2C_APP_PROTOCOL,
    GKE_HEALTH_CHECK_POLICY,
    GKE_INGRESS_CLASS_ANNOTATION,
    GKE_INTERNAL_GATEWAY_CLASS,
    GKE_INTERNAL_INGRESS_CLASS,
    GKE_INTERNAL_LB_TYPE,
    GKE_LB_TYPE_ANNOTATION,
    PRIVATE_GOOGLE_APIS_CIDR,
)
from tritonfleet.clouds.gcp.layout import PROXY_ONLY_CIDR
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.conventions import TRITON_INFERENCE_PORTS
from tritonfleet.core.exposure import (
    INTERNAL,
    INTERNAL_APPLICATION,
    PER_CONNECTION,
    PER_REQUEST,
    PUBLIC,
    ControlPlaneAccess,
    EgressRule,
    ExposureFacts,
    GrpcBalancing,
    control_plane_access,
    grpc_through_load_balancer,
    uses_gateway,
)

# Google Front Ends and health checkers reach NEG endpoints from these ranges (documented by Google Cloud; the internal
# Application Load Balancer's health checks too: https://cloud.google.com/load-balancing/docs/firewall-rules, read
# 2026-12-03).
GOOGLE_FRONT_END_RANGES = ("130.211.0.0/22", "35.191.0.0/16")
# The GKE metadata server answers Workload Identity token requests on the node (169.254.169.252:988 with
# Dataplane V2 policies enforced on it; 169.254.169.254:80 otherwise).
METADATA_EGRESS = (EgressRule("169.254.169.252/32", 988), EgressRule("169.254.169.254/32", 80))
# Cloud Storage through Private Google Access: the VPC's private DNS zone for googleapis.com (components/gcp/network.py)
# sends storage.googleapis.com to private.googleapis.com (tritonfleet/clouds/gcp/facts.py).
GOOGLE_APIS_EGRESS = (EgressRule(PRIVATE_GOOGLE_APIS_CIDR, 443),)
# The Application load balancers behind a GKE Gateway are Envoy-based proxies (load-balancing scheme INTERNAL_MANAGED
# / EXTERNAL_MANAGED): they end the client's HTTP/2 and pick a backend per request.
_PER_REQUEST_SOURCE = (
    "https://cloud.google.com/ruby/docs/reference/google-cloud-compute-v1/latest/Google-Cloud-Compute-V1-BackendService-"
    "LocalityLbPolicy (read 2026-12-05): the managed load balancers' backend services (HTTP, HTTPS or HTTP2) pick "
    "each healthy backend in round robin order by default"
)
GRPC_BALANCING = {
    INTERNAL: GrpcBalancing(
        "internal passthrough Network Load Balancer",
        PER_CONNECTION,
        "https://cloud.google.com/load-balancing/docs/internal/int-netlb-traffic-distribution (read 2026-12-03): a "
        "backend is chosen per connection by consistent hashing and kept in a connection tracking table",
    ),
    INTERNAL_APPLICATION: GrpcBalancing(
        "regional internal Application Load Balancer (GKE Gateway gke-l7-rilb)", PER_REQUEST, _PER_REQUEST_SOURCE
    ),
    PUBLIC: GrpcBalancing(
        "global external Application Load Balancer (GKE Gateway gke-l7-global-external-managed)",
        PER_REQUEST,
        _PER_REQUEST_SOURCE,
    ),
}
HTTP_PORT = TRITON_INFERENCE_PORTS[0]
# The Gateway's backends are health-checked on Triton's readiness, /v2/health/ready on the HTTP port, the gRPC
# backend too (a fixed port: the gRPC port answers no HTTP/1.1 GET).
GATEWAY_HEALTH_CHECK = {
    **GKE_HEALTH_CHECK_POLICY,
    "default": {
        "config": {
            "type": "HTTP",
            "httpHealthCheck": {"portSpecification": "USE_FIXED_PORT", "port": HTTP_PORT, "requestPath": "/v2/health/ready"},
        }
    },
}


def gcp_exposure_facts(proxy_only_cidr: str = PROXY_ONLY_CIDR) -> ExposureFacts:
    """`proxy_only_cidr`: the VPC's proxy-only subnet (cluster.proxyOnlySubnetCidr), where internal Application Load
    Balancer proxies connect from."""
    https_only = {"kubernetes.io/ingress.allow-http": "false"}
    return ExposureFacts(
        internal_service_annotations={GKE_LB_TYPE_ANNOTATION: GKE_INTERNAL_LB_TYPE},
        ingress_classes={INTERNAL_APPLICATION: GKE_INTERNAL_INGRESS_CLASS, PUBLIC: GKE_EXTERNAL_INGRESS_CLASS},
        ingress_annotations={INTERNAL_APPLICATION: dict(https_only), PUBLIC: dict(https_only)},
        ingress_class_annotation=GKE_INGRESS_CLASS_ANNOTATION,
        ingress_per_protocol=False,
        grpc_app_protocol=GKE_H2C_APP_PROTOCOL,
        gateway_classes={INTERNAL_APPLICATION: GKE_INTERNAL_GATEWAY_CLASS, PUBLIC: GKE_EXTERNAL_GATEWAY_CLASS},
        gateway_tls_options={"preSharedCert": GKE_GATEWAY_PRE_SHARED_CERT_OPTION},
        gateway_health_check=GATEWAY_HEALTH_CHECK,
        # The same annotation names a global certificate for gce and a regional one (the stack's region) for
        # gce-internal: https://cloud.google.com/kubernetes-engine/docs/concepts/ingress-ilb (read 2026-12-03).
        certificate_annotations={"preSharedCert": "ingress.gcp.kubernetes.io/pre-shared-cert"},
        # Internal: a passthrough load balancer with externalTrafficPolicy Local keeps the client's address (its health
        # checks probe the node's health-check port, not the pod). Public: container-native load balancing, the Google
        # Front Ends and health checkers connect to the pod from their own ranges. Internal application: the proxies
        # connect from the proxy-only subnet, the health checkers from Google's ranges; client addresses are not kept.
        load_balancer_sources={
            INTERNAL: (),
            INTERNAL_APPLICATION: (proxy_only_cidr, *GOOGLE_FRONT_END_RANGES),
            PUBLIC: GOOGLE_FRONT_END_RANGES,
        },
        keeps_client_address=frozenset({INTERNAL}),
        egress=(*GOOGLE_APIS_EGRESS, *METADATA_EGRESS),
        grpc_balancing=GRPC_BALANCING,
    )


def needs_gateway_api(deployments: Iterable[TritonDeployment]) -> bool:
    """Whether the cluster must serve the Gateway API (gatewayApiConfig): a deployment's load balancer is a Gateway."""
    facts = gcp_exposure_facts()
    return any(uses_gateway(d.access, facts) for d in deployments)


def proxy_only_ports(deployments: Iterable[TritonDeployment]) -> tuple[int, ...]:
    """Triton's ports the internal Application Load Balancer's proxies connect to (the proxy-only firewall rule):
    HTTP always, gRPC only when a deployment routes it through them (a GKE Gateway); never metrics."""
    http, grpc = TRITON_INFERENCE_PORTS
    internal = [d.access for d in deployments if d.access.mode == INTERNAL_APPLICATION]
    return (http, grpc) if any(grpc_through_load_balancer(a) for a in internal) else (http,)


def gke_control_plane_access(access: ControlPlaneAccess) -> dict[str, Any]:
    """Cluster arguments: `enable_private_endpoint` (private only: the API answers on its internal address only) and
    master authorized networks, the CIDRs allowed to the API (Google Cloud's public ranges not included). Anywhere
    (0.0.0.0/0) turns authorized networks off."""
    networks = None
    if not access.anywhere:
        networks = {
            "cidr_blocks": [{"cidr_block": cidr, "display_name": f"tritonfleet-{i}"} for i, cidr in enumerate(access.public_cidrs)],
            "gcp_public_cidrs_access_enabled": False,
        }
    return {"enable_private_endpoint": access.private_only, "master_authorized_networks_config": networks}


def gke_ip_endpoint_access(cidrs: list[str] | None, environment: str) -> ControlPlaneAccess:
    """Who reaches the GKE control plane's IP endpoint: cluster.controlPlaneCidrs when set, else nobody from outside
    the network, in every environment: `pulumi up` and people use the DNS-based endpoint (docs/access.md)."""
    return control_plane_access([] if cidrs is None else cidrs, environment)
