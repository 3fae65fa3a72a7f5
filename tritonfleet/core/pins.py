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
