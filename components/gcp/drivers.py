"""How NVIDIA drivers reach GKE GPU nodes, and the GPU Operator values that agree with it (plain data, no Pulumi).

Two consistent setups exist (shared/reference/gpu-kubernetes-facts.md §3.1, §3.2, §4.2):

* gke-managed: GKE installs the driver (`gpu_driver_version=LATEST`) and runs its own device plugin. The GPU
  Operator must then install neither a driver nor a second device plugin.
* operator: GKE installs nothing (`INSTALLATION_DISABLED`), the node carries
  `gke-no-default-nvidia-gpu-device-plugin=true` so GKE's device plugin stays away, and the GPU Operator's driver
  container builds the driver, which needs Ubuntu nodes (`UBUNTU_CONTAINERD`) and Secure Boot off (its kernel
  module is not signed by Google).

The config validation in tritonfleet/core/config.py rejects every other combination before this code runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tritonfleet.clouds.gcp.facts import GKE_NO_DEVICE_PLUGIN_LABEL
from tritonfleet.core.config import StackConfig

# Where GKE puts the driver it installs, and where the toolkit must go on GKE nodes (NVIDIA google-gke docs).
GKE_NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
# From GKE 1.33 the toolkit mis-reads containerd's config unless told to read the file (NVIDIA known issue).
TOOLKIT_FILE_CONFIG_FROM = (1, 33)
OPERATOR_PRIORITY_CLASSES = ["system-node-critical", "system-cluster-critical"]
# Operator pods per node at most (driver, toolkit, device plugin, GFD, DCGM exporter, validator, MIG manager, NFD, ...).
OPERATOR_PODS_PER_NODE = 10


@dataclass(frozen=True)
class GpuDriverSetup:
    mode: str  # gke-managed | operator
    image_type: str  # node image of the GPU pools
    driver_version: str  # guest_accelerators[].gpu_driver_installation_config.gpu_driver_version
    node_labels: dict[str, str] = field(default_factory=dict)  # labels every GPU node needs for this mode
    secure_boot: bool = True  # unsigned (operator-built) kernel modules do not load under Secure Boot


def gpu_driver_setup(config: StackConfig) -> GpuDriverSetup:
    cluster = config.cluster
    if cluster.gke_gpu_driver == "operator":
        return GpuDriverSetup(
            mode="operator",
            image_type=cluster.gke_gpu_node_image,
            driver_version="INSTALLATION_DISABLED",
            node_labels={GKE_NO_DEVICE_PLUGIN_LABEL: "true"},
            secure_boot=False,
        )
    # LATEST rather than DEFAULT: current Triton images need a recent driver branch (VERIFY per GKE version).
    return GpuDriverSetup(mode="gke-managed", image_type=cluster.gke_gpu_node_image, driver_version="LATEST")


def _minor(kubernetes_version: str) -> tuple[int, int]:
    major, minor = kubernetes_version.split(".")[:2]
    return int(major), int(minor)


def gke_gpu_operator_values(setup: GpuDriverSetup, kubernetes_version: str) -> dict[str, Any]:
    """GPU Operator Helm values that agree with how the GPU nodes get their driver (merge over the release's own)."""
    values: dict[str, Any]
    if setup.mode == "gke-managed":
        values = {
            "driver": {"enabled": False},  # GKE installed it
            "devicePlugin": {"enabled": False},  # GKE's device plugin already serves nvidia.com/gpu
            "migManager": {"enabled": False},  # GKE partitions MIG itself (gpu_partition_size)
            "hostPaths": {"driverInstallDir": GKE_NVIDIA_DIR},
            "toolkit": {"installDir": GKE_NVIDIA_DIR},
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
