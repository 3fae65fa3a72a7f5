"""Every pinned version the platform deploys: one place each. SDK versions are pinned in pyproject.toml."""

KUBERNETES_VERSION = "1.33"

TRITON_IMAGE_REPOSITORY = "nvcr.io/nvidia/tritonserver"
TRITON_IMAGE_TAG = "26.07-py3"  # Triton 2.71.0

GPU_OPERATOR_CHART = {
    "chart": "gpu-operator",
    "version": "v26.7.0",  # the chart version carries a leading v
    "repo": "https://helm.ngc.nvidia.com/nvidia",
}
KUBE_PROMETHEUS_STACK_CHART = {
    "chart": "kube-prometheus-stack",
    "version": "88.5.3",
    "repo": "https://prometheus-community.github.io/helm-charts",
}
PROMETHEUS_ADAPTER_CHART = {
    "chart": "prometheus-adapter",
    "version": "5.3.0",
    "repo": "https://prometheus-community.github.io/helm-charts",
}

# EKS AMI release versions for managed node groups, per node image and Kubernetes minor version. Pinning one means
# an unrelated `pulumi up` never rolls the nodes; bump it on purpose (it replaces nodes one batch at a time).
# al2023: <k8s>.<patch>-<yyyymmdd> from the amazon-eks-ami releases (the same release covers the STANDARD and
# NVIDIA variants). Bottlerocket: none pinned yet; set cluster.amiReleaseVersion (VERIFY a current value with
# `aws ssm get-parameter --name /aws/service/bottlerocket/aws-k8s-<k8s>-nvidia/x86_64/latest/image_version`).
EKS_AMI_RELEASES: dict[str, dict[str, str]] = {
    "al2023": {"1.33": "1.33.5-20251120"},  # seen in public EKS configs for 1.33 (VERIFY it is still offered)
    "bottlerocket": {},
}
EKS_AMI_RELEASE_PATTERN = {"al2023": r"{k8s}\.\d+-\d{{8}}", "bottlerocket": r"\d+\.\d+\.\d+-[0-9a-f]{{8}}"}


def eks_ami_release(image: str, kubernetes_version: str) -> str | None:
    return EKS_AMI_RELEASES.get(image, {}).get(kubernetes_version)


# Karpenter (AWS node provisioning): the controller chart from AWS's public ECR (an OCI registry, so no repo entry).
# The chart's values, CRDs and AWS's getting-started CloudFormation for this version are vendored in
# tests/upstream/karpenter-1.14.1/; the controller IAM policy and interruption queue are built from that CloudFormation.
KARPENTER_CHART = {
    "chart": "oci://public.ecr.aws/karpenter/karpenter",
    "version": "1.14.1",
}
