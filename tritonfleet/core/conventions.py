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

# Monitoring: the kube-prometheus-stack release every other floor refers to. The release name is pinned so the chart's
# fullname (and with it the Prometheus service name) never changes; it contains "kube-prometheus-stack", so the
# chart uses it as its fullname unchanged (26-character limit respected).
MONITORING_NAMESPACE = "monitoring"
KUBE_PROMETHEUS_STACK_RELEASE = "kube-prometheus-stack"
PROMETHEUS_URL = f"http://{KUBE_PROMETHEUS_STACK_RELEASE}-prometheus.{MONITORING_NAMESPACE}.svc:9090"
# Grafana's sidecar loads every ConfigMap with this label; its provisioned Prometheus datasource has this uid.
GRAFANA_DASHBOARD_LABEL = {"grafana_dashboard": "1"}
GRAFANA_DATASOURCE_UID = "prometheus"
