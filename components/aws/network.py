"""The network: a new VPC with private subnets behind NAT in every zone, or the private subnets of an existing VPC."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.aws.layout import VPC_CIDR, nat_zones, subnet_layout
from tritonfleet.clouds.aws.zones import aws_zones
from tritonfleet.core.config import StackConfig


class AwsNetwork(pulumi.ComponentResource):
    """Hands up `private_subnets`: zone -> subnet id, where every node and the control plane's interfaces live."""

    def __init__(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cluster = config.cluster
        self.private_subnets: dict[str, pulumi.Input[str]]
        if cluster.existing_vpc_id:
            self.vpc_id: pulumi.Input[str] = cluster.existing_vpc_id
            self.private_subnets = dict(cluster.existing_private_subnets)
            self.register_outputs({"vpc_id": self.vpc_id})
            return

        tags = config.tags
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=VPC_CIDR,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={**tags, "Name": config.cluster_name},
            # Like the GKE network: deleting it takes the cluster with it, so it is protected where the stack is.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=config.protected)),
        )
        self.vpc_id = vpc.id
        gateway = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=tags, opts=child)
        public_routes = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=gateway.id)],
            tags=tags,
            opts=child,
        )
        layout = subnet_layout(aws_zones(config.region, cluster))
        public_subnets = {}
        for plan in layout:
            subnet = aws.ec2.Subnet(
                f"{name}-public-{plan.zone}",
                vpc_id=vpc.id,
                availability_zone=plan.zone,
                cidr_block=plan.public_cidr,
                tags={**tags, "kubernetes.io/role/elb": "1"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{plan.zone}", subnet_id=subnet.id, route_table_id=public_routes.id, opts=child
            )
            public_subnets[plan.zone] = subnet

        nats = {}
        for zone in nat_zones(config):
            address = aws.ec2.Eip(f"{name}-nat-{zone}", domain="vpc", tags=tags, opts=child)
            nats[zone] = aws.ec2.NatGateway(
                f"{name}-nat-{zone}",
                allocation_id=address.id,
                subnet_id=public_subnets[zone].id,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway]),
            )

        self.private_subnets = {}
        for plan in layout:
            nat = nats.get(plan.zone) or next(iter(nats.values()))
            routes = aws.ec2.RouteTable(
                f"{name}-private-{plan.zone}",
                vpc_id=vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags=tags,
                opts=child,
            )
            subnet = aws.ec2.Subnet(
                f"{name}-private-{plan.zone}",
                vpc_id=vpc.id,
                availability_zone=plan.zone,
                cidr_block=plan.private_cidr,
                tags={**tags, "kubernetes.io/role/internal-elb": "1"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{plan.zone}", subnet_id=subnet.id, route_table_id=routes.id, opts=child
            )
            self.private_subnets[plan.zone] = subnet.id
        self.register_outputs({"vpc_id": vpc.id})
