"""What the plan says about a GCP stack beyond its pools and costs: where it is deployed from, the cluster version's GKE support dates on the
stack's release channel. Pure: facts and config only."""

from __future__ import annotations

from datetime import date
from typing import Any

from tritonfleet.clouds.gcp.config_rules import deploy_path, kubernetes_version_support
from tritonfleet.core.config import StackConfig


def plan_notes(config: StackConfig, today: date) -> dict[str, Any]:
    return {
        "kubernetes": kubernetes_version_support(config.cluster).plan_note(today),
        "deployPath": deploy_path(config.cluster, config.environment).document(),
    }
