"""AWS and EKS facts the program and the policy pack rely on, each with its source and the date it was read.

The neutral core speaks Kubernetes and tritonfleet terms (taint effect NoSchedule, purchase option on-demand); this
module maps them to the EKS API's spelling. Facts only a real account can confirm are marked VERIFY (README list).
"""

from __future__ import annotations

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
