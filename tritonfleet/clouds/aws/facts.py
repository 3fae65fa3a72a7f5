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
# The CloudWatch Observability add-on (container logs through Fluent Bit) with its NVIDIA GPU metrics off: with them on
# (the default) the add-on's operator runs its own dcgm-exporter on every GPU node beside the GPU Operator's, two DCGM
# engines with clashing profiling fields. `accelerated_compute_metrics: false` in the agent's Kubernetes metrics is the
# documented opt-out; the rest is the add-on's default agent config. Sources:
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/install-CloudWatch-Observability-EKS-addon.html
# ("Opt out of collecting NVIDIA GPU metrics") and aws/amazon-cloudwatch-agent-operator
# internal/manifests/collector (acceleratedComputeMetrics decides the DCGM exporter), read 2026-12-05. VERIFY on a GPU
# node that only the GPU Operator's dcgm-exporter runs.
CLOUDWATCH_OBSERVABILITY_ADDON = "amazon-cloudwatch-observability"
# Its configuration values (same sources: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
# install-CloudWatch-Observability-EKS-addon.html, read 2026-12-05).
CLOUDWATCH_OBSERVABILITY_CONFIGURATION = {
    "agent": {
        "config": {
            "logs": {
                "metrics_collected": {
                    "kubernetes": {"enhanced_container_insights": True, "accelerated_compute_metrics": False}
                }
            }
        }
    },
    "containerLogs": {"enabled": True},
}
# The EKS node monitoring agent add-on: a DaemonSet on every node (it tolerates every taint) that reads kernel logs and
# the GPU driver for faults (XID errors, NVLink, thermal) and reports them as node conditions and events
# (AcceleratedHardwareReady) where Karpenter's node repair, or an operator, can act. Its own DCGM host engine
# (dcgm-server) tolerates no taint, so it stays off the GPU-tainted nodes: one DCGM engine per node, the GPU
# Operator's. Sources: https://docs.aws.amazon.com/eks/latest/userguide/node-health.html and
# aws/eks-node-monitoring-agent charts/eks-node-monitoring-agent/values.yaml (nodeAgent.tolerations Exists,
# dcgmAgent.tolerations []), read 2026-12-05. VERIFY on a GPU node that the agent reports AcceleratedHardwareReady.
NODE_MONITORING_AGENT_ADDON = "eks-node-monitoring-agent"
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


# The oldest Karpenter release that supports each Kubernetes minor version. Source: Karpenter's compatibility matrix,
# https://github.com/aws/karpenter-provider-aws tag v1.14.1 (commit bde00654), website/content/en/preview/upgrading/
# compatibility.md (generated from hack/docs/compatibilitymatrix_gen), read 2026-12-05.
KARPENTER_MIN_VERSION = {
    "1.30": "0.37",
    "1.31": "1.0.5",
    "1.32": "1.2",
    "1.33": "1.5",
    "1.34": "1.6",
    "1.35": "1.9",
    "1.36": "1.13",
}

