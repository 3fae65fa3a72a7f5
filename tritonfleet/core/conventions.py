"""Small rules every floor must agree on: pool labels, the GPU taint, spot notices, resource names."""

from __future__ import annotations

PROJECT = "tritonfleet"
CONFIG_NAMESPACE = PROJECT

# Node labels we put on every GPU node; Triton selects its pool with POOL_LABEL.
POOL_LABEL = "tritonfleet.io/pool"
GPU_LABEL = "tritonfleet.io/gpu"
CAPACITY_LABEL = "tritonfleet.io/capacity"

# The one GPU taint per cloud. Kubernetes spelling below; EKS spells the effect NO_SCHEDULE in its API.
# GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule itself, so on GCP we declare that same taint.
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = {"aws": "true", "gcp": "present"}
GPU_TAINT_EFFECT = "NoSchedule"
EKS_TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}

# Purchase option -> EKS managed node group capacityType (the program writes it, the budget policy reads it back).
EKS_CAPACITY_TYPE = {"on-demand": "ON_DEMAND", "spot": "SPOT", "capacity-block": "CAPACITY_BLOCK"}

# The directory name of our Triton chart (charts/<name>): how the pack recognises a Triton release.
TRITON_CHART_NAME = "triton-inference-server"

# GKE: this node label (value "true") turns off GKE's own GPU device plugin -- and with it GKE's driver install.
GKE_NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"

# How long a spot node lives after its interruption notice.
SPOT_NOTICE_SECONDS = {"aws": 120, "gcp": 30}

HOURS_PER_MONTH = 730


def gpu_taint(cloud: str) -> dict[str, str]:
    return {"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE[cloud], "effect": GPU_TAINT_EFFECT}


def gpu_toleration(cloud: str) -> dict[str, str]:
    """Tolerates exactly the GPU taint of that cloud's pools (key, value and effect)."""
    return {"operator": "Equal", **gpu_taint(cloud)}


def resource_name(stack: str, *parts: str) -> str:
    """Deterministic, per-stack resource name: tf-<stack>-<part>-..."""
    return "-".join(["tf", stack, *parts])


def pool_node_labels(pool: str, gpu: str, capacity: str) -> dict[str, str]:
    """Labels on every node of a GPU pool; `capacity` is the purchase option (on-demand, spot, ...)."""
    return {POOL_LABEL: pool, GPU_LABEL: gpu, CAPACITY_LABEL: capacity}


# ---- Release names and namespaces the Kubernetes layer pins (Helm autonames releases otherwise) ----
# kube-prometheus-stack: the release name contains "kube-prometheus-stack", so the chart's fullname is the release
# name itself and Prometheus is served at <release>-prometheus.<namespace>.svc:9090.
MONITORING_NAMESPACE = "monitoring"
KUBE_PROMETHEUS_STACK_RELEASE = "kube-prometheus-stack"
PROMETHEUS_SERVICE_URL = f"http://{KUBE_PROMETHEUS_STACK_RELEASE}-prometheus.{MONITORING_NAMESPACE}.svc"
PROMETHEUS_PORT = 9090
PROMETHEUS_URL = f"{PROMETHEUS_SERVICE_URL}:{PROMETHEUS_PORT}"
# kube-prometheus-stack's Prometheus selects ServiceMonitors, PodMonitors and PrometheusRules carrying this label.
MONITOR_SELECTOR_LABELS = {"release": KUBE_PROMETHEUS_STACK_RELEASE}

PROMETHEUS_ADAPTER_RELEASE = "prometheus-adapter"
GPU_OPERATOR_RELEASE = "gpu-operator"
GPU_OPERATOR_NAMESPACE = "gpu-operator"


def triton_release_name(deployment: str) -> str:
    """The Helm release of a Triton deployment; its ServiceAccount, Service and Deployment carry the same name."""
    return f"triton-{deployment}"


def triton_service_account(deployment: str) -> str:
    """The Kubernetes ServiceAccount an IRSA role / Workload Identity binding must trust for this deployment."""
    return triton_release_name(deployment)
