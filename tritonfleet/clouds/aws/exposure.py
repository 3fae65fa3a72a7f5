"""How Triton is exposed on EKS, as cloud-neutral ExposureFacts (plain data, no Pulumi).

Every mode needs the AWS Load Balancer Controller in the cluster (docs/access.md): it provisions an internal NLB for
`internal`, an internal ALB for `internal-application` and an internet-facing ALB for `public`. The ALB terminates TLS
with an ACM certificate and speaks HTTP/2 to the pods on the gRPC Ingress (backend-protocol-version GRPC), so gRPC works
end to end; REST goes over HTTP/1.1. Both ALB modes are one Ingress shape; only the scheme differs.
"""

from __future__ import annotations

from typing import Any

from tritonfleet.clouds.aws.facts import (
    ALB_INTERNAL_SCHEME,
    ALB_PUBLIC_SCHEME,
    ALB_SCHEME_ANNOTATION,
    NLB_CONTROLLER_TYPE,
    NLB_SCHEME_ANNOTATION,
    NLB_TYPE_ANNOTATION,
    ROLLOUT_TRAFFIC_ROUTERS,
)
from tritonfleet.core.exposure import (
    INTERNAL,
    INTERNAL_APPLICATION,
    PER_CONNECTION,
    PER_REQUEST,
    PRIVATE_NETWORK,
    PUBLIC,
    ControlPlaneAccess,
    EgressRule,
    ExposureFacts,
    GrpcBalancing,
)

ALB = "alb.ingress.kubernetes.io"

ALB_GRPC_SOURCE = (
    "https://aws.amazon.com/about-aws/whats-new/2020/10/application-load-balancers-enable-grpc-workloads-end-to-end-"
    "http-2-support/ (read 2026-12-03): the ALB routes and balances gRPC calls; gRPC needs an HTTPS listener and a "
    "target group of protocol version gRPC"
)
GRPC_BALANCING = {
    INTERNAL: GrpcBalancing(
        "internal NLB (target type ip)",
        PER_CONNECTION,
        "https://aws.amazon.com/elasticloadbalancing/network-load-balancer/ (read 2026-12-03): an NLB works at the "
        "connection level (layer 4) and routes connections to targets",
    ),
    INTERNAL_APPLICATION: GrpcBalancing("internal ALB, HTTPS listener, target group protocol version GRPC", PER_REQUEST, ALB_GRPC_SOURCE),
    PUBLIC: GrpcBalancing("ALB, HTTPS listener, target group protocol version GRPC", PER_REQUEST, ALB_GRPC_SOURCE),
}
# What the offline plan answers (the access matrix, components/k8s/access_matrix.py, and docs/access.md read it): the
# public /24s of the VPC tritonfleet creates, in two zones (layout.subnet_layout), and the region's S3 prefix list
# as tritonfleet/plan/fake_state.py answers it (one of us-east-1's ranges).
PLANNED_LOAD_BALANCER_CIDRS = ("10.0.224.0/24", "10.0.225.0/24")
PLANNED_S3_CIDRS = ("52.216.0.0/15",)
# Every ALB Ingress, whatever its scheme.
ALB_ANNOTATIONS = {
    f"{ALB}/target-type": "ip",
    f"{ALB}/listen-ports": '[{"HTTPS": 443}]',
    f"{ALB}/ssl-policy": "ELBSecurityPolicy-TLS13-1-2-2021-06",
}


def aws_egress(load_balancer_cidrs: tuple[str, ...], s3_cidrs: tuple[str, ...]) -> tuple[EgressRule, ...]:
    """Where Triton's pods open connections besides DNS: HTTPS to S3 (the region's prefix list) for the model
    repository, and HTTPS to the load balancer subnets, where STS's interface endpoint answers the IRSA token exchange
    (components/aws/sts_endpoint.py; an existing VPC brings its own there). IRSA needs no node-local endpoint; EKS Pod Identity's
    agent (169.254.170.23:80) is not used: Triton's aws-sdk-cpp predates it (components/aws/identity.py)."""
    return tuple(EgressRule(cidr, 443) for cidr in dict.fromkeys((*s3_cidrs, *load_balancer_cidrs)))


def aws_exposure_facts(load_balancer_cidrs: tuple[str, ...], s3_cidrs: tuple[str, ...]) -> ExposureFacts:
    """Load balancers in target-type ip send from their own addresses (client IP preservation is off by default for
    NLB IP targets over TCP; the ALB is a proxy), and their health checks come from there too. Those addresses lie in
    the load balancers' subnets, `load_balancer_cidrs`, which hold no node and so no pod: never the VPC CIDR, where
    the VPC CNI gives pods their addresses. Client networks are limited at the load balancer (its security group from
    loadBalancerSourceRanges, the ALB's inbound-cidrs), since the pod sees only the load balancer. Internal ALBs live in
    those subnets too (tagged kubernetes.io/role/internal-elb as well as role/elb), so every mode has the same sources."""
    return ExposureFacts(
        internal_service_annotations={
            NLB_TYPE_ANNOTATION: NLB_CONTROLLER_TYPE,
            "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
            NLB_SCHEME_ANNOTATION: ALB_INTERNAL_SCHEME,
        },
        ingress_classes={INTERNAL_APPLICATION: "alb", PUBLIC: "alb"},
        ingress_annotations={
            INTERNAL_APPLICATION: {ALB_SCHEME_ANNOTATION: ALB_INTERNAL_SCHEME, **ALB_ANNOTATIONS},
            PUBLIC: {ALB_SCHEME_ANNOTATION: ALB_PUBLIC_SCHEME, **ALB_ANNOTATIONS},
        },
        ingress_per_protocol=True,
        ingress_group_annotation=f"{ALB}/group.name",
        http_ingress_annotations={
            f"{ALB}/backend-protocol-version": "HTTP1",
            f"{ALB}/healthcheck-path": "/v2/health/ready",
        },
        # gRPC target groups health-check /AWS.ALB/healthcheck and accept gRPC code 12 by default: Triton answers that.
        grpc_ingress_annotations={f"{ALB}/backend-protocol-version": "GRPC"},
        certificate_annotations={"certificateArn": f"{ALB}/certificate-arn"},
        load_balancer_sources={mode: tuple(load_balancer_cidrs) for mode in (INTERNAL, INTERNAL_APPLICATION, PUBLIC)},
        ingress_source_ranges_annotation=f"{ALB}/inbound-cidrs",
        grpc_balancing=GRPC_BALANCING,
        rollout_traffic_routers=dict(ROLLOUT_TRAFFIC_ROUTERS),
        egress=aws_egress(load_balancer_cidrs, s3_cidrs),
    )


def eks_endpoint_access(access: ControlPlaneAccess) -> dict[str, Any]:
    """ClusterVpcConfig arguments: the private endpoint always (nodes and in-VPC runners), the public one only from
    the configured CIDRs (none: private only)."""
    return {
        "endpoint_private_access": True,
        "endpoint_public_access": not access.private_only,
        "public_access_cidrs": list(access.public_cidrs) or None,
    }


def api_ingress_cidrs(deploy_from: str, deployer_cidrs: list[str]) -> list[str]:
    """Who the cluster security group admits on 443 besides itself: a deployer inside the network (the private
    endpoint's interfaces carry that group, which admits only itself otherwise: facts.EKS_API_PORT)."""
    return list(dict.fromkeys(deployer_cidrs)) if deploy_from == PRIVATE_NETWORK else []
