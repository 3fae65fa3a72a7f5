"""What the Kubernetes layer must know about a cloud's load balancers, in Kubernetes terms only.

Each cloud adapter fills one `ExposureFacts` (tritonfleet/clouds/aws/exposure.py, tritonfleet/clouds/gcp/exposure.py); the Kubernetes
layer turns a deployment's `access` config and these facts into chart values without ever naming a cloud.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tritonfleet.core.config import Access

# Triton's API groups that control the server rather than serve it (names as --http-restricted-api accepts them):
# tritonfleet puts them behind the admin key, and the policy pack checks they stay there.
MODEL_CONTROL_APIS = ("model-repository", "model-config", "shared-memory", "trace", "logging")
INFERENCE_APIS = ("inference",)


@dataclass(frozen=True)
class EgressRule:
    """An endpoint Triton pods must reach besides DNS (the object store, an identity or metadata endpoint)."""

    cidr: str
    port: int
    protocol: str = "TCP"


PER_REQUEST, PER_CONNECTION = "per request", "per connection"

# Exposure modes, what `access.exposure` and `access.loadBalancer` select together; facts and chart values are keyed by
# them. `internal` is the internal network (L4) load balancer, `internal-application` the internal Application (L7)
# load balancer; `public` is always an Application load balancer.
CLUSTER, INTERNAL, INTERNAL_APPLICATION, PUBLIC = "cluster", "internal", "internal-application", "public"
MODES = (CLUSTER, INTERNAL, INTERNAL_APPLICATION, PUBLIC)
NETWORK, APPLICATION = "network", "application"  # access.loadBalancer


def exposure_mode(exposure: str, load_balancer: str | None) -> str:
    """The mode of an exposure and its load balancer kind (None: the exposure's default)."""
    return INTERNAL_APPLICATION if exposure == INTERNAL and load_balancer == APPLICATION else exposure


def mode_label(mode: str) -> str:
    """A mode as a user writes it in `access` (docs tables)."""
    return "`internal`, `loadBalancer: application`" if mode == INTERNAL_APPLICATION else f"`{mode}`"


@dataclass(frozen=True)
class GrpcBalancing:
    """How an exposure mode's cloud load balancer spreads gRPC calls: per request (an L7 proxy ends HTTP/2 and picks a
    pod for each call) or per connection (L4: every call of a client's long-lived channel goes to one pod)."""

    load_balancer: str
    balances: str  # PER_REQUEST or PER_CONNECTION
    source: str  # the cloud's documentation, with the date it was read


@dataclass(frozen=True)
class ExposureFacts:
    # Service annotations that make a LoadBalancer Service internal to the cloud network (mode `internal`).
    internal_service_annotations: dict[str, str] = field(default_factory=dict)
    # Per mode served through an Ingress (an Application load balancer): the class of the cloud's controller, and the
    # annotations of every Ingress of that mode.
    ingress_classes: dict[str, str] = field(default_factory=dict)
    ingress_annotations: dict[str, dict[str, str]] = field(default_factory=dict)
    # The annotation that carries the class for a controller that reads it there and ignores spec.ingressClassName
    # (GKE); "" where spec.ingressClassName names the class.
    ingress_class_annotation: str = ""
    # True when the controller sets the backend protocol per Ingress: REST and gRPC then get one Ingress each
    # (joined into one load balancer by `ingress_group_annotation`); False: one Ingress routes both by path.
    ingress_per_protocol: bool = False
    ingress_group_annotation: str = ""
    http_ingress_annotations: dict[str, str] = field(default_factory=dict)
    grpc_ingress_annotations: dict[str, str] = field(default_factory=dict)
    # Service port appProtocol of Triton's gRPC port (tells a controller to speak HTTP/2 to the pod).
    grpc_app_protocol: str = "grpc"
    # Per Application mode whose Ingress cannot carry Triton's cleartext gRPC (GKE): the Gateway API GatewayClass of
    # the same kind of load balancer. Unless access.loadBalancerGrpc is false, that mode gets a Gateway and an HTTPRoute
    # (REST to 8000, gRPC to 8001 over cleartext HTTP/2, `grpc_app_protocol`) instead of the Ingress.
    gateway_classes: dict[str, str] = field(default_factory=dict)
    # TLS sources (config names) the Gateway's listener takes as a TLS option, and that option's key.
    gateway_tls_options: dict[str, str] = field(default_factory=dict)
    # The controller's health-check policy for the Gateway's backends (apiVersion, kind, and the policy's `default`);
    # the chart points it at Triton's Service. Empty: the controller's default health check.
    gateway_health_check: dict[str, Any] = field(default_factory=dict)
    # TLS sources (config names, camelCase) that the controller takes as an Ingress annotation, and that annotation.
    certificate_annotations: dict[str, str] = field(default_factory=dict)
    # Where the load balancer's data path and health checks come from as seen by the pod (NetworkPolicy ipBlocks), per
    # exposure mode. Never a range that holds pod addresses: an ipBlock over pod IPs would admit every pod.
    load_balancer_sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Exposure modes whose load balancer hands the pod the client's own address (a passthrough load balancer with
    # externalTrafficPolicy Local): there the NetworkPolicy admits the client networks (clientCidrs) too.
    keeps_client_address: frozenset[str] = frozenset()
    # The Ingress annotation that limits the load balancer to client networks ("" where the cloud has none).
    ingress_source_ranges_annotation: str = ""
    # Every endpoint Triton's pods may open besides cluster DNS: the object store and the identity endpoints (HTTPS),
    # node-local metadata servers. Nothing else, and never the whole internet (tests/test_access_connectivity.py).
    egress: tuple[EgressRule, ...] = ()
    # Per mode with a cloud load balancer (internal, internal-application, public): how it balances gRPC
    # (docs/serving.md).
    grpc_balancing: dict[str, GrpcBalancing] = field(default_factory=dict)
    # Per mode whose load balancer splits a canary's traffic by weight: the Argo Rollouts traffic router that drives
    # it (the cloud's ROLLOUT_TRAFFIC_ROUTERS fact); other modes run a replica-ratio canary.
    rollout_traffic_routers: dict[str, str] = field(default_factory=dict)


def grpc_through_load_balancer(access: Access) -> bool:
    """Whether the deployment's load balancer, if any, carries gRPC: every one does unless an Application load balancer
    is set to REST only (loadBalancerGrpc false). Its sources then reach the HTTP port alone."""
    return not (access.mode in (PUBLIC, INTERNAL_APPLICATION) and access.load_balancer_grpc is False)


def uses_gateway(access: Access, facts: ExposureFacts) -> bool:
    """Whether this deployment's Application load balancer comes from a Gateway API Gateway rather than an Ingress:
    where the cloud's Ingress cannot carry Triton's cleartext gRPC and the deployment routes gRPC through it."""
    return access.mode in facts.gateway_classes and grpc_through_load_balancer(access)


ANYWHERE = "0.0.0.0/0"


@dataclass(frozen=True)
class ControlPlaneAccess:
    """Who reaches the Kubernetes API server: always the cluster's own network; publicly only from `public_cidrs`."""

    public_cidrs: tuple[str, ...]

    @property
    def private_only(self) -> bool:
        return not self.public_cidrs

    @property
    def anywhere(self) -> bool:
        return ANYWHERE in self.public_cidrs


def control_plane_access(cidrs: list[str] | None, environment: str) -> ControlPlaneAccess:
    """`cluster.controlPlaneCidrs`: [] private only; CIDRs, public from those only. Unset: private only in prod (run
    `pulumi up` from inside the network), anywhere elsewhere (a dev cluster reachable from a laptop)."""
    if cidrs is None:
        cidrs = [] if environment == "prod" else [ANYWHERE]
    return ControlPlaneAccess(tuple(dict.fromkeys(cidrs)))


# Where `pulumi up` runs from (cluster.deployFrom): it must reach the API endpoint the stack configures, or every Helm
# release and Kubernetes object times out after the cloud resources exist (docs/access.md, "Where a stack is deployed
# from"). hosted-ci: hosted runners (GitHub's), no fixed address; public-cidrs: the internet from known addresses
# (cluster.deployerCidrs: an office, a VPN egress, a runner with a static IP); private-network: a runner inside the
# cluster's network or one connected to it (VPN, peering, Direct Connect / Interconnect) at deployerCidrs.
HOSTED_CI, PUBLIC_CIDRS, PRIVATE_NETWORK = "hosted-ci", "public-cidrs", "private-network"  # schema: Cluster.deploy_from
DEPLOY_SOURCE_TEXT = {
    HOSTED_CI: "hosted CI runners (no fixed address)",
    PUBLIC_CIDRS: "the internet from",
    PRIVATE_NETWORK: "inside the cluster's network, from",
}


@dataclass(frozen=True)
class Deployer:
    """Where the stack is deployed from: `cluster.deployFrom` and `cluster.deployerCidrs`."""

    source: str
    cidrs: tuple[str, ...] = ()

    def describe(self) -> str:
        text = DEPLOY_SOURCE_TEXT[self.source]
        return text if self.source == HOSTED_CI else f"{text} {', '.join(self.cidrs)}"


@dataclass(frozen=True)
class DeployPath:
    """How the deployer reaches the API endpoint the stack configures, as the cloud decides it (plan and rules)."""

    deployer: Deployer
    endpoint: str  # the endpoint the Kubernetes provider uses, in words
    reachable: bool
    why: str = ""  # when not reachable: what stops it and the ways out
    fixes: tuple[tuple[str, object], ...] = ()  # when not reachable: config key -> value, the likeliest way out

    def document(self) -> dict[str, object]:
        return {
            "deployFrom": self.deployer.source,
            "deployerCidrs": list(self.deployer.cidrs),
            "deployer": self.deployer.describe(),
            "endpoint": self.endpoint,
            "reachable": self.reachable,
            **({"why": self.why} if self.why else {}),
        }


def uncovered(cidrs: tuple[str, ...], allowed: tuple[str, ...]) -> list[str]:
    """The CIDRs of `cidrs` that no network of `allowed` contains (malformed ones are the config rules' business)."""
    networks = [ipaddress.IPv4Network(a, strict=False) for a in allowed if _is_network(a)]
    return [
        c for c in cidrs if _is_network(c) and not any(ipaddress.IPv4Network(c, strict=False).subnet_of(n) for n in networks)
    ]


def _is_network(text: str) -> bool:
    try:
        ipaddress.IPv4Network(text, strict=False)
    except ValueError:
        return False
    return True
