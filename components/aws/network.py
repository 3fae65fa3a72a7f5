"""The network: a new VPC with private subnets behind NAT in every zone, or the private subnets of an existing VPC.

A new VPC gets an S3 gateway endpoint on its private route tables, so model pulls from S3 (same region) bypass NAT and
its per-GB processing charge (the endpoint itself is free). An existing VPC is left as it is, apart from the internal
load-balancer tag on its private subnets when the AWS Load Balancer Controller needs it; whether it has an S3 endpoint
cannot be known offline, so the plan prices NAT processing per GB for it (tritonfleet/clouds/aws/plan_notes.py) and
`tritonfleet preflight` asks EC2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.aws.load_balancer_controller import INTERNAL_SUBNET_TAG, PUBLIC_SUBNET_TAG
from tritonfleet.clouds.aws.facts import (
    AL2023_REPO_BUCKETS,
    ECR_LAYER_BUCKET,
    KARPENTER_DISCOVERY_TAG,
    MODEL_READ_ACTIONS,
)
from tritonfleet.clouds.aws.layout import VPC_CIDR, subnet_layout


def s3_gateway_service(region: str) -> str:
    """The S3 gateway endpoint's service name in a region (the commercial partition's form)."""
    return f"com.amazonaws.{region}.s3"


def s3_endpoint_policy(region: str, model_buckets: list[str]) -> str:
    """The S3 gateway endpoint's policy: what leaves the private subnets through it is Triton reading the stack's
    model buckets, and nodes pulling ECR image layers and AL2023 packages (facts.ECR_LAYER_BUCKET). Anything else
    (another bucket, any write) is refused at the endpoint, so a compromised pod cannot copy data out to a bucket of
    its choosing through it; workloads that need other buckets need them added here (docs/aws.md)."""
    models = [f"arn:aws:s3:::{name}" for name in model_buckets]
    node_buckets = [ECR_LAYER_BUCKET.format(region=region), AL2023_REPO_BUCKETS.format(region=region)]
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ReadModelBuckets",
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": list(MODEL_READ_ACTIONS),
                    "Resource": [*models, *(f"{arn}/*" for arn in models)],
                },
                {
                    "Sid": "NodeImagesAndPackages",
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "s3:GetObject",
                    "Resource": [f"arn:aws:s3:::{bucket}/*" for bucket in node_buckets],
                },
            ],
        }
    )


@dataclass(frozen=True)
class NetworkArgs:
    """The slice of the stack config the network is built from."""

    vpc_name: str
    """The VPC's Name tag (the cluster's name, also the karpenter.sh/discovery tag of the private subnets)."""
    region: str
    """The AWS region (the S3 gateway endpoint's service name)."""
    zones: list[str]
    """Availability zones: one private and one public subnet each."""
    nat_zones: list[str]
    """Zones with a NAT gateway (`layout.nat_zones`); private subnets elsewhere route through the first."""
    protected: bool = False
    """Protect the VPC (deleting it takes the cluster with it)."""
    existing_vpc_id: str | None = None
    """Use this VPC instead of creating one; then `existing_private_subnets` is the whole network."""
    existing_private_subnets: dict[str, str] = field(default_factory=dict)
    """zone -> subnet id of the existing VPC's private subnets."""
    tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags, on every resource."""
    model_buckets: list[str] = field(default_factory=list)
    """The model buckets' names: the only buckets the S3 gateway endpoint serves besides the nodes' own."""


class Network(pulumi.ComponentResource):
    """Hands up `private_subnets`: zone -> subnet id, where every node and the control plane's interfaces live."""

    vpc_id: pulumi.Input[str]
    """The VPC's id (the existing one's, or the new one's)."""
    private_subnets: dict[str, pulumi.Input[str]]
    """zone -> private subnet id."""
    public_subnets: dict[str, pulumi.Input[str]]
    """zone -> public (load balancer) subnet id; empty for an existing VPC."""

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        discovery = {KARPENTER_DISCOVERY_TAG: args.vpc_name}
        if args.existing_vpc_id:
            self.vpc_id = args.existing_vpc_id
            self.private_subnets = dict(args.existing_private_subnets)
            self.public_subnets = {}
            # Karpenter's EC2NodeClasses select the nodes' subnets by tag: tag the existing ones (only this key).
            for zone, subnet_id in self.private_subnets.items():
                aws.ec2.Tag(
                    f"{name}-private-{zone}-discovery",
                    resource_id=subnet_id,
                    key=KARPENTER_DISCOVERY_TAG,
                    value=args.vpc_name,
                    opts=child,
                )
            self.register_outputs({"vpc_id": self.vpc_id, "private_subnets": self.private_subnets})
            return

        tags = args.tags
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=VPC_CIDR,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={**tags, "Name": args.vpc_name},
            # Like the GKE network: deleting it takes the cluster with it, so it is protected where the stack is.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=args.protected)),
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
        layout = subnet_layout(args.zones)
        public_subnets = {}
        for plan in layout:
            subnet = aws.ec2.Subnet(
                f"{name}-public-{plan.zone}",
                vpc_id=vpc.id,
                availability_zone=plan.zone,
                cidr_block=plan.public_cidr,
                # Load balancers, internal ones included, live here, apart from the nodes and so from every pod
                # address: Triton's NetworkPolicies admit these subnets as the load balancers' source.
                tags={**tags, **PUBLIC_SUBNET_TAG, **INTERNAL_SUBNET_TAG},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{plan.zone}", subnet_id=subnet.id, route_table_id=public_routes.id, opts=child
            )
            public_subnets[plan.zone] = subnet
        self.public_subnets = {zone: subnet.id for zone, subnet in public_subnets.items()}

        nats = {}
        for zone in args.nat_zones:
            address = aws.ec2.Eip(f"{name}-nat-{zone}", domain="vpc", tags=tags, opts=child)
            nats[zone] = aws.ec2.NatGateway(
                f"{name}-nat-{zone}",
                allocation_id=address.id,
                subnet_id=public_subnets[zone].id,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway]),
            )

        self.private_subnets = {}
        private_route_tables = []
        for plan in layout:
            nat = nats.get(plan.zone) or next(iter(nats.values()))
            routes = aws.ec2.RouteTable(
                f"{name}-private-{plan.zone}",
                vpc_id=vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags=tags,
                opts=child,
            )
            private_route_tables.append(routes.id)
            subnet = aws.ec2.Subnet(
                f"{name}-private-{plan.zone}",
                vpc_id=vpc.id,
                availability_zone=plan.zone,
                cidr_block=plan.private_cidr,
                # Karpenter's EC2NodeClasses launch GPU nodes into the subnets carrying this tag.
                tags={**tags, **discovery},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{plan.zone}", subnet_id=subnet.id, route_table_id=routes.id, opts=child
            )
            self.private_subnets[plan.zone] = subnet.id
        aws.ec2.VpcEndpoint(
            f"{name}-s3",
            vpc_id=vpc.id,
            service_name=s3_gateway_service(args.region),
            vpc_endpoint_type="Gateway",
            route_table_ids=private_route_tables,
            policy=s3_endpoint_policy(args.region, args.model_buckets),
            tags=tags,
            opts=child,
        )
        self.register_outputs({"vpc_id": vpc.id, "private_subnets": self.private_subnets})
