"""GPU Operator profiles: what a cloud adapter hands up in `ClusterFacts.gpu_operator_values` for its node image.

A profile is a dict of gpu-operator chart value overrides, plus one key of ours, `OPTIONS_KEY`, that the Kubernetes
layer removes before the values reach the chart:
  install  bool, default True - False when the cloud's own GPU stack owns driver, device plugin and monitoring
The EKS profiles live here; GKE's depend on the stack's driver mode and Kubernetes version and are built by
components/gcp/drivers.py. Sources: shared/reference/gpu-kubernetes-facts.md §2.2, §3.2, §4.2 and traps 3, 6
(VERIFY on first deploy).
"""

from __future__ import annotations

from typing import Any

OPTIONS_KEY = "tritonfleet"

PROFILES: dict[str, dict[str, Any]] = {
    # EKS AL2023 NVIDIA AMI: driver and container toolkit are on the AMI; the operator adds the device plugin,
    # GPU feature discovery and DCGM. NVIDIA ships no Amazon Linux driver container.
    "eks-al2023-nvidia": {"driver": {"enabled": False}, "toolkit": {"enabled": False}},
    # EKS Bottlerocket NVIDIA: the AMI also runs the device plugin; a second one would double-advertise GPUs.
    "eks-bottlerocket-nvidia": {"driver": {"enabled": False}, "toolkit": {"enabled": False}, "devicePlugin": {"enabled": False}},
}


def profile_options(profile: dict[str, Any]) -> dict[str, bool]:
    """Our options of a profile, with their defaults filled in."""
    options = profile.get(OPTIONS_KEY, {})
    unknown = set(options) - {"install"}
    if unknown:
        raise ValueError(f"unknown GPU Operator profile options: {sorted(unknown)}")
    return {"install": bool(options.get("install", True))}


def chart_overrides(profile: dict[str, Any]) -> dict[str, Any]:
    """The profile's gpu-operator chart values (our options removed)."""
    return {k: v for k, v in profile.items() if k != OPTIONS_KEY}
