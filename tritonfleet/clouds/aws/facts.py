"""AWS and EKS facts the program and the policy pack rely on, each with its source and the date it was read.

The neutral core speaks Kubernetes and tritonfleet terms (taint effect NoSchedule, purchase option on-demand); this
module maps them to the EKS API's spelling. Facts only a real account can confirm are marked VERIFY (README list).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

# Purchase option -> EKS managed node group capacityType (the program writes it, the budget policy reads it back).
# Source: EKS API CreateNodegroup capacityType, https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html
# (CDK CapacityType docs; EKS user guide @4d52b4d latest/ug/ml/capacity-blocks-mng.adoc, 2024-12-18).
EKS_CAPACITY_TYPE = {"on-demand": "ON_DEMAND", "spot": "SPOT", "capacity-block": "CAPACITY_BLOCK"}

# Kubernetes taint effect -> EKS API spelling. Source: EKS API Taint,
# https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html (doc excerpt read 2025-2026).
EKS_TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}

# The value of the GPU taint (key nvidia.com/gpu) on our GPU node groups. EKS puts no GPU taint on its own, so this is
# tritonfleet's choice, the common one in AWS GPU node pool examples (`nvidia.com/gpu=true:NoSchedule`; shared reference
# gpu-kubernetes-facts.md §2.3, 2026).
GPU_TAINT_VALUE = "true"

# Seconds between a spot interruption notice and the instance's stop: two minutes.
# Source: EKS user guide, https://github.com/awsdocs/amazon-eks-user-guide/blob/4d52b4d/latest/ug/nodes/managed-node-groups.adoc
# (2024-12-18).
SPOT_NOTICE_SECONDS = 120
# Tag limits of AWS resources: a key of 1-128 characters, a value of at most 256, letters (any language), digits,
# spaces and _ . : / = + - @, and no key starting with the reserved prefix aws:. Source: "Tag naming limits and
# requirements", https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html (read 2026-12-03).
TAG_LIMITS = {"key_max": 128, "value_max": 256, "pattern": r"^[\w\s.:/=+\-@]*$", "reserved_prefix": "aws:"}
# How a node was bought, as Karpenter labels every node it launches: spot, on-demand or reserved. A burst NodePool
# allows spot and on-demand, so its tritonfleet.io/capacity label says only what it prefers; this label says what the
# node is. Source: https://karpenter.sh/docs/concepts/scheduling/#well-known-labels (karpenter.sh/capacity-type,
# read 2026-12-03) and the pinned NodePool CRD (tests/upstream/karpenter-1.14.1).
NODE_CAPACITY_TYPE_LABEL: str | None = "karpenter.sh/capacity-type"

# The regions of the commercial AWS partition (`aws`; GovCloud and China are separate partitions tritonfleet does not
# target), for config checks before anything is created. Source: the `aws` partition's "regions" in botocore 1.44.8's
# botocore/data/endpoints.json (the table the AWS SDKs resolve endpoints from), read 2026-12-03; the region list page is
# https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html. VERIFY that EKS and the pool's GPU
# types are offered in a region before using it (`tritonfleet preflight` asks the account).
AWS_REGIONS: tuple[str, ...] = (
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
)

# How many availability zones each region offers an account, for config checks before anything is created. Regions not
# listed are not checked offline; `tritonfleet preflight` asks EC2 for the real zones of any region. Counts from the
# AWS "Regions and Zones" documentation, https://aws.amazon.com/about-aws/global-infrastructure/regions_az/, as of 2025
# (VERIFY when a region adds zones): some regions have more physical zones than a new account can use (us-west-1: 2 of 3, ap-northeast-1:
# 3 of 4); the usable count is given.
AWS_ZONE_COUNT: dict[str, int] = {
    "us-east-1": 6,
    "us-east-2": 3,
    "us-west-1": 2,
    "us-west-2": 4,
    "ca-central-1": 3,
    "eu-west-1": 3,
    "eu-west-2": 3,
    "eu-west-3": 3,
    "eu-central-1": 3,
    "eu-north-1": 3,
    "ap-northeast-1": 3,
    "ap-south-1": 3,
    "ap-southeast-1": 3,
    "ap-southeast-2": 3,
    "sa-east-1": 3,
}

# GPU Operator profiles per EKS node image: what the AWS adapter hands up in `ClusterFacts.gpu_operator_values`
# (format: tritonfleet/core/gpu_operator.py). Sources: https://github.com/awslabs/amazon-eks-ami @81fec2e
# templates/al2023/provisioners/install-nvidia-driver.sh (2026-07-23) and https://github.com/NVIDIA/gpu-operator/issues/686
# (2024-03-22: no driver containers for Amazon Linux); VERIFY on first deploy.
GPU_OPERATOR_PROFILES: dict[str, dict[str, Any]] = {
    # EKS AL2023 NVIDIA AMI: driver and container toolkit are on the AMI; the operator adds the device plugin,
    # GPU feature discovery and DCGM. NVIDIA ships no Amazon Linux driver container.
    "eks-al2023-nvidia": {"driver": {"enabled": False}, "toolkit": {"enabled": False}},
    # EKS Bottlerocket NVIDIA: the AMI also runs the device plugin; a second one would double-advertise GPUs.
    "eks-bottlerocket-nvidia": {"driver": {"enabled": False}, "toolkit": {"enabled": False}, "devicePlugin": {"enabled": False}},
}

# Kubernetes NetworkPolicy on EKS: the VPC CNI add-on's network-policy agent, off unless its configuration values turn
# it on; vpc-cni v1.14.0 is the first release with it. The agent needs a 5.10+ kernel with the BPF file system mounted,
# which the EKS AL2023 and Bottlerocket AMIs have. Source: https://docs.aws.amazon.com/eks/latest/userguide/
# cni-network-policy-configure.html and https://aws.github.io/amazon-vpc-cni-k8s/docs/network-policy-faq.html
# (read 2026-12-03). VERIFY: kubelet probes and load-balancer health checks pass with the policies on a live cluster.
VPC_CNI_ADDON = "vpc-cni"
# The add-on configuration values that turn the agent on. Source: https://docs.aws.amazon.com/eks/latest/userguide/
# cni-network-policy-configure.html, step 2 (read 2026-12-03).
VPC_CNI_NETWORK_POLICY_CONFIGURATION = {"enableNetworkPolicy": "true"}
# The first vpc-cni release with the network-policy agent. Source: https://aws.github.io/amazon-vpc-cni-k8s/docs/
# network-policy-faq.html ("VPC CNI release 1.14 or later is required", read 2026-12-03).
VPC_CNI_NETWORK_POLICY_MINIMUM = (1, 14, 0)

# The control plane reaches APIServices and webhooks on the nodes (prometheus-adapter: 6443) through the cluster
# security group EKS creates (eks-cluster-sg-<cluster>-<id>): it is on the control plane's ENIs and EKS attaches it to
# every managed node group's nodes unless their launch template names its own security groups; its inbound rule
# allows all traffic from itself. So our node groups' launch templates name no security groups (tested on the plan).
# Sources: https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html ("Default cluster security group":
# inbound all from self), EKS API VpcConfigResponse.clusterSecurityGroupId ("Managed node groups use this security
# group for control-plane-to-data-plane communication"), read 2026-12. VERIFY: kubectl get apiservice
# v1beta1.custom.metrics.k8s.io shows Available=True on the first EKS deploy. Test: tests/test_control_plane_paths.py.

@dataclass(frozen=True)
class EksVersion:
    """One Kubernetes minor version on EKS: when it came and when its standard and extended support end."""

    version: str
    released: date | None
    end_of_standard: date | None
    end_of_extended: date | None
    verify: bool = False  # a date is missing or comes only from a secondary source

    def in_standard_support(self, on: date) -> bool:
        return self.end_of_standard is None or on < self.end_of_standard

    def supported(self, on: date) -> bool:
        """Creatable and running with AWS support on `on`: in standard or extended support."""
        return self.end_of_extended is None or on < self.end_of_extended


@dataclass(frozen=True)
class VcpuQuota:
    """An EC2 vCPU quota (Service Quotas, service code ec2)."""

    code: str
    name: str
    verify: bool = False


# The EKS Kubernetes release calendar, one row per minor version, and where it was read (the plan cites it).
# Source: "Amazon EKS Kubernetes release calendar", https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html
# (awsdocs/amazon-eks-user-guide @0138560 latest/ug/versioning/kubernetes-versions.adoc for 1.29-1.34, read 2026-12-03);
# 1.35 from https://endoflife.date/amazon-eks and aws-samples "sample-apex-skills" cluster-lifecycle.md (calendar
# "last verified 2026-04-24"), both read 2026-12-03 (VERIFY against AWS's page). Standard support lasts 14 months from
# the EKS release, extended support 12 more; extended support is billed per cluster-hour on top of the standard fee and
# is on by default (upgradePolicy.supportType EXTENDED). After the end of extended support EKS upgrades the control
# plane itself, and no new cluster can be created at that version. None is a date we could not read (VERIFY): 1.36's.
# Its EKS release came after 1.35's (AL2023 AMIs for 1.36 exist from 1.36.2-20260625 on), so it stays in standard
# support at least as long as 1.35.
EKS_VERSIONS_SOURCE = "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html (read 2026-12-03)"
# (rows: the calendar above, https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html, 2026-12-03)
EKS_VERSIONS: dict[str, EksVersion] = {
    v.version: v
    for v in (
        EksVersion("1.29", date(2024, 1, 23), date(2025, 3, 23), date(2026, 3, 23)),
        EksVersion("1.30", date(2024, 5, 23), date(2025, 7, 23), date(2026, 7, 23)),
        EksVersion("1.31", date(2024, 9, 26), date(2025, 11, 26), date(2026, 11, 26)),
        EksVersion("1.32", date(2025, 1, 23), date(2026, 3, 23), date(2027, 3, 23)),
        EksVersion("1.33", date(2025, 5, 29), date(2026, 7, 29), date(2027, 7, 29)),
        EksVersion("1.34", date(2025, 10, 2), date(2026, 12, 2), date(2027, 12, 2)),
        EksVersion("1.35", date(2026, 1, 27), date(2027, 3, 27), date(2028, 3, 27), verify=True),
        EksVersion("1.36", None, None, None, verify=True),
    )
}
# Extended support price per cluster-hour, on top of the standard $0.10. Source: https://aws.amazon.com/eks/pricing/
# as quoted by docs.cloudzero.com "EKS clusters incurring extended support charges" (read 2026-12-03): $0.60 (VERIFY on
# the pricing page).
EKS_EXTENDED_SUPPORT_USD_PER_CLUSTER_HOUR = 0.60


def eks_version(version: str) -> EksVersion | None:
    return EKS_VERSIONS.get(version)


def supported_eks_versions(on: date) -> list[str]:
    """Versions EKS creates and supports on `on` (standard or extended), oldest first."""
    return [v.version for v in EKS_VERSIONS.values() if v.supported(on)]


def standard_eks_versions(on: date) -> list[str]:
    return [v.version for v in EKS_VERSIONS.values() if v.supported(on) and v.in_standard_support(on)]


def kubernetes_support(version: str, on: date) -> dict[str, Any]:
    """The plan's view of a cluster version on `on`: support phase and its end dates ("unknown" where unpublished)."""
    row = EKS_VERSIONS.get(version)
    if row is None:
        return {"kubernetesVersion": version, "support": "unknown", "source": EKS_VERSIONS_SOURCE}

    def shown(day: date | None) -> str:
        return day.isoformat() if day else "unknown (VERIFY)"

    phase = "standard" if row.in_standard_support(on) else "extended" if row.supported(on) else "unsupported"
    return {
        "kubernetesVersion": version,
        "support": phase,
        "endOfStandardSupport": shown(row.end_of_standard),
        "endOfExtendedSupport": shown(row.end_of_extended),
        "source": EKS_VERSIONS_SOURCE,
    }


