"""How long a GKE spot node's pods get to stop, from the cluster's GKE build (pure: facts only)."""

from __future__ import annotations

from dataclasses import dataclass

from tritonfleet.clouds.gcp.facts import (
    SPOT_CRITICAL_POD_SHUTDOWN_SECONDS,
    SPOT_EXTENDED_SHUTDOWN_MIN_VERSION,
    SPOT_EXTENDED_SHUTDOWN_SECONDS,
    SPOT_NOTICE_SECONDS,
    SPOT_POD_SHUTDOWN_SECONDS,
    gke_version_at_least,
)


@dataclass(frozen=True)
class SpotShutdown:
    """Graceful node shutdown of a spot node: the node's window and the non-system Pods' share of it."""

    window_seconds: int
    pod_seconds: int
    extended: bool  # the stack sets the window on its spot node pools (kubelet config)


def spot_shutdown(kubernetes_version: str) -> SpotShutdown:
    """GKE's 30 s notice with 15 s for Pods, or the extended 120 s window where the cluster version offers it."""
    if gke_version_at_least(kubernetes_version, SPOT_EXTENDED_SHUTDOWN_MIN_VERSION):
        window = SPOT_EXTENDED_SHUTDOWN_SECONDS
        return SpotShutdown(window, window - SPOT_CRITICAL_POD_SHUTDOWN_SECONDS, extended=True)
    return SpotShutdown(SPOT_NOTICE_SECONDS, SPOT_POD_SHUTDOWN_SECONDS, extended=False)