# The EKS Kubernetes release calendar, one row per minor version, and where it was read (the plan cites it).
# Source: "Amazon EKS Kubernetes release calendar", https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html
# (awsdocs/amazon-eks-user-guide @0138560 latest/ug/versioning/kubernetes-versions.adoc for 1.29-1.34, read 2026-12-03);
# 1.35 from https://endoflife.date/amazon-eks and aws-samples "sample-apex-skills" cluster-lifecycle.md (calendar
# "last verified 2026-04-24"), both read 2026-12-03 (VERIFY against AWS's page). Standard support lasts 14 months from
# the EKS release, extended support 12 more; extended support is billed per cluster-hour on top of the standard fee and
# is on by default (upgradePolicy.supportType EXTENDED). After the end of extended support EKS upgrades the control
# plane itself, and no new cluster can be created at that version. None is a date we could not read (VERIFY): 1.36's.
# Its EKS release came after 1.35's (AL2023 AMIs for 1.36 exist from 1.36.2-20260625 on, and AWS's kube-proxy and
# CoreDNS add-on tables list 1.36: tritonfleet/core/pins.py EKS_ADDON_VERSIONS), so it stays in standard support at least
# as long as 1.35. Its dates were searched for again on 2026-12-05 (AWS's calendar, its translations, endoflife.date,
# AWS's announcements) and not found in any copy we could read: the stacks stay on 1.35 until they are.
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
# What an EKS cluster's control plane costs per cluster-hour in standard support. Source:
# https://aws.amazon.com/eks/pricing/ ("$0.10 per cluster per hour" for standard support), read 2026-12-05.
EKS_STANDARD_SUPPORT_USD_PER_CLUSTER_HOUR = 0.10
# ... and in extended support, in total (it replaces the $0.10, it is not added to it). Sources:
# https://aws.amazon.com/eks/pricing/ ("$0.60 per cluster per hour" for extended support) and the AWS containers blog
# "Amazon EKS extended support for Kubernetes versions pricing", read 2026-12-05 (earlier quoted by
# docs.cloudzero.com, read 2026-12-03). VERIFY on the pricing page.
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


# ---- GPU facts: per-type answers (tritonfleet/core/cloud.py) ----
# An EC2 instance type carries its GPUs: the catalog's `accelerator` names nothing EKS needs. Source: Amazon EC2
# accelerated computing instances, https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html (read 2026-12-05).
MACHINE_TYPES_NAME_THEIR_ACCELERATOR = False
# The CPU architectures of the GPU node images tritonfleet plans with: the x86_64 NVIDIA variants of AL2023 and
# Bottlerocket (AL2023_NVIDIA_AMI_PARAMETER and BOTTLEROCKET_NVIDIA_AMI_PARAMETER below, pins.py EKS_AMI_RELEASES;
# https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html, read 2026-12-05). An arm64 GPU type
# (p6e-gb200, Grace) would need the arm64 variants and arm64 images of every node agent: tritonfleet's choice is to
# refuse it until those are pinned and verified.
GPU_NODE_ARCHITECTURES = ("x86_64",)
# The node-local model cache's directory. With the EC2NodeClass's instanceStorePolicy RAID0 the instance store becomes
# one RAID0 array that holds the kubelet's directory, containerd and pod logs: AL2023's setup-local-disks bind-mounts
# /var/lib/kubelet onto it (https://github.com/awslabs/amazon-eks-ami/blob/main/templates/shared/runtime/bin/setup-local-disks,
# read 2026-12-05) and Bottlerocket's ephemeral-storage bind does the same (https://karpenter.sh/docs/concepts/nodeclasses/
# spec.instanceStorePolicy, read 2026-12-05). A folder of its own under it is on the NVMe for both node images
# (VERIFY on a node: `df /var/lib/kubelet/tritonfleet-model-cache` names the md array).
MODEL_CACHE_HOST_PATH = "/var/lib/kubelet/tritonfleet-model-cache"

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


def quota_markets(purchase_options: tuple[str, ...]) -> list[str]:
    """The markets whose vCPU quota a type sold these ways draws on (reserved capacity draws on its reservation)."""
    return [market for market in ("on-demand", "spot") if market in purchase_options]


# NAT gateway data processing is priced in the catalog (servicePrices, item nat-processing, with its regions and
# source). S3 gateway endpoints carry no hourly or per-GB charge:
# https://docs.aws.amazon.com/vpc/latest/privatelink/gateway-endpoints.html (read 2026-12-03).

