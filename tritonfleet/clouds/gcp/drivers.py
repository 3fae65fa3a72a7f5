"""How NVIDIA drivers reach GKE GPU nodes, and the GPU Operator values that agree with it (plain data, no Pulumi).

Three documented setups, one per (gpuDriver, node image):

* gke-managed (COS or Ubuntu): GKE installs the driver and runs its own device plugin; nothing else touches the GPU
  stack (no GPU Operator). The pool's `gpu_driver_version` is LATEST on COS and DEFAULT on Ubuntu: the GKE API
  documents LATEST ("latest driver in COS") for COS only and DEFAULT for COS and Ubuntu
  (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig#GPUDriverInstallationConfig).
  DCGM metrics come from NVIDIA's dcgm-exporter alone, the way Google documents it for GKE nodes with GKE's driver
  (https://cloud.google.com/stackdriver/docs/managed-prometheus/exporters/nvidia-dcgm), scraped by the stack's own
  Prometheus. GKE's managed DCGM metrics (monitoring component DCGM) go to Cloud Monitoring only, where the stack's
  alert rules and dashboards cannot read them.
* operator on COS: NVIDIA's "Google Driver Installer" path (NVIDIA/cloud-native-docs gpu-operator/google-gke.rst):
  the pool installs no driver (INSTALLATION_DISABLED) and carries gke-no-default-nvidia-gpu-device-plugin=true,
  Google's COS driver-installer DaemonSet (manifests/nvidia-driver-installer-cos.yaml) builds the driver under
  /home/kubernetes/bin/nvidia, and the GPU Operator runs with driver.enabled=false, the toolkit installed there too,
  and its own device plugin with CDI (cdi.enabled; the pinned chart has no cdi.default any more).
* operator on Ubuntu: NVIDIA's "Driver Manager" path: no GKE driver, the same label, and the GPU Operator installs
  everything, its driver container included (its kernel module is not signed by Google: Secure Boot off).

The config rules (tritonfleet/clouds/gcp/config_rules.py) refuse the combinations none of these cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tritonfleet.clouds.gcp.facts import GKE_GPU_NODE_LABEL, GKE_NO_DEVICE_PLUGIN_LABEL
from tritonfleet.core.config import StackConfig
from tritonfleet.core.gpu_operator import OPTIONS_KEY

# Where GKE (and Google's installer) put the driver, and where the toolkit must go on GKE nodes (NVIDIA google-gke docs).
GKE_NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
# From GKE 1.33 the toolkit mis-reads containerd's config unless told to read the file (NVIDIA known issue).
TOOLKIT_FILE_CONFIG_FROM = (1, 33)
OPERATOR_PRIORITY_CLASSES = ["system-node-critical", "system-cluster-critical"]
# Operator pods per node at most (driver, toolkit, device plugin, GFD, DCGM exporter, validator, MIG manager, NFD, ...).
OPERATOR_PODS_PER_NODE = 10
COS_DRIVER_INSTALLER = Path(__file__).parent / "manifests" / "nvidia-driver-installer-cos.yaml"
# GKE API GPUDriverInstallationConfig.gpu_driver_version, per node image (see the module docstring).
GKE_DRIVER_VERSION = {"COS_CONTAINERD": "LATEST", "UBUNTU_CONTAINERD": "DEFAULT"}


@dataclass(frozen=True)
class GpuDriverSetup:
    mode: str  # gke-managed | operator
    image_type: str  # node image of the GPU pools
    driver_version: str  # guest_accelerators[].gpu_driver_installation_config.gpu_driver_version
    installer: str  # who installs the driver: gke, google-installer (DaemonSet, COS) or gpu-operator (Ubuntu)
    node_labels: dict[str, str] = field(default_factory=dict)  # labels every GPU node needs for this mode
    secure_boot: bool = True  # unsigned (operator-built) kernel modules do not load under Secure Boot


def gpu_driver_setup(config: StackConfig) -> GpuDriverSetup:
    cluster = config.cluster
    image = cluster.gke_gpu_node_image
    if cluster.gke_gpu_driver == "gke-managed":
        return GpuDriverSetup("gke-managed", image, GKE_DRIVER_VERSION[image], installer="gke")
    no_gke_plugin = {GKE_NO_DEVICE_PLUGIN_LABEL: "true"}
    if image == "COS_CONTAINERD":
        return GpuDriverSetup("operator", image, "INSTALLATION_DISABLED", "google-installer", no_gke_plugin)
    return GpuDriverSetup("operator", image, "INSTALLATION_DISABLED", "gpu-operator", no_gke_plugin, secure_boot=False)


def cos_driver_installer() -> dict[str, Any]:
    """Google's COS driver-installer DaemonSet, as pinned in manifests/ (the operator-on-COS path applies it)."""
    return yaml.safe_load(COS_DRIVER_INSTALLER.read_text())


def _minor(kubernetes_version: str) -> tuple[int, int]:
    major, minor = kubernetes_version.split(".")[:2]
    return int(major), int(minor)


def gke_gpu_operator_values(setup: GpuDriverSetup, kubernetes_version: str) -> dict[str, Any]:
    """The GPU Operator profile (tritonfleet/core/gpu_operator.py) that agrees with how the GPU nodes get their driver."""
    if setup.mode == "gke-managed":
        return {OPTIONS_KEY: {"install": False, "dcgmExporter": {"driverHostDir": GKE_NVIDIA_DIR, "gpuNodeLabel": GKE_GPU_NODE_LABEL}}}
    values: dict[str, Any]
    if setup.installer == "google-installer":
        values = {
            "driver": {"enabled": False},  # Google's installer built it
            "hostPaths": {"driverInstallDir": GKE_NVIDIA_DIR},
            "toolkit": {"installDir": GKE_NVIDIA_DIR},
            # NVIDIA's guide sets cdi.enabled and cdi.default; chart v26.7.0 has no cdi.default any more (CDI is
            # how its device plugin always injects devices once enabled), so only cdi.enabled is set.
            "cdi": {"enabled": True},
        }
    else:
        values = {"driver": {"enabled": True}, "toolkit": {}}
    if _minor(kubernetes_version) >= TOOLKIT_FILE_CONFIG_FROM:
        values["toolkit"]["env"] = [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]
    return values


def gpu_operator_resource_quota(config: StackConfig) -> dict[str, Any]:
    """The ResourceQuota spec GKE needs before it admits system-*-critical pods outside kube-system.

    NVIDIA's example allows 100 pods; a large fleet runs more operator pods than that, so the quota grows with
    the most nodes the stack can have.
    """
    most_nodes = sum(p.max_nodes for p in config.enabled_pools) + config.cluster.system_nodes.count
    return {
        "hard": {"pods": str(max(100, OPERATOR_PODS_PER_NODE * most_nodes + 10))},
        "scopeSelector": {
            "matchExpressions": [{"operator": "In", "scopeName": "PriorityClass", "values": list(OPERATOR_PRIORITY_CLASSES)}]
        },
    }
