"""GPU Operator profiles: what a cloud adapter hands up in `ClusterFacts.gpu_operator_values` for its node image.

A profile is a dict of gpu-operator chart value overrides, plus one key of ours, `OPTIONS_KEY`, that the Kubernetes
layer removes before the values reach the chart:
  install  bool, default True - False when the cloud's own GPU stack owns driver, device plugin and monitoring
  dcgmExporter  {driverHostDir: <host path>, gpuNodeLabel: <label key>} or absent - with install False: run NVIDIA's
           dcgm-exporter alone on the nodes carrying <label key> (the cloud's driver under <host path>), the way the
           cloud documents it, so DCGM metrics still reach Prometheus
The EKS profiles are AWS facts (tritonfleet/clouds/aws/facts.py GPU_OPERATOR_PROFILES); GKE's depend on the stack's
driver mode and Kubernetes version and are built by tritonfleet/clouds/gcp/drivers.py.
"""

from __future__ import annotations

from typing import Any

from tritonfleet.core import pins
from tritonfleet.core.conventions import MONITOR_SELECTOR_LABELS

OPTIONS_KEY = "tritonfleet"
DCGM_EXPORTER_NAME = "nvidia-dcgm-exporter"
DCGM_EXPORTER_PORT = 9400


def profile_options(profile: dict[str, Any]) -> dict[str, Any]:
    """Our options of a profile, with their defaults filled in."""
    options = profile.get(OPTIONS_KEY, {})
    unknown = set(options) - {"install", "dcgmExporter"}
    if unknown:
        raise ValueError(f"unknown GPU Operator profile options: {sorted(unknown)}")
    install = bool(options.get("install", True))
    exporter = options.get("dcgmExporter")
    if exporter is not None and (install or set(exporter) != {"driverHostDir", "gpuNodeLabel"}):
        raise ValueError("dcgmExporter needs install: false and exactly the keys driverHostDir and gpuNodeLabel")
    return {"install": install, "dcgmExporter": exporter}


def standalone_dcgm_exporter(
    namespace: str, driver_host_dir: str, gpu_node_label: str, tolerations: list[dict[str, str]], monitoring: bool
) -> list[dict[str, Any]]:
    """NVIDIA's dcgm-exporter as a DaemonSet on the GPU nodes (those with `gpu_node_label`) whose driver the cloud
    installed (no GPU Operator).

    Shape: Google's DCGM exporter manifest for GKE (driver libraries mounted from the host at /usr/local/nvidia,
    https://cloud.google.com/stackdriver/docs/managed-prometheus/exporters/nvidia-dcgm, read 2026-12-03), scraped by
    the stack's own Prometheus through a ServiceMonitor instead of Managed Service for Prometheus. VERIFY on first deploy.
    """
    labels = {"app.kubernetes.io/name": DCGM_EXPORTER_NAME}
    meta = {"name": DCGM_EXPORTER_NAME, "namespace": namespace, "labels": labels}
    container = {
        "name": "dcgm-exporter",
        "image": f"{pins.DCGM_EXPORTER_IMAGE['repository']}:{pins.DCGM_EXPORTER_IMAGE['tag']}",
        "env": [
            {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"},
            {"name": "DCGM_EXPORTER_LISTEN", "value": f":{DCGM_EXPORTER_PORT}"},
            {"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"},
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        ],
        "ports": [{"name": "metrics", "containerPort": DCGM_EXPORTER_PORT}],
        # DCGM reads the GPUs' profiling counters: privileged, as in Google's and NVIDIA's manifests.
        "securityContext": {"privileged": True},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
        "volumeMounts": [
            {"name": "nvidia-install-dir-host", "mountPath": "/usr/local/nvidia", "readOnly": True},
            {"name": "pod-resources", "mountPath": "/var/lib/kubelet/pod-resources", "readOnly": True},
        ],
    }
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta,
            "spec": {
                "selector": {"matchLabels": labels},
                "updateStrategy": {"type": "RollingUpdate"},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "priorityClassName": "system-node-critical",
                        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                            {"matchExpressions": [{"key": gpu_node_label, "operator": "Exists"}]}
                        ]}}},
                        "tolerations": tolerations,
                        "containers": [container],
                        "volumes": [
                            {"name": "nvidia-install-dir-host", "hostPath": {"path": driver_host_dir}},
                            {"name": "pod-resources", "hostPath": {"path": "/var/lib/kubelet/pod-resources"}},
                        ],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {"selector": labels, "ports": [{"name": "metrics", "port": DCGM_EXPORTER_PORT, "targetPort": "metrics"}]},
        },
    ]
    if monitoring:
        objects.append(
            {
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "ServiceMonitor",
                "metadata": {**meta, "labels": {**labels, **MONITOR_SELECTOR_LABELS}},
                "spec": {
                    "selector": {"matchLabels": labels},
                    # honorLabels off, as the operator's ServiceMonitor: the pool rules join DCGM series on the
                    # exporter pod's own namespace/pod (the GPU workload's labels come as exported_namespace/_pod).
                    "endpoints": [{"port": "metrics", "interval": "15s"}],
                },
            }
        )
    return objects


def chart_overrides(profile: dict[str, Any]) -> dict[str, Any]:
    """The profile's gpu-operator chart values (our options removed)."""
    return {k: v for k, v in profile.items() if k != OPTIONS_KEY}