# ---- Karpenter (GPU capacity on EKS) ----
# Karpenter prefers spot when a NodePool allows spot and on-demand, and falls back to on-demand within the same
# provisioning round when EC2 says spot is unavailable: "If the provider API (e.g. EC2 Fleet's API) indicates Spot
# capacity is unavailable, Karpenter caches that result across all attempts to provision EC2 capacity for that instance
# type and zone for the next 3 minutes. If there are no other possible offerings available for Spot, Karpenter will
# attempt to provision on-demand instances, generally within milliseconds." Source: https://karpenter.sh/docs/concepts/
# nodepools/ (spec.template.spec.requirements, karpenter.sh/capacity-type), read 2026-12-03.
SPOT_FALLS_BACK_TO_ON_DEMAND = True
# How Karpenter turns pending pods into nodes (tritonfleet/core/placement.py counts the plan's nodes with these).
# "Karpenter starts by treating preferred affinities as required ... When these requirements cannot be met, the pod's
# preferences are relaxed one-at-a-time", and "Preferred topology spread (ScheduleAnyway) can result in more nodes being
# created than expected". Source: karpenter-provider-aws v1.14 website/content/en/v1.14/concepts/scheduling.md
# ("Preferences", "Topology Spread"), https://karpenter.sh/v1.14/concepts/scheduling/, read 2026-12-05.
PREFERRED_SPREADS_ADD_NODES = True
# A hostname spread lets Karpenter put at most maxSkew of the deployment's pending pods on each node it launches: a
# new node is a domain with no pod yet, so the skew is counted from 0 (same page: "If instead the maxSkew were 5, pods
# could be spread 5, 0, 0"), https://karpenter.sh/v1.14/concepts/scheduling/#topology-spread, read 2026-12-05.
# VERIFY on a cluster: 1-GPU replicas with maxSkew 8 open one p5en.
HOSTNAME_SPREAD_CAPS_NEW_NODES = True
# spotShare is not something a NodePool can hold: the burst NodePool allows spot and on-demand and Karpenter launches
# spot whenever EC2 has it (price-capacity-optimized), on-demand when it has not. Karpenter's only split is "a crude
# method" of virtual domains (one NodePool per capacity type with disjoint values of a custom label and a topology
# spread over it), which moves the ratio into every pod spec; tritonfleet does not use it, so on AWS the plan prices
# the burst at spotShare as an ESTIMATE of what Karpenter will get. Source: same page, "On-Demand/Spot Ratio Split",
# https://karpenter.sh/v1.14/concepts/scheduling/#on-demandspot-ratio-split, read 2026-12-05.
SPOT_SHARE_ENFORCED = False
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

# Instance-store NVMe per GPU type (what the EC2NodeClass's instanceStorePolicy RAID0 turns into the node's ephemeral
# storage) is a catalog column: tritonfleet/core/catalog.yaml `host.localSsd` (source MOTOHOST, DescribeInstanceTypes).

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
# Exposure modes whose load balancer splits traffic by weight for a canary, and the Argo Rollouts traffic router that
# drives it: an ALB forwards to weighted target groups, which the AWS Load Balancer Controller builds from the Ingress
# action annotation alb.ingress.kubernetes.io/actions.<rootService> that Argo Rollouts writes at each step. The NLB
# (`internal`) and ClusterIP (`cluster`) have no weights: there the canary is a replica ratio. Sources:
# https://github.com/argoproj/argo-rollouts/blob/v1.9.1/docs/features/traffic-management/alb.md and
# https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#actions (read
# 2026-12-05).
ROLLOUT_TRAFFIC_ROUTERS = {"internal-application": "alb", "public": "alb"}
# A LoadBalancer Service is the AWS Load Balancer Controller's (an NLB) only with aws-load-balancer-type external (the
# in-tree controller, which ignores the scheme annotation, makes an internet-facing Classic/NLB otherwise), and it is
# internal only with aws-load-balancer-scheme internal; internet-facing is public. Sources:
# https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations/#lb-type and
# #lb-scheme, .../guide/service/nlb/ (read 2026-12-05). The policy pack tells internal Services by both.
NLB_TYPE_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-type"
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations/ (read 2026-12-05).
NLB_CONTROLLER_TYPE = "external"
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations/ (read 2026-12-05).
NLB_SCHEME_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-scheme"

