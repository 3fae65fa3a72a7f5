"""Every pinned version the platform deploys: one place each. SDK versions are pinned in pyproject.toml.

Pins that follow the Kubernetes minor version are keyed by it and cover every version EKS supports (standard or
extended, tritonfleet/clouds/aws/facts.py EKS_VERSIONS): tests/test_aws_versions.py plans each one.
"""

# The default cluster version: in standard support on EKS (until 2027-03-27) and GKE on 2026-12-03. Shipped stacks
# set it explicitly, so changing this default never upgrades a running cluster.
KUBERNETES_VERSION = "1.35"

TRITON_IMAGE_REPOSITORY = "nvcr.io/nvidia/tritonserver"
TRITON_IMAGE_TAG = "26.07-py3"  # Triton 2.71.0
# The registry and the path below it, for the cloud mirrors (docs/serving.md "Images"), which keep the path.
TRITON_IMAGE_REGISTRY, TRITON_IMAGE_PATH = TRITON_IMAGE_REPOSITORY.split("/", 1)
# The LLM images of the same NGC release, one per backend (tritonDeployments[].llm.backend): Triton with the
# TensorRT-LLM backend, and with the vLLM backend, each with the Python backend
# (https://catalog.ngc.nvidia.com/orgs/nvidia/containers/tritonserver, tags <YY.MM>-trtllm-python-py3 and
# <YY.MM>-vllm-python-py3, 2026-12-05). VERIFY each tag on NGC when the release moves.
TRITON_LLM_IMAGE_TAGS = {"tensorrtllm": "26.07-trtllm-python-py3", "vllm": "26.07-vllm-python-py3"}
# The TensorRT-LLM each Triton release's trtllm-python-py3 image carries (triton-inference-server/server
# docs/introduction/compatibility.md, branch r26.07 at 819ee37, 2026-07-24, read 2026-12-05), and the TensorRT-LLM
# releases whose image still has the legacy TensorRT-engine backend (libtriton_tensorrtllm, built by server's
# build.py from TensorRT-LLM's triton_backend/inflight_batcher_llm on r26.07): TensorRT-LLM removed it on main in
# July 2026 (NVIDIA/TensorRT-LLM PR #15907), after 1.2. Moving the pin needs its row here (tests/test_llm_layout.py).
TRITON_TENSORRT_LLM_VERSIONS = {"26.05": "1.2.1", "26.06": "1.2.1", "26.07": "1.2.1"}
TENSORRT_LLM_WITH_ENGINE_BACKEND = ("1.2.1",)

# GB a Triton image takes once pulled (what a node downloads and unpacks before the container starts), per image
# flavour (the tag's suffix after YY.MM-). Sources: triton-inference-server/server issue 7474 (2024-07-25: 24.06-py3
# "about 15.5GB", "expected" say the maintainers) and issue 7335 (2024-06-08: the NGC catalog lists 24.04/24.05
# trtllm-python-py3 at "~18.5GB"). VERIFY the pinned tags' sizes on NGC; vllm has no published figure here (unknown).
TRITON_IMAGE_GB = {"py3": 15.5, "trtllm-python-py3": 18.5}

# The node-local model cache's prefetch image (docs/serving.md "Node-local model cache"): built from
# images/model-cache/Dockerfile (FROM this base, with the project's SDK pins from constraints.txt) and pushed by the
# operator to their registry under this tag (cluster.modelCacheImage). Bump the tag whenever
# tritonfleet/models/node_cache.py or the SDK pins change. The base: Python 3.11, the version the project's tests run
# on (pyproject requires-python >= 3.11), in Debian's slim variant (https://hub.docker.com/_/python, read 2026-12-05).
MODEL_CACHE_IMAGE_TAG = "1"
MODEL_CACHE_BASE_IMAGE = "python:3.11-slim-bookworm"

# The pause image of the warm-capacity placeholder pods (tritonfleet/clouds/aws/node_pools.py): the one Kubernetes 1.33's
# kubeadm pins (registry.k8s.io/pause:3.10, kubernetes/kubernetes cmd/kubeadm/app/constants PauseVersion).
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

