"""GPU Operator profiles: what a cloud adapter hands up in `ClusterFacts.gpu_operator_values` for its node image.

A profile is a dict of gpu-operator chart value overrides, plus one key of ours, `OPTIONS_KEY`, that the Kubernetes
layer removes before the values reach the chart:
  install             bool, default True  - False when the cloud's own GPU stack owns driver and device plugin
  priorityClassQuota  bool, default False - create the ResourceQuota GKE requires before pods of the
                                            system-node-critical / system-cluster-critical classes may run outside
                                            kube-system (without it every operator pod is rejected)
Sources: shared/reference/gpu-kubernetes-facts.md §2.2, §3.2, §4.2 and trap 3, 6 (VERIFY on first deploy).
"""

from __future__ import annotations

from typing import Any

OPTIONS_KEY = "tritonfleet"

# GKE >= 1.33: the toolkit mis-writes containerd's config.toml unless it reads the runtime config from the file.
_GKE_TOOLKIT_ENV = {"env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]}
_GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"

PROFILES: dict[str, dict[str, Any]] = {
    # EKS AL2023 NVIDIA AMI: driver and container toolkit are on the AMI; the operator adds the device plugin,
    # GPU feature discovery and DCGM. NVIDIA ships no Amazon Linux driver container.
    "eks-al2023-nvidia": {"driver": {"enabled": False}, "toolkit": {"enabled": False}},
    # EKS Bottlerocket NVIDIA: the AMI also runs the device plugin; a second one would double-advertise GPUs.
    "eks-bottlerocket-nvidia": {"driver": {"enabled": False}, "toolkit": {"enabled": False}, "devicePlugin": {"enabled": False}},
    # GKE COS with Google's driver installer (node pool gpu-driver-version=disabled + the
    # gke-no-default-nvidia-gpu-device-plugin=true label + Google's installer DaemonSet): the operator does the rest.
    "gke-cos-google-driver": {
        "driver": {"enabled": False},
        "hostPaths": {"driverInstallDir": _GKE_DRIVER_DIR},
        "toolkit": {"installDir": _GKE_DRIVER_DIR, **_GKE_TOOLKIT_ENV},
        "cdi": {"enabled": True},
        OPTIONS_KEY: {"priorityClassQuota": True},
    },
    # GKE Ubuntu (UBUNTU_CONTAINERD, INSTALLATION_DISABLED, the same node label): the operator installs the driver.
    "gke-ubuntu-nvidia-driver": {"toolkit": _GKE_TOOLKIT_ENV, OPTIONS_KEY: {"priorityClassQuota": True}},
    # GKE-managed driver and device plugin (gpu_driver_version DEFAULT/LATEST): no operator; GKE's stack owns the GPUs.
    "gke-managed": {OPTIONS_KEY: {"install": False}},
}


def profile_options(profile: dict[str, Any]) -> dict[str, bool]:
    """Our options of a profile, with their defaults filled in."""
    options = profile.get(OPTIONS_KEY, {})
    unknown = set(options) - {"install", "priorityClassQuota"}
    if unknown:
        raise ValueError(f"unknown GPU Operator profile options: {sorted(unknown)}")
    return {"install": bool(options.get("install", True)), "priorityClassQuota": bool(options.get("priorityClassQuota", False))}


def chart_overrides(profile: dict[str, Any]) -> dict[str, Any]:
    """The profile's gpu-operator chart values (our options removed)."""
    return {k: v for k, v in profile.items() if k != OPTIONS_KEY}