# The EKS kubeconfig's credential plugin is the AWS CLI (`aws eks get-token`), which GitHub's hosted Ubuntu runner
# images carry (AWS CLI 2 in https://github.com/actions/runner-images/blob/main/images/ubuntu/Ubuntu2404-Readme.md,
# "CLI Tools", read 2026-12-05); aws-actions/configure-aws-credentials puts the role's credentials in its environment.
EKS_TOKEN_COMMAND = "aws"
# Up to 40 CIDRs per EKS public endpoint (publicAccessCidrs; the hosted runners' published ranges are far more), and
# the cluster security group admits only itself until a rule is added: a private endpoint needs 443 from the client.
# Sources: https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html and
# https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html (read 2026-12-05; the 40 is VERIFY).
EKS_PUBLIC_ACCESS_CIDRS_MAX = 40
# The Kubernetes API's port on both EKS endpoints: https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html
# (read 2026-12-05).
EKS_API_PORT = 443

# Where EKS publishes each AMI release (SSM public parameters), the names preflight asks for the pinned release and
# Karpenter's `al2023@v<date>` / `bottlerocket@v<version>` aliases resolve through. Sources:
# https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html (…/amazon-linux-2023/x86_64/nvidia/
# recommended/image_id, and a release's own amazon-eks-node-al2023-x86_64-nvidia-<k8s>-v<date>/image_id),
# https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id-bottlerocket.html and
# https://karpenter.sh/docs/concepts/nodeclasses/ ("amiSelectorTerms", alias), read 2026-12-05 (VERIFY the release
# parameters' exact names for the NVIDIA variants).
AL2023_NVIDIA_AMI_PARAMETER = (
    "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/nvidia/"
    "amazon-eks-node-al2023-x86_64-nvidia-{k8s}-v{date}/image_id"
)
# The recommended (latest) AL2023 NVIDIA release: https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html
# (read 2026-12-05).
AL2023_NVIDIA_RECOMMENDED_RELEASE = (
    "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/nvidia/recommended/release_version"
)
# Bottlerocket's NVIDIA variant, a release's image and the latest version:
# https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id-bottlerocket.html (read 2026-12-05; VERIFY).
BOTTLEROCKET_NVIDIA_AMI_PARAMETER = "/aws/service/bottlerocket/aws-k8s-{k8s}-nvidia/x86_64/{version}/image_id"
# https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id-bottlerocket.html (read 2026-12-05).
BOTTLEROCKET_NVIDIA_RECOMMENDED_RELEASE = "/aws/service/bottlerocket/aws-k8s-{k8s}-nvidia/x86_64/latest/image_version"

# Capacity reservation states (DescribeCapacityReservations State): usable now, not yet usable, and gone. Capacity
# Blocks are `scheduled` before their start date and `expired` after their end. Source:
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityReservation.html (State) and
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-using.html, read 2026-12-05.
RESERVATION_PENDING_STATES = ("scheduled", "payment-pending", "pending", "assessing", "delayed")
# States after which it launches nothing: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/
# API_CapacityReservation.html (read 2026-12-05).
RESERVATION_GONE_STATES = ("expired", "cancelled", "failed", "payment-failed", "unsupported")

# HeadBucket answers 404 for a name nobody holds, 403 for a bucket of another account, 200 for one the caller can
# read, and 301 for one in another region. Source: https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html
# (read 2026-12-05).
HEAD_BUCKET_FREE = ("404", "NoSuchBucket", "NotFound")
# Same page (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html, 2026-12-05): another account's.
HEAD_BUCKET_FOREIGN = ("403", "Forbidden")
# Same page (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html, 2026-12-05): another region's.
HEAD_BUCKET_ELSEWHERE = ("301",)