GPU_OPERATOR_CHART = {
    "chart": "gpu-operator",
    "version": "v26.7.0",  # the chart version carries a leading v
    "repo": "https://helm.ngc.nvidia.com/nvidia",
}
# NVIDIA's dcgm-exporter, run alone where the cloud's GPU stack owns driver and device plugin (GKE gke-managed mode).
# <DCGM exporter>-<DCGM> tag from https://github.com/NVIDIA/dcgm-exporter releases (VERIFY it is still the newest).
DCGM_EXPORTER_IMAGE = {"repository": "nvcr.io/nvidia/k8s/dcgm-exporter", "tag": "4.2.3-4.1.3-ubuntu22.04"}
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
# Argo Rollouts runs the deployments' canary rollouts (docs/serving.md "Model rollouts"). Chart argo-rollouts 2.41.1
# installs controller v1.9.1 (https://github.com/argoproj/argo-helm/releases/tag/argo-rollouts-2.41.1, 2026-07-19,
# read 2026-12-05); its Rollout and AnalysisTemplate CRDs of tag v1.9.1 are vendored in tests/upstream.
ARGO_ROLLOUTS_CHART = {
    "chart": "argo-rollouts",
    "version": "2.41.1",
    "repo": "https://argoproj.github.io/argo-helm",
}
ARGO_ROLLOUTS_VERSION = "v1.9.1"
# The AWS Load Balancer Controller (Services of type LoadBalancer as NLBs, Ingresses as ALBs). Chart and app version are
# equal from 3.0 on; its IAM policy is vendored at the same tag (tritonfleet/clouds/aws/data/README.md).
AWS_LOAD_BALANCER_CONTROLLER_CHART = {
    "chart": "aws-load-balancer-controller",
    "version": "3.5.0",  # appVersion v3.5.0 (kubernetes-sigs/aws-load-balancer-controller tag v3.5.0, 2026-08-03)
    "repo": "https://aws.github.io/eks-charts",
}

# KEDA scales a dev deployment to zero when idle and back on its first request (docs/serving.md "Idle capacity to
# zero"). Chart keda 2.20.2 installs KEDA v2.20.2 (github.com/kedacore/keda tag v2.20.2, commit 68a5b5028f35,
# 2026-07-31; kedacore/charts keda/Chart.yaml, read 2026-12-05); its ScaledObject CRD is vendored in tests/upstream.
KEDA_CHART = {"chart": "keda", "version": "2.20.2", "repo": "https://kedacore.github.io/charts"}
# The HTTP add-on: its interceptor holds a request while the deployment scales from zero and pushes the pending count
# to KEDA. Chart keda-add-ons-http 0.15.0 = add-on v0.15.0 (github.com/kedacore/http-add-on tag v0.15.0, commit
# 4ea8a863bd7c, 2026-06-15, read 2026-12-05; beta); its InterceptorRoute CRD is vendored in tests/upstream.
KEDA_HTTP_ADD_ON_CHART = {"chart": "keda-add-ons-http", "version": "0.15.0", "repo": "https://kedacore.github.io/charts"}

