"""How Triton is exposed on EKS, as cloud-neutral ExposureFacts (plain data, no Pulumi).

Both modes need the AWS Load Balancer Controller in the cluster (docs/access.md): it provisions an internal NLB for
`internal` and an ALB for `public`. The ALB terminates TLS with an ACM certificate and speaks HTTP/2 to the pods on
the gRPC Ingress (backend-protocol-version GRPC), so gRPC works end to end; REST goes over HTTP/1.1.
"""

from __future__ import annotations

from tritonfleet.core.exposure import ExposureFacts

ALB = "alb.ingress.kubernetes.io"


def aws_exposure_facts(vpc_cidr: str) -> ExposureFacts:
    """Load balancers in target-type ip send from their own addresses inside the VPC, so the VPC CIDR is the source."""
    return ExposureFacts(
        internal_service_annotations={
            "service.beta.kubernetes.io/aws-load-balancer-type": "external",
            "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
        },
        ingress_class="alb",
        ingress_annotations={
            f"{ALB}/scheme": "internet-facing",
            f"{ALB}/target-type": "ip",
            f"{ALB}/listen-ports": '[{"HTTPS": 443}]',
            f"{ALB}/ssl-policy": "ELBSecurityPolicy-TLS13-1-2-2021-06",
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
        load_balancer_sources={"internal": (vpc_cidr,), "public": (vpc_cidr,)},
    )
