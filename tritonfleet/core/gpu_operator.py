"""GPU Operator profiles: what a cloud adapter hands up in `ClusterFacts.gpu_operator_values` for its node image.

A profile is a dict of gpu-operator chart value overrides, plus one key of ours, `OPTIONS_KEY`, that the Kubernetes
layer removes before the values reach the chart:
  install  bool, default True - False when the cloud's own GPU stack owns driver, device plugin and monitoring
The EKS profiles are AWS facts (tritonfleet/clouds/aws/facts.py GPU_OPERATOR_PROFILES); GKE's depend on the stack's
driver mode and Kubernetes version and are built by components/gcp/drivers.py.
"""

from __future__ import annotations

from typing import Any

OPTIONS_KEY = "tritonfleet"


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