# EKS AMI release versions for managed node groups, per node image and Kubernetes minor version. Pinning one means
# an unrelated `pulumi up` never rolls the nodes; bump it on purpose (it replaces nodes one batch at a time).
# al2023: <k8s>.<patch>-<yyyymmdd> from the amazon-eks-ami releases (the same release covers the STANDARD and
# NVIDIA variants); each value was seen in public EKS configs for its version (VERIFY it is still offered:
# `aws ssm get-parameter --name /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/x86_64/nvidia/recommended/release_version`).
# Bottlerocket: none pinned yet; set cluster.amiReleaseVersion (VERIFY a current value with
# `aws ssm get-parameter --name /aws/service/bottlerocket/aws-k8s-<k8s>-nvidia/x86_64/latest/image_version`).
EKS_AMI_RELEASES: dict[str, dict[str, str]] = {
    "al2023": {
        "1.32": "1.32.7-20250807",
        "1.33": "1.33.5-20251120",
        "1.34": "1.34.2-20251120",
        "1.35": "1.35.7-20260903",
        "1.36": "1.36.3-20260903",
    },
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
# Its CRDs as a release of their own, installed before the controller at the same version: Helm installs a chart's
# crds/ folder once and never upgrades it, so a controller upgrade would run against old CRDs; the karpenter-crd chart
# carries them as templates, which Helm upgrades. Source: karpenter-provider-aws v1.14
# website/content/en/v1.14/upgrading/upgrade-guide.md ("CRD Upgrades": the karpenter-crd chart),
# https://karpenter.sh/v1.14/upgrading/upgrade-guide/, and its Makefile (pkg/apis/crds/* copied to
# charts/karpenter-crd/templates), read 2026-12-05.
KARPENTER_CRD_CHART = {
    "chart": "oci://public.ecr.aws/karpenter/karpenter-crd",
    "version": KARPENTER_CHART["version"],
}


# EKS managed add-on versions, per add-on and Kubernetes minor version: `addon_version` of every aws.eks.Addon
# (components/aws/cluster.py). Pinned, an add-on no longer moves to whatever EKS calls its default on the day a cluster
# is created or replaced, and a control-plane upgrade comes with a reviewed add-on bump. Each table is AWS's "latest
# version of the Amazon EKS add-on type for each Kubernetes version" (EKS_ADDON_SOURCES). None is a version we could not
# read from a public source: EKS installs its default for the cluster version, `tritonfleet preflight` reports which one
# that is (`aws eks describe-addon-versions`), and README's VERIFY list names it; pin it here once confirmed.
# tests/test_eks_addon_pins.py checks that every Kubernetes version EKS supports has an entry for every add-on.
EKS_ADDON_SOURCES: dict[str, str] = {
    # The newest copies of AWS's "Amazon VPC CNI versions" table found on 2026-12-05 stop at 1.33, all at
    # v1.20.1-eksbuild.3 (https://docs.aws.amazon.com/ja_jp/eks/latest/userguide/pod-networking.html; the archived
    # github.com/awsdocs/amazon-eks-user-guide latest/ug/networking/managing-vpc-cni.adoc @057948d9), a mid-2025 state.
    # Pinned, they would ask EKS to move an existing cluster's newer default back to that build: left to EKS until a
    # current table or describe-addon-versions is read (preflight prints EKS's default).
    "vpc-cni": "no current table for 1.32+ (newest copy: 1.27-1.33 at v1.20.1-eksbuild.3, mid-2025; "
    "VERIFY: describe-addon-versions)",
    "kube-proxy": "https://docs.aws.amazon.com/ja_jp/eks/latest/userguide/managing-kube-proxy.md "
    "(table 'kube-proxy versions', AWS's Japanese edition of the user guide), read 2026-12-05",
    "coredns": "https://docs.aws.amazon.com/ja_jp/eks/latest/userguide/managing-coredns.md "
    "(table 'CoreDNS versions', AWS's Japanese edition of the user guide), read 2026-12-05",
    "eks-pod-identity-agent": "no per-version table published (VERIFY: describe-addon-versions)",
    "aws-ebs-csi-driver": "no per-version table published (VERIFY: describe-addon-versions)",
    "amazon-cloudwatch-observability": "no per-version table published (VERIFY: describe-addon-versions)",
    "eks-node-monitoring-agent": "no per-version table published (VERIFY: describe-addon-versions)",
}
_UNCONFIRMED: dict[str, str | None] = dict.fromkeys(("1.32", "1.33", "1.34", "1.35", "1.36"))
EKS_ADDON_VERSIONS: dict[str, dict[str, str | None]] = {
    "vpc-cni": dict(_UNCONFIRMED),
    "kube-proxy": {
        "1.32": "v1.32.13-eksbuild.16",
        "1.33": "v1.33.10-eksbuild.13",
        "1.34": "v1.34.6-eksbuild.13",
        "1.35": "v1.35.3-eksbuild.13",
        "1.36": "v1.36.0-eksbuild.14",
    },
    "coredns": {
        "1.32": "v1.11.4-eksbuild.40",
        "1.33": "v1.12.4-eksbuild.18",
        "1.34": "v1.13.2-eksbuild.11",
        "1.35": "v1.14.3-eksbuild.3",
        "1.36": "v1.14.3-eksbuild.3",
    },
    "eks-pod-identity-agent": dict(_UNCONFIRMED),
    "aws-ebs-csi-driver": dict(_UNCONFIRMED),
    "amazon-cloudwatch-observability": dict(_UNCONFIRMED),
    "eks-node-monitoring-agent": dict(_UNCONFIRMED),
}


def eks_addon_version(addon: str, kubernetes_version: str) -> str | None:
    """The pinned version of an EKS add-on at a cluster version; None leaves the choice to EKS (see EKS_ADDON_VERSIONS)."""
    return EKS_ADDON_VERSIONS.get(addon, {}).get(kubernetes_version)
