"""The AWS floor: turns a StackConfig into an EKS cluster, GPU node groups and S3 buckets, and hands up ClusterFacts."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.exposure import aws_exposure_facts
from components.facts import ClusterFacts
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import EKS_CAPACITY_TYPE, EKS_TAINT_EFFECT, pool_node_labels, resource_name
from tritonfleet.core.cost import split_capacity
from tritonfleet.core.gpu_operator import PROFILES as GPU_OPERATOR_PROFILES
from tritonfleet.core.scheduling import pool_facts

VPC_CIDR = "10.0.0.0/16"


def _assume_role_policy(service: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
        }
    )


def kubeconfig(name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig that authenticates with `aws eks get-token` (no static credentials)."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [
                {
                    "name": name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": ["eks", "get-token", "--cluster-name", name, "--region", region],
                        }
                    },
                }
            ],
        }
    )


class AwsCloud(pulumi.ComponentResource):
    def __init__(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:AwsCloud", name, None, opts)
        provider = aws.Provider(f"{name}-aws", region=config.region, opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        protected = pulumi.ResourceOptions(parent=self, provider=provider, protect=config.protected)
        stack = config.stack
        zones = config.cluster.zones or [f"{config.region}a", f"{config.region}b"]

        vpc = aws.ec2.Vpc(f"{name}-vpc", cidr_block=VPC_CIDR, enable_dns_hostnames=True, opts=child)
        subnets = [
            aws.ec2.Subnet(
                f"{name}-private-{zone}",
                vpc_id=vpc.id,
                availability_zone=zone,
                cidr_block=f"10.0.{i * 32}.0/19",
                opts=child,
            )
            for i, zone in enumerate(zones)
        ]
        subnet_ids = [s.id for s in subnets]

        cluster_role = aws.iam.Role(f"{name}-cluster-role", assume_role_policy=_assume_role_policy("eks.amazonaws.com"), opts=child)
        aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=cluster_role.name,
            policy_arn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
            opts=child,
        )
        cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=config.cluster_name,
            version=config.cluster.kubernetes_version,
            role_arn=cluster_role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(subnet_ids=subnet_ids),
            tags=config.tags,
            opts=protected,
        )

        node_role = aws.iam.Role(f"{name}-node-role", assume_role_policy=_assume_role_policy("ec2.amazonaws.com"), opts=child)
        for policy in ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly"):
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{policy}",
                role=node_role.name,
                policy_arn=f"arn:aws:iam::aws:policy/{policy}",
                opts=child,
            )

        pools = {}
        for pool in config.enabled_pools:
            facts = pool_facts(config, pool)
            pools[pool.name] = facts
            itype = config.instance_type(pool)
            for option, nodes in split_capacity(pool).purchase.items():
                aws.eks.NodeGroup(
                    f"{name}-{pool.name}-{option}",
                    cluster_name=cluster.name,
                    node_role_arn=node_role.arn,
                    subnet_ids=subnet_ids,
                    ami_type="AL2023_x86_64_NVIDIA",
                    capacity_type=EKS_CAPACITY_TYPE[option],
                    instance_types=[itype.name],
                    scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                        min_size=nodes.min, max_size=nodes.max, desired_size=nodes.min
                    ),
                    labels=pool_node_labels(pool.name, pool.gpu, option),
                    taints=[
                        aws.eks.NodeGroupTaintArgs(
                            key=facts.taint["key"], value=facts.taint["value"], effect=EKS_TAINT_EFFECT[facts.taint["effect"]]
                        )
                    ],
                    tags=config.tags,
                    opts=pulumi.ResourceOptions.merge(protected, pulumi.ResourceOptions(ignore_changes=["scalingConfig.desiredSize"])),
                )

        repositories = {}
        for bucket in config.model_buckets:
            s3 = aws.s3.Bucket(
                f"{name}-{bucket.name}",
                bucket=resource_name(stack, bucket.name),
                tags=config.tags,
                opts=protected,
            )
            repositories[bucket.name] = s3.bucket.apply(lambda b: f"s3://{b}")

        kubeconfig_text = pulumi.Output.all(cluster.name, cluster.endpoint, cluster.certificate_authority.data).apply(
            lambda args: kubeconfig(args[0], args[1], args[2], config.region)
        )
        k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig_text, opts=pulumi.ResourceOptions(parent=self))
        self.facts = ClusterFacts(
            provider=k8s_provider,
            kubeconfig=pulumi.Output.secret(kubeconfig_text),
            pools=pools,
            model_repositories=repositories,
            triton_env={"AWS_DEFAULT_REGION": config.region},
            exposure=aws_exposure_facts(VPC_CIDR),
            gpu_operator_values=GPU_OPERATOR_PROFILES["eks-al2023-nvidia"],
        )
        self.cluster_name = cluster.name
        self.register_outputs({"cluster_name": cluster.name})
