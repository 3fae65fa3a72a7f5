"""Plain decisions for the AWS floor: subnets, node groups. No Pulumi here; tested as data.

The components in this package turn these plans into resources, so every size, name and label is decided once.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from tritonfleet.clouds.aws.facts import EKS_CAPACITY_TYPE, EKS_TAINT_EFFECT
from tritonfleet.clouds.aws.facts import GPU_OPERATOR_PROFILES as PROFILES
from tritonfleet.clouds.aws.zones import aws_zones, pool_zones
from tritonfleet.core import pins
from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import gpu_taint, pool_node_labels
from tritonfleet.core.cost import split_capacity

VPC_CIDR = "10.0.0.0/16"
AMI_TYPE = {"al2023": "AL2023_x86_64_NVIDIA", "bottlerocket": "BOTTLEROCKET_x86_64_NVIDIA"}
SYSTEM_AMI_TYPE = {"al2023": "AL2023_x86_64_STANDARD", "bottlerocket": "BOTTLEROCKET_x86_64"}
# The volume that holds container images: AL2023 has one root volume; Bottlerocket keeps images on its data volume.
IMAGE_VOLUME_DEVICE = {"al2023": "/dev/xvda", "bottlerocket": "/dev/xvdb"}
DEFAULT_SYSTEM_INSTANCE_TYPE = "m6i.xlarge"
SYSTEM_ROLE_LABEL = {"tritonfleet.io/role": "system"}
# cluster-autoscaler's AWS provider treats nodes with this label as GPU nodes, so it waits for their GPUs to become
# allocatable instead of scaling up again while the device plugin starts (autoscaler PR #461, gpu-operator#708).
CA_GPU_LABEL = "k8s.amazonaws.com/accelerator"
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
    """The subnets the load balancers live in (network.py tags them for both schemes): the public /24s of the VPC
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


def spot_instance_types(config: StackConfig, pool: GpuPool) -> list[str]:
    """The pool's type first, then catalog types with the same GPU and GPU count, at least its vCPUs and memory,
    sold as spot, whose spot price is known and not above the pool type's on-demand price.

    Several types let the spot group draw from more capacity pools (price-capacity-optimized); the size floor
    keeps every node able to run what fits on the pool's type (cluster-autoscaler plans with the first type);
    the price ceiling means diversity never costs more than the on-demand node it replaces.
    """
    itype = config.instance_type(pool)
    on_demand = itype.price("on-demand")
    ceiling = on_demand.usd if on_demand else None

    def fits(other: InstanceType) -> bool:
        spot = other.price("spot")
        return (
            other.name != itype.name
            and other.gpu_count == itype.gpu_count
            and other.vcpu >= itype.vcpu
            and other.memory_gib >= itype.memory_gib
            and "spot" in other.purchase_options
            and spot is not None
            and ceiling is not None
            and spot.usd <= ceiling
        )

    others = sorted((t for t in load_catalog().types_for("aws", pool.gpu) if fits(t)), key=lambda t: (t.vcpu, t.name))
    return [itype.name, *(t.name for t in others)]


@dataclass(frozen=True)
class NodeGroupPlan:
    pool: str
    option: str  # on-demand, spot or capacity-block
    logical_name: str  # Pulumi name; the engine appends a random suffix, EKS puts it into the ASG name
    capacity_type: str
    instance_types: list[str]
    min_size: int
    max_size: int
    zones: list[str]
    labels: dict[str, str]
    taint: dict[str, str]  # EKS API spelling
    gpus_per_node: int
    autoscaler_tags: dict[str, str] = field(default_factory=dict)


def node_group_plans(config: StackConfig, pool: GpuPool, prefix: str) -> list[NodeGroupPlan]:
    """The managed node groups of one pool: sizes from the one capacity split, so their min/max add up to the pool's."""
    itype = config.instance_type(pool)
    taint = gpu_taint("aws")
    plans = []
    for option, nodes in split_capacity(pool).purchase.items():
        labels = {**pool_node_labels(pool.name, pool.gpu, option, pool.node_labels, pool.assumed_usd_per_hour), CA_GPU_LABEL: f"nvidia-{pool.gpu.lower()}"}
        plans.append(
            NodeGroupPlan(
                pool=pool.name,
                option=option,
                logical_name=f"{prefix}{GROUP_MARKER[option]}",
                capacity_type=EKS_CAPACITY_TYPE[option],
                instance_types=spot_instance_types(config, pool) if option == "spot" else [itype.name],
                min_size=nodes.min,
                max_size=nodes.max,
                zones=pool_zones(config, pool),
                labels=labels,
                taint={"key": taint["key"], "value": taint["value"], "effect": EKS_TAINT_EFFECT[taint["effect"]]},
                gpus_per_node=itype.gpu_count,
                autoscaler_tags=scale_from_zero_tags(labels, taint, itype.gpu_count),
            )
        )
    return plans


def scale_from_zero_tags(labels: dict[str, str], taint: dict[str, str], gpus: int) -> dict[str, str]:
    """ASG tags cluster-autoscaler reads to build a node template for a group with no nodes (scale from zero)."""
    prefix = "k8s.io/cluster-autoscaler/node-template"
    tags = {f"{prefix}/label/{key}": value for key, value in sorted(labels.items())}
    tags[f"{prefix}/taint/{taint['key']}"] = f"{taint['value']}:{taint['effect']}"
    tags[f"{prefix}/resources/nvidia.com/gpu"] = str(gpus)
    return tags


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


def system_instance_type(config: StackConfig) -> str:
    return config.cluster.system_nodes.instance_type or DEFAULT_SYSTEM_INSTANCE_TYPE