# EC2 vCPU quotas (Service Quotas, service code ec2) per instance family and market. On-demand quotas group families
# by letter (every P family shares "Running On-Demand P instances"); spot quotas split P5 from P4/P3/P2.
# Source: "Amazon EC2 instance type quotas", https://docs.aws.amazon.com/ec2/latest/instancetypes/ec2-instance-quotas.html
# (its console links name each code; read 2026-12-03) and https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-spot-limits.html
# ("All P4, P3 and P2 Spot Instance Requests" and "All P5 Spot Instance Requests" are separate quotas). Which spot quota
# P6 (B200) draws on is not documented there and public tools disagree (VERIFY with `aws service-quotas
# list-service-quotas --service-code ec2`); the catalog sells p6-b200 only as capacity blocks, which these quotas do
# not count.
EC2_VCPU_QUOTAS: dict[str, dict[str, VcpuQuota]] = {
    **{
        family: {
            "on-demand": VcpuQuota("L-DB2E81BA", "Running On-Demand G and VT instances"),
            "spot": VcpuQuota("L-3819A6DF", "All G and VT Spot Instance Requests"),
        }
        for family in ("g4dn", "g5", "g6", "g6e")
    },
    **{
        family: {
            "on-demand": VcpuQuota("L-417A185B", "Running On-Demand P instances"),
            "spot": VcpuQuota("L-7212CCBC", "All P4, P3 and P2 Spot Instance Requests"),
        }
        for family in ("p3", "p4d", "p4de")
    },
    **{
        family: {
            "on-demand": VcpuQuota("L-417A185B", "Running On-Demand P instances"),
            "spot": VcpuQuota("L-C4BD4855", "All P5 Spot Instance Requests", verify=family == "p6-b200"),
        }
        for family in ("p5", "p5e", "p5en", "p6-b200")
    },
}


