"""Small rules every floor must agree on: pool labels, the GPU taint, spot notices, resource names.

Cloud-neutral: what one cloud says (a taint value, a notice period, an API spelling) is in tritonfleet/clouds/<cloud>/
facts.py, which the helpers below reach by cloud name at call time (never at module load).
"""

from __future__ import annotations

PROJECT = "tritonfleet"
CONFIG_NAMESPACE = PROJECT
# What the offline plan puts where a stack file has a `secure:` value (it never decrypts one): the config rules tell a
# secret leaf from a clear one by it, which the engine cannot (it marks a whole top-level key secret).
SECRET_PLACEHOLDER = "[secret: not decrypted by the offline plan]"

# Node labels we put on every GPU node; Triton selects its pool with POOL_LABEL.
POOL_LABEL = "tritonfleet.io/pool"
GPU_LABEL = "tritonfleet.io/gpu"
CAPACITY_LABEL = "tritonfleet.io/capacity"
ASSUMED_PRICE_LABEL = "tritonfleet.io/assumed-usd-per-hour"  # a pool's acknowledged assumed $/node-hour

# The one GPU taint, in Kubernetes spelling. Its value is each cloud's (tritonfleet/clouds/<cloud>/facts.py
# GPU_TAINT_VALUE), and so is the spelling of the effect in the cloud's node pool API.
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_EFFECT = "NoSchedule"

# A Kubernetes label value: at most 63 characters, alphanumerics with '-', '_' or '.' inside, or empty
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
LABEL_VALUE_PATTERN = r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$"

# Label domains a user may not put on GPU nodes (with their subdomains): Kubernetes reserves the first two,
# tritonfleet sets the third.
RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "tritonfleet.io")


def is_reserved_label(key: str) -> bool:
    domain = key.split("/", 1)[0] if "/" in key else ""
    return any(domain == d or domain.endswith(f".{d}") for d in RESERVED_LABEL_DOMAINS)


# The directory name of our Triton chart (charts/<name>): how the pack recognises a Triton release.
TRITON_CHART_NAME = "triton-inference-server"

HOURS_PER_MONTH = 730

# The deepest nesting of mappings and lists a stack's config may have (stack files and the engine's JSON text alike):
# tritonfleet's own keys nest four levels; parsers and validators recurse once per level.
MAX_CONFIG_NESTING = 64


def nesting(value: object, bound: int) -> int:
    """How many levels of dicts and lists `value` has, counted without recursion and no further than bound + 1."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= bound:
                pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def default_bucket_name(stack: str, bucket: str, owner: str, region: str) -> str:
    """A model bucket's name when `bucketName` is unset: tf-<stack>-<bucket>-<owner>-<region>, where the owner is the
    AWS account id or the GCP project id. Bucket names are global on S3 and GCS, so a name without the owner (the old
    tf-<stack>-<bucket>) is almost surely someone else's already (BucketAlreadyExists)."""
    return "-".join(part for part in (resource_name(stack, bucket), owner, region) if part)


def gpu_taint(cloud: str) -> dict[str, str]:
    """The GPU taint of a cloud's GPU nodes, in Kubernetes spelling."""
    from tritonfleet.core.cloud import cloud as cloud_named

    return {"key": GPU_TAINT_KEY, "value": cloud_named(cloud).gpu_taint_value, "effect": GPU_TAINT_EFFECT}


def spot_notice_seconds(cloud: str) -> int:
    """How long a spot node of this cloud lives after its interruption notice."""
    from tritonfleet.core.cloud import cloud as cloud_named

    return cloud_named(cloud).spot_notice_seconds


def spot_falls_back(cloud: str) -> bool:
    """Whether this cloud's GPU provisioner launches on-demand nodes when spot capacity is unavailable."""
    from tritonfleet.core.cloud import cloud as cloud_named

    return cloud_named(cloud).spot_falls_back_to_on_demand


def resource_name(stack: str, *parts: str) -> str:
    """Deterministic, per-stack resource name: tf-<stack>-<part>-..."""
    return "-".join(["tf", stack, *parts])


def pool_node_labels(
    pool: str, gpu: str, capacity: str, extra: dict[str, str] | None = None, assumed_usd_per_hour: float | None = None
) -> dict[str, str]:
    """Labels on every node of a GPU pool; `capacity` is the purchase option (on-demand, spot, ...).

    `extra` are the pool's own `nodeLabels` (validated not to use RESERVED_LABEL_DOMAINS). A pool with an acknowledged
    assumed price (`gpuPools[].assumedPrice`) carries it, so the budget policy can price what the catalog cannot.
    """
    labels = {**(extra or {}), POOL_LABEL: pool, GPU_LABEL: gpu, CAPACITY_LABEL: capacity}
    if assumed_usd_per_hour is not None:
        labels[ASSUMED_PRICE_LABEL] = f"{assumed_usd_per_hour:g}"
    return labels