# S3 buckets the nodes read through the VPC's S3 gateway endpoint besides the model buckets: an endpoint policy that
# leaves them out breaks image pulls (ECR serves layers from its regional starport bucket; the EKS add-ons' images
# come from ECR) and AL2023's package repositories. Traffic the policy denies does not fall back to NAT: the route
# table sends every S3 address to the endpoint. Sources: https://docs.aws.amazon.com/AmazonECR/latest/userguide/
# vpc-endpoints.html ("Minimum Amazon S3 bucket permissions for Amazon ECR": prod-<region>-starport-layer-bucket) and
# https://docs.aws.amazon.com/linux/al2023/ug/managing-repos-os-updates.html (repositories in S3 buckets
# al2023-repos-<region>-<id>; the id is matched by a wildcard: VERIFY), read 2026-12-05.
ECR_LAYER_BUCKET = "prod-{region}-starport-layer-bucket"
# AL2023's repository buckets: https://docs.aws.amazon.com/linux/al2023/ug/managing-repos-os-updates.html (read
# 2026-12-05; the id part is matched by a wildcard: VERIFY).
AL2023_REPO_BUCKETS = "al2023-repos-{region}-*"
# What Triton does with a model bucket: list a folder, find its region, read objects (writes come from
# `tritonfleet models sync`, outside the VPC). Source: https://github.com/triton-inference-server/core/blob/main/src/
# filesystem/implementations/s3.h (ListObjectsV2, HeadBucket/GetBucketLocation, GetObject), read 2026-12-05.
MODEL_READ_ACTIONS = ("s3:GetObject", "s3:ListBucket", "s3:GetBucketLocation")

# The most nodes an EKS cluster runs: 100,000 ("ultra scale" clusters). A GPU pool is Karpenter NodePools, whose node
# limits (tritonfleet: maxNodes) have no ceiling of their own, so this bounds a pool's maxNodes and all pools together.
# Source: https://aws.amazon.com/blogs/containers/under-the-hood-amazon-eks-ultra-scale-clusters/ (2025-07-16), read
# 2026-12-05. VERIFY: whether a cluster past the earlier bound needs the provisioned control plane tiers.
MAX_NODES_PER_CLUSTER = 100_000

