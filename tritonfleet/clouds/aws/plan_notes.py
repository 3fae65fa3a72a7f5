"""What the plan says about an AWS stack beyond its pools and costs: where it is deployed from, the cluster version's EKS support dates,
and NAT data processing for model pulls where no S3 gateway endpoint can be asserted. Pure: facts and config only."""

from __future__ import annotations

from datetime import date
from typing import Any

from tritonfleet.clouds.aws.config_rules import deploy_path
from tritonfleet.clouds.aws.facts import kubernetes_support
from tritonfleet.clouds.aws.support import control_plane
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import StackConfig


def plan_notes(config: StackConfig, today: date) -> dict[str, Any]:
    return {
        "kubernetes": kubernetes_support(config.cluster.kubernetes_version, today),
        "controlPlane": control_plane(config.cluster.kubernetes_version, config.environment, today),
        "modelPulls": model_pulls(config),
        "deployPath": deploy_path(config.cluster, config.environment).document(),
    }


def model_pulls(config: StackConfig) -> dict[str, Any]:
    """How model downloads from S3 leave the private subnets, and what NAT charges for them.

    A VPC tritonfleet creates has an S3 gateway endpoint: pulls bypass NAT and cost nothing per GB. An existing VPC may
    or may not have one (only `tritonfleet preflight` can ask EC2), so the per-GB NAT processing price is shown with
    the volume it applies to: model repository size x replicas started x pulls per replica start (Triton copies an
    s3:// repository to local disk at every start). The repository size is not in the config, so the monthly figure
    is unknown, never 0.
    """
    if not config.cluster.existing_vpc_id:
        return {"path": "S3 gateway endpoint (created with the VPC)", "natUsdPerGb": 0.0, "monthlyUsd": 0.0}
    found = load_catalog().service_price("aws", "nat-processing", config.region)
    price: float | str = found.usd if found else "unknown"
    return {
        "path": f"unknown: existing VPC {config.cluster.existing_vpc_id} (an S3 gateway endpoint cannot be asserted offline)",
        "natUsdPerGb": price,
        "monthlyUsd": "unknown",
        "volume": "model repository GB x Triton replica starts per month (each start copies its models from S3)",
    }
