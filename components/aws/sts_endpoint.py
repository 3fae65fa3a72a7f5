"""STS inside the VPC: an interface endpoint with private DNS in the load balancer subnets.

Triton's pods exchange their IRSA token at STS (sts.<region>.amazonaws.com, the regional endpoint the IRSA webhook
selects with AWS_STS_REGIONAL_ENDPOINTS=regional). STS publishes no address range of its own, so without this the
NetworkPolicy would have to allow HTTPS to the whole internet. With private DNS the name resolves, inside the VPC, to
the endpoint's interfaces, which live in the load balancer subnets: those hold no node and so no pod, and Triton's
egress allows HTTPS to them (tritonfleet/clouds/aws/exposure.py). Interface endpoints: https://docs.aws.amazon.com/vpc/latest/
privatelink/create-interface-endpoint.html and the STS endpoints in https://docs.aws.amazon.com/general/latest/gr/
sts.html, read 2026-12-05. Hourly and per-GB charges apply per zone (https://aws.amazon.com/privatelink/pricing/).
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws


def sts_service_name(region: str) -> str:
    """The STS interface endpoint's service name in a region (the commercial partition's form)."""
    return f"com.amazonaws.{region}.sts"


class StsEndpoint(pulumi.ComponentResource):
    """The interface endpoint and its security group (HTTPS in from the VPC only)."""

    def __init__(
        self,
        name: str,
        vpc_id: pulumi.Input[str],
        vpc_cidr: str,
        subnet_ids: list[pulumi.Input[str]],
        region: str,
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:aws:StsEndpoint", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-https",
            vpc_id=vpc_id,
            description="HTTPS from the VPC to the STS interface endpoint",
            ingress=[aws.ec2.SecurityGroupIngressArgs(protocol="tcp", from_port=443, to_port=443, cidr_blocks=[vpc_cidr])],
            tags=tags,
            opts=child,
        )
        self.endpoint = aws.ec2.VpcEndpoint(
            name,
            vpc_id=vpc_id,
            service_name=sts_service_name(region),
            vpc_endpoint_type="Interface",
            subnet_ids=subnet_ids,
            security_group_ids=[group.id],
            private_dns_enabled=True,
            tags=tags,
            opts=child,
        )
        self.register_outputs({"id": self.endpoint.id})