# ---- Faster image pulls on GPU nodes (gpuPools[].parallelImagePull; docs/serving.md "Images") ----
# SOCI parallel pull ("parallel-pull-unpack"): the SOCI snapshotter, preinstalled in the EKS AL2023 and Bottlerocket
# AMIs, downloads an image's layers in chunks over concurrent HTTP range requests and unpacks layers in parallel. It
# needs no SOCI index (indexes are for lazy loading, which stays off): it works on the unmodified image, from ECR or
# nvcr.io alike (a registry that serves HTTP range GETs). The oldest AMI release that carries it, per node image: AL2023
# v20250821 and Bottlerocket 1.44.0. Sources: https://github.com/aws-samples/karpenter-blueprints/blob/main/blueprints/
# soci-snapshotter/README.md (the note under "Purpose"), https://github.com/awslabs/soci-snapshotter/blob/main/docs/
# parallel-mode.md, read 2026-12-05.
SOCI_PARALLEL_PULL_SINCE = {"al2023": "20250821", "bottlerocket": "1.44.0"}
# Karpenter's instanceStorePolicy RAID0 binds Bottlerocket's snapshotter directories to the NVMe array only with
# Bottlerocket's default bind list, which Karpenter uses from Bottlerocket 1.46.0 (before it, it binds an explicit list
# without /var/lib/soci-snapshotter, so SOCI's layers land on the EBS data volume). Sources: karpenter-provider-aws
# pkg/providers/version/version.go SupportsDefaultBind (">= 1.46.0") and pkg/providers/amifamily/bootstrap/
# bottlerocket.go, https://github.com/aws/karpenter-provider-aws (main of 2026-08-21), and issue #8393
# (https://github.com/aws/karpenter-provider-aws/issues/8393), read 2026-12-05.
SOCI_ON_RAID0_BOTTLEROCKET_SINCE = "1.46.0"
# AL2023 turns it on with nodeadm's FastImagePull feature gate (NodeConfig spec.featureGates), marked experimental
# (https://awslabs.github.io/amazon-eks-ami/nodeadm/doc/examples/#enabling-fast-image-pull-experimental); nodeadm
# ignores the gate on a node with fewer than 4 vCPUs or less than 7 GiB of memory (every catalog GPU type has more).
# Sources: https://github.com/awslabs/amazon-eks-ami nodeadm/internal/api (the feature gates: "FastImagePull ... will
# be ignored on instances with memory and vCPU below a certain threshold") and nodeadm/internal/containerd/config.go
# UseSOCISnapshotter (totalMemory >= 7 GiB, >= 4000 millicores), read 2026-12-05.
AL2023_FAST_IMAGE_PULL_GATE = "FastImagePull"
# Same source (https://github.com/awslabs/amazon-eks-ami nodeadm/internal/containerd/config.go, read 2026-12-05): the
# smallest node nodeadm turns the gate on for.
AL2023_FAST_IMAGE_PULL_MIN = {"vcpu": 4, "memory_gib": 7}
# Bottlerocket turns it on with settings: the containerd snapshotter "soci" and the pull mode, tuned as AWS's blueprint
# tunes it for ECR-sized layers (AL2023's defaults: 20 downloads and 12 unpacks per image, 16 MB chunks, unpacked
# layer blobs discarded). Sources: https://bottlerocket.dev/en/os/1.53.x/api/settings/container-runtime-plugins
# (settings.container-runtime-plugins.soci-snapshotter.*) and the karpenter-blueprints README above ("Configuration",
# Bottlerocket userData), read 2026-12-05.
BOTTLEROCKET_SOCI_SETTINGS = {
    "container-runtime": {"snapshotter": "soci"},
    "container-runtime-plugins": {
        "soci-snapshotter": {
            "pull-mode": "parallel-pull-unpack",
            "parallel-pull-unpack": {
                "max-concurrent-downloads-per-image": 20,
                "concurrent-download-chunk-size": "16mb",
                "max-concurrent-unpacks-per-image": 12,
                "discard-unpacked-layers": True,
            },
        }
    },
}
# AWS's published measurement: a 10,778,400,361-byte image (the AWS Deep Learning Container for vLLM) pulled in
# 112.33 s by default, 59.813 s with SOCI parallel pull on AL2023 and 44.974 s on Bottlerocket, on nodes with more than
# 8 Gbps of network and EBS bandwidth and a gp3 volume at 1,000 MiB/s ("about 50 %" and "about 60 %" faster). Source:
# https://github.com/aws-samples/karpenter-blueprints/blob/main/blueprints/soci-snapshotter/README.md ("Results"),
# the setup of https://aws.amazon.com/blogs/containers/introducing-seekable-oci-parallel-pull-mode-for-amazon-eks/,
# read 2026-12-05.
SOCI_PUBLISHED_PULL = {"image_bytes": 10_778_400_361, "default_s": 112.33, "al2023_s": 59.813, "bottlerocket_s": 44.974}

# Why no preloaded-image snapshot is built (docs/serving.md "Images"): a Bottlerocket data volume (/dev/xvdb) restored
# from an EBS snapshot with the images pulled into it (aws-samples/bottlerocket-images-cache snapshot.sh; the
# EC2NodeClass's blockDeviceMappings[].ebs.snapshotID) is hidden by instanceStorePolicy RAID0, which our GPU node
# classes set: Karpenter's Bottlerocket bootstrap command binds /var/lib/containerd to the NVMe array at boot.
# Sources: https://github.com/aws-samples/bottlerocket-images-cache (README "With Karpenter", main of 2025-04-15),
# karpenter-provider-aws pkg/providers/amifamily/bootstrap/bottlerocket.go (main of 2026-08-21), read 2026-12-05.
SNAPSHOT_HIDDEN_BY_RAID0_DIRS = ("/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods")
# And a volume restored from a snapshot reads its blocks from S3 on first touch unless a provisioned initialization
# rate is bought, 100-300 MiB/s (a 16 GB image is then at least ~51 s away): EC2NodeClass
# blockDeviceMappings[].ebs.volumeInitializationRate. Sources: the pinned EC2NodeClass CRD (tests/upstream/
# karpenter-1.14.1, "Valid Range: Minimum value of 100. Maximum value of 300") and https://docs.aws.amazon.com/ebs/
# latest/userguide/initalize-volume.html, read 2026-12-05.
EBS_VOLUME_INITIALIZATION_MIBPS = (100, 300)