# ---- Release names and namespaces the Kubernetes layer pins (Helm autonames releases otherwise) ----
# kube-prometheus-stack: the release name contains "kube-prometheus-stack", so the chart's fullname is the release
# name itself and Prometheus is served at <release>-prometheus.<namespace>.svc:9090.
MONITORING_NAMESPACE = "monitoring"
# kube-prometheus-stack's node exporter reads the host (hostNetwork, hostPID, a hostPath of /), so it runs in a
# namespace of its own that allows it, and `monitoring` enforces Pod Security "baseline" (components/k8s/pod_security.py).
NODE_EXPORTER_NAMESPACE = "monitoring-node-exporter"
KUBE_PROMETHEUS_STACK_RELEASE = "kube-prometheus-stack"
PROMETHEUS_SERVICE_URL = f"http://{KUBE_PROMETHEUS_STACK_RELEASE}-prometheus.{MONITORING_NAMESPACE}.svc"
PROMETHEUS_PORT = 9090
PROMETHEUS_URL = f"{PROMETHEUS_SERVICE_URL}:{PROMETHEUS_PORT}"
# kube-prometheus-stack's Prometheus selects ServiceMonitors, PodMonitors and PrometheusRules carrying this label.
MONITOR_SELECTOR_LABELS = {"release": KUBE_PROMETHEUS_STACK_RELEASE}
# Grafana's sidecar loads every ConfigMap with this label; its provisioned Prometheus datasource has this uid.
GRAFANA_DASHBOARD_LABEL = {"grafana_dashboard": "1"}
GRAFANA_DATASOURCE_UID = "prometheus"

# Triton's HTTP and gRPC ports in the pod (the chart's containerPorts): what a load balancer's proxies connect to.
TRITON_INFERENCE_PORTS = (8000, 8001)

PROMETHEUS_ADAPTER_RELEASE = "prometheus-adapter"
# Ports on the nodes that the API server calls for what the stack installs (APIServices and admission webhooks):
# prometheus-adapter serves custom.metrics.k8s.io on its chart's listenPort 6443 (tests/upstream/prometheus-adapter-5.3.0),
# kube-prometheus-stack's operator webhook on 10250 (its values.yaml: prometheusOperator.tls.internalPort).
CONTROL_PLANE_CALLED_PORTS = {"prometheus-adapter": 6443, "prometheus-operator-webhook": 10250}
GPU_OPERATOR_RELEASE = "gpu-operator"
# KEDA and its HTTP add-on (docs/serving.md "Idle capacity to zero"): the add-on chart names its Services
# <chart name>-<service> whatever the release is called (kedacore/charts http-add-on/templates, 0.15.0).
KEDA_NAMESPACE = "keda"
KEDA_RELEASE = "keda"
KEDA_HTTP_ADD_ON_RELEASE = "keda-add-ons-http"
KEDA_HTTP_SCALER_ADDRESS = f"keda-add-ons-http-external-scaler.{KEDA_NAMESPACE}:9090"
GPU_OPERATOR_NAMESPACE = "gpu-operator"
# Where the AWS stack's capacity placeholders run (tritonfleet/clouds/aws/node_pools.py PLACEHOLDER_NAMESPACE).
CAPACITY_NAMESPACE = "tritonfleet-capacity"
# Namespaces a Triton deployment may not take: Kubernetes reserves the kube- prefix for its system namespaces
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/, read 2026-12-05); the CIS Kubernetes
# Benchmark (5.7.4) says workloads stay out of default; the platform's own namespaces hold its controllers, whose
# NetworkPolicies, Pod Security labels and RBAC a Triton release would share or override.
RESERVED_NAMESPACE_PREFIX = "kube-"
# The node-local model cache's prefetch DaemonSets (components/k8s/model_cache.py): Pod Security privileged, for hostPath.
MODEL_CACHE_NAMESPACE = "tritonfleet-model-cache"
PLATFORM_NAMESPACES = (
    "default", MONITORING_NAMESPACE, GPU_OPERATOR_NAMESPACE, CAPACITY_NAMESPACE, MODEL_CACHE_NAMESPACE
)


def reserved_namespace(namespace: str) -> bool:
    return namespace.startswith(RESERVED_NAMESPACE_PREFIX) or namespace in PLATFORM_NAMESPACES


def triton_release_name(deployment: str) -> str:
    """The Helm release of a Triton deployment; its ServiceAccount, Service and Deployment carry the same name."""
    return f"triton-{deployment}"


def model_cache_service_account(deployment: str) -> str:
    """The ServiceAccount a deployment's prefetch DaemonSet runs as (in MODEL_CACHE_NAMESPACE); it reads the bucket."""
    return f"model-cache-{deployment}"


def model_cache_identity(deployment: str) -> str:
    """The key of a deployment's prefetch identity among the adapter's read identities (ClusterFacts)."""
    return f"{deployment}-model-cache"


def triton_service_account(deployment: str) -> str:
    """The Kubernetes ServiceAccount an IRSA role / Workload Identity binding must trust for this deployment."""
    return triton_release_name(deployment)
