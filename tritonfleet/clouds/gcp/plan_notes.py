"""What the plan says about a GCP stack beyond its pools and costs: where it is deployed from, the cluster version's GKE support dates on the
stack's release channel. Pure: facts and config only."""

from __future__ import annotations

from datetime import date
from typing import Any

from tritonfleet.clouds.gcp.config_rules import deploy_path, kubernetes_version_support
from tritonfleet.clouds.gcp.facts import SPOT_EXTENDED_SHUTDOWN_MIN_VERSION
from tritonfleet.clouds.gcp.spot import spot_shutdown
from tritonfleet.core.config import StackConfig


def plan_notes(config: StackConfig, today: date) -> dict[str, Any]:
    notes: dict[str, Any] = {
        "kubernetes": kubernetes_version_support(config.cluster).plan_note(today),
        "deployPath": deploy_path(config.cluster, config.environment).document(),
    }
    if any(p.capacity == "mixed" and p.spot_share > 0 for p in config.enabled_pools):
        notes["spotShutdown"] = spot_shutdown_note(config)
    return notes


def spot_shutdown_note(config: StackConfig) -> dict[str, Any]:
    """How long a spot node's pods get to stop, judged on the cluster's GKE build (gkeVersion, else the minor's
    first build), and the build that extends it."""
    shutdown = spot_shutdown(config.cluster.gke_build)
    return {
        "gkeBuild": config.cluster.gke_build,
        "windowSeconds": shutdown.window_seconds,
        "podSeconds": shutdown.pod_seconds,
        "extendedFrom": SPOT_EXTENDED_SHUTDOWN_MIN_VERSION,
    }
