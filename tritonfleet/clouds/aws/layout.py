"""Plain decisions for the AWS floor: subnets, the system node group. No Pulumi here; tested as data.
GPU capacity (Karpenter NodePools and EC2NodeClasses) is decided in node_pools.py.

The components in components/aws/ turn these plans into resources, so every size, name and label is decided once.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from tritonfleet.clouds.aws.facts import GPU_OPERATOR_PROFILES as PROFILES
from tritonfleet.clouds.aws.zones import aws_zones
from tritonfleet.core import pins
from tritonfleet.core.config import StackConfig

VPC_CIDR = "10.0.0.0/16"
SYSTEM_AMI_TYPE = {"al2023": "AL2023_x86_64_STANDARD", "bottlerocket": "BOTTLEROCKET_x86_64"}
# The volume that holds container images: AL2023 has one root volume; Bottlerocket keeps images on its data volume.
IMAGE_VOLUME_DEVICE = {"al2023": "/dev/xvda", "bottlerocket": "/dev/xvdb"}
DEFAULT_SYSTEM_INSTANCE_TYPE = "m6i.xlarge"
SYSTEM_DISK_GI = 100  # each system node's gp3 root volume (the plan's bill prices it)
SYSTEM_ROLE_LABEL = {"tritonfleet.io/role": "system"}
CONTROL_PLANE_LOGS = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
# Markers in node group names that no pool name can contain ('_' is not allowed in pool names), so the
# priority expander's regexes are mutually exclusive (kubernetes/autoscaler#4098).
GROUP_MARKER = {"on-demand": "_on-demand", "spot": "_spot", "capacity-block": "_capacity-block", "system": "_system"}


@dataclass(frozen=True)
class SubnetPlan:
    zone: str
    private_cidr: str
    public_cidr: str


def subnet_layout(zones: list[str]) -> list[SubnetPlan]:
    """One /19 private subnet per zone (8k pod IPs with the VPC CNI) and one /24 public subnet for NAT and load balancers."""
    vpc = ipaddress.ip_network(VPC_CIDR)
    private = list(vpc.subnets(new_prefix=19))  # 10.0.0.0/19 ... 10.0.224.0/19
    public = list(private[-1].subnets(new_prefix=24))  # carved from the last /19, never used as a private subnet
    if len(zones) > len(private) - 1:
        raise ValueError(f"at most {len(private) - 1} zones fit in {VPC_CIDR}")
    return [SubnetPlan(zone, str(private[i]), str(public[i])) for i, zone in enumerate(zones)]


def load_balancer_cidrs(config: StackConfig) -> tuple[str, ...]:
    """The subnets the load balancers live in (components/aws/network.py tags them for both schemes): the public /24s of the VPC
    this stack creates. They hold no node, so no pod address: Triton's NetworkPolicies may admit them."""
    if config.cluster.existing_vpc_id:
        return tuple(config.cluster.existing_load_balancer_cidrs)
    return tuple(plan.public_cidr for plan in subnet_layout(aws_zones(config.region, config.cluster)))


def nat_zones(config: StackConfig) -> list[str]:
    """One NAT gateway per zone when the stack is protected (a zone outage keeps egress), else one shared NAT."""
    zones = aws_zones(config.region, config.cluster)
    return zones if config.protected else zones[:1]


def ami_release_version(config: StackConfig) -> str:
    release = config.cluster.ami_release_version or pins.eks_ami_release(
        config.cluster.eks_gpu_node_image, config.cluster.kubernetes_version
    )
    assert release is not None, "validated configs always resolve"
    return release




def gpu_operator_values(image: str) -> dict:
    """The GPU Operator profile of the AWS node image (drivers and toolkit come with both NVIDIA AMIs;
    Bottlerocket also runs its own device plugin)."""
    return PROFILES["eks-bottlerocket-nvidia" if image == "bottlerocket" else "eks-al2023-nvidia"]


# EKS clusters created at Kubernetes 1.30 or later have no default StorageClass, so a claim that names none (the
# Prometheus volume when monitoring.storageClass is unset) stays Pending. The AWS floor provides this one.
DEFAULT_STORAGE_CLASS = "gp3"


def default_storage_class() -> dict:
    """The cluster's default StorageClass: encrypted gp3 from the EBS CSI driver add-on, bound where the pod lands."""
    return {
        "metadata": {
            "name": DEFAULT_STORAGE_CLASS,
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "ebs.csi.aws.com",
        "parameters": {"type": "gp3", "encrypted": "true"},
        "volume_binding_mode": "WaitForFirstConsumer",
        "allow_volume_expansion": True,
    }


def log_retention_days(config: StackConfig) -> int:
    return 90 if config.environment == "prod" else 30


def system_node_range(count: int) -> tuple[int, int]:
    """The system node group's (minSize, maxSize): the configured count, with room to double during upgrades and
    bursts of system pods."""
    return count, 2 * count


def system_instance_type(config: StackConfig) -> str:
    return config.cluster.system_nodes.instance_type or DEFAULT_SYSTEM_INSTANCE_TYPE
