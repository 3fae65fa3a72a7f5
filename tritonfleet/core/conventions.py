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

# GKE runs its own NVIDIA device plugin on GPU nodes unless the node carries this label; set it only when the
# GPU Operator installs the driver and its own device plugin (two device plugins fight over nvidia.com/gpu).
GKE_NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
# Label domains a user may not put on GPU nodes (with their subdomains): Kubernetes reserves the first two,
# tritonfleet sets the third.
RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "tritonfleet.io")


def is_reserved_label(key: str) -> bool:
    domain = key.split("/", 1)[0] if "/" in key else ""
    return any(domain == d or domain.endswith(f".{d}") for d in RESERVED_LABEL_DOMAINS)

# Purchase option -> EKS managed node group capacityType (the program writes it, the budget policy reads it back).
EKS_CAPACITY_TYPE = {"on-demand": "ON_DEMAND", "spot": "SPOT", "capacity-block": "CAPACITY_BLOCK"}

# The directory name of our Triton chart (charts/<name>): how the pack recognises a Triton release.
TRITON_CHART_NAME = "triton-inference-server"

# How long a spot node lives after its interruption notice.
SPOT_NOTICE_SECONDS = {"aws": 120, "gcp": 30}

HOURS_PER_MONTH = 730


def gpu_taint(cloud: str) -> dict[str, str]:
    return {"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE[cloud], "effect": GPU_TAINT_EFFECT}


def resource_name(stack: str, *parts: str) -> str:
    """Deterministic, per-stack resource name: tf-<stack>-<part>-..."""
    return "-".join(["tf", stack, *parts])


def pool_node_labels(pool: str, gpu: str, capacity: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Labels on every node of a GPU pool; `capacity` is the purchase option (on-demand, spot, ...).

    `extra` are the pool's own `nodeLabels` (validated not to use RESERVED_LABEL_DOMAINS).
    """
    return {**(extra or {}), POOL_LABEL: pool, GPU_LABEL: gpu, CAPACITY_LABEL: capacity}


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
# Grafana's sidecar loads every ConfigMap with this label; its provisioned Prometheus datasource has this uid.
GRAFANA_DASHBOARD_LABEL = {"grafana_dashboard": "1"}
GRAFANA_DATASOURCE_UID = "prometheus"

PROMETHEUS_ADAPTER_RELEASE = "prometheus-adapter"
GPU_OPERATOR_RELEASE = "gpu-operator"
GPU_OPERATOR_NAMESPACE = "gpu-operator"


def triton_release_name(deployment: str) -> str:
    """The Helm release of a Triton deployment; its ServiceAccount, Service and Deployment carry the same name."""
    return f"triton-{deployment}"


def triton_service_account(deployment: str) -> str:
    """The Kubernetes ServiceAccount an IRSA role / Workload Identity binding must trust for this deployment."""
    return triton_release_name(deployment)