def vcpu_quota(instance_type: str, market: str) -> VcpuQuota | None:
    """The vCPU quota an instance of this type draws on in this market; None when no row says (never a guess)."""
    return EC2_VCPU_QUOTAS.get(instance_type.split(".")[0], {}).get(market)


# NAT gateway data processing, per GB that passes through the gateway (model pulls from S3 without a gateway endpoint).
# Source: https://aws.amazon.com/vpc/pricing/ (NAT gateway, us-east-1: $0.045 per GB processed), as quoted by
# basavytix.com/blog/aws-nat-gateway-pricing and cloudburn.io/blog/aws-nat-gateway-pricing (2026), read 2026-12-03
# (VERIFY on the pricing page; other regions cost more, e.g. ap-southeast-1 $0.059). S3 gateway endpoints carry no
# hourly or per-GB charge: https://docs.aws.amazon.com/vpc/latest/privatelink/gateway-endpoints.html.
NAT_USD_PER_GB_PROCESSED = 0.045
# The region NAT_USD_PER_GB_PROCESSED was read for (https://aws.amazon.com/vpc/pricing/, 2026-12-03); elsewhere unknown.
NAT_PRICE_REGION = "us-east-1"

# ---- Karpenter (GPU capacity on EKS) ----
# Karpenter prefers spot when a NodePool allows spot and on-demand, and falls back to on-demand within the same
# provisioning round when EC2 says spot is unavailable: "If the provider API (e.g. EC2 Fleet's API) indicates Spot
# capacity is unavailable, Karpenter caches that result across all attempts to provision EC2 capacity for that instance
# type and zone for the next 3 minutes. If there are no other possible offerings available for Spot, Karpenter will
# attempt to provision on-demand instances, generally within milliseconds." Source: https://karpenter.sh/docs/concepts/
# nodepools/ (spec.template.spec.requirements, karpenter.sh/capacity-type), read 2026-12-03.
SPOT_FALLS_BACK_TO_ON_DEMAND = True
# Karpenter's capacity types (label karpenter.sh/capacity-type); `reserved` is capacity from the EC2NodeClass's
# capacityReservationSelectorTerms (feature gate reservedCapacity, beta and on by default in chart 1.14.1:
# tests/upstream/karpenter-1.14.1/values.yaml). Source: https://karpenter.sh/docs/concepts/nodeclasses/
# (spec.capacityReservationSelectorTerms), read 2026-12-03. Purchase option -> capacity types of its NodePool.
KARPENTER_CAPACITY_TYPES = {"on-demand": ("on-demand",), "spot": ("spot",), "capacity-block": ("reserved",), "reservation": ("reserved",)}
# An EC2 capacity reservation id (ODCR or capacity block), as the pinned EC2NodeClass CRD validates it
# (capacityReservationSelectorTerms[].id, tests/upstream/karpenter-1.14.1/crds/karpenter.k8s.aws_ec2nodeclasses.yaml,
# from https://github.com/aws/karpenter-provider-aws tag v1.14.1, read 2026-12-03).
CAPACITY_RESERVATION_ID_PATTERN = r"^cr-[0-9a-z]+$"
# Subnets and security groups Karpenter's EC2NodeClass selects by this tag (value: the cluster name), as in AWS's
# getting-started guide. Source: https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/ (tagging
# subnets and security groups), read 2026-12-03.
KARPENTER_DISCOVERY_TAG = "karpenter.sh/discovery"
# amiSelectorTerms alias family per node image: `<family>@<version>`; Karpenter picks the NVIDIA variant of the family
# for GPU instance types. Source: https://karpenter.sh/docs/concepts/nodeclasses/ (spec.amiSelectorTerms, alias),
# read 2026-12-03.
AMI_ALIAS_FAMILY = {"al2023": "al2023", "bottlerocket": "bottlerocket"}

# Instance-store NVMe per GPU type, GB (decimal) in total: what the EC2NodeClass's instanceStorePolicy RAID0 turns into
# the node's ephemeral storage (kubelet, containerd, and Triton's model copy under /tmp). Source: moto 5.2.5
# ec2/resources/instance_types.json.gz, InstanceStorageInfo.TotalSizeInGB (its copy of EC2 DescribeInstanceTypes,
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstanceTypes.html), read 2026-12-03 (catalog
# source MOTO). VERIFY on the account: `aws ec2 describe-instance-types`.
INSTANCE_STORE_GB: dict[str, int] = {
    "g6e.xlarge": 250,
    "g6e.2xlarge": 450,
    "g6e.4xlarge": 600,
    "g6e.8xlarge": 900,
    "g6e.12xlarge": 3800,
    "g6e.24xlarge": 3800,
    "g6e.48xlarge": 7600,
    "g6.xlarge": 250,
    "g6.2xlarge": 450,
    "g6.12xlarge": 3760,
    "g6.48xlarge": 7520,
    "p5.48xlarge": 30400,
    "p5en.48xlarge": 30400,
    "p5e.48xlarge": 30400,
    "p6-b200.48xlarge": 30400,
}

# The AWS Load Balancer Controller's Ingress annotation that picks an ALB's scheme: internet-facing, or internal (private
# addresses only, reachable from the VPC and networks routed to it; placed in the subnets tagged
# kubernetes.io/role/internal-elb). Without inbound-cidrs the controller opens the ALB's listeners to 0.0.0.0/0.
# Sources: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#scheme and
# #inbound-cidrs, .../deploy/subnet_discovery/ (read 2026-12-03). The policy pack tells internal ALBs from public ones by it.
ALB_SCHEME_ANNOTATION = "alb.ingress.kubernetes.io/scheme"
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#scheme (read 2026-12-03).
ALB_INTERNAL_SCHEME = "internal"
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#scheme (read 2026-12-03).
ALB_PUBLIC_SCHEME = "internet-facing"

# The most nodes an EKS cluster runs: 100,000 ("ultra scale" clusters). A GPU pool is Karpenter NodePools, whose node
# limits (tritonfleet: maxNodes) have no ceiling of their own, so this bounds a pool's maxNodes and all pools together.
# Source: https://aws.amazon.com/blogs/containers/under-the-hood-amazon-eks-ultra-scale-clusters/ (2025-07-16), read
# 2026-12-05. VERIFY: whether a cluster past the earlier bound needs the provisioned control plane tiers.
MAX_NODES_PER_CLUSTER = 100_000
