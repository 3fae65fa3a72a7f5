"""What the plan says about an AWS stack beyond its pools and costs: where it is deployed from, the cluster version's EKS support dates,
and NAT data processing for model pulls where no S3 gateway endpoint can be asserted. Pure: facts and config only."""

from __future__ import annotations

from datetime import date
from typing import Any

from tritonfleet.clouds.aws.config_rules import deploy_path
from tritonfleet.clouds.aws.facts import SOCI_PUBLISHED_PULL, kubernetes_support
from tritonfleet.clouds.aws.support import control_plane
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import StackConfig


def plan_notes(config: StackConfig, today: date) -> dict[str, Any]:
    notes = {
        "kubernetes": kubernetes_support(config.cluster.kubernetes_version, today),
        "controlPlane": control_plane(config.cluster.kubernetes_version, config.environment, today),
        "modelPulls": model_pulls(config),
        "deployPath": deploy_path(config.cluster, config.environment).document(),
    }
    pulls = image_pulls(config)
    if pulls:  # only where a pool turns parallel pull on (shipped plans keep their notes)
        notes["imagePulls"] = pulls
    return notes


def image_pulls(config: StackConfig) -> str:
    """What SOCI parallel pull does for the pools that turn it on, in words: the budget keeps the download floor (the
    whole image still crosses the network), AWS's published measurement says what it saves; "" where no pool does."""
    pools = [pool.name for pool in config.enabled_pools if pool.parallel_image_pull]
    if not pools:
        return ""
    image = config.cluster.eks_gpu_node_image
    measured = SOCI_PUBLISHED_PULL["al2023_s" if image == "al2023" else "bottlerocket_s"]
    default, size = SOCI_PUBLISHED_PULL["default_s"], SOCI_PUBLISHED_PULL["image_bytes"] / 1e9
    return (
        f"Image pulls: SOCI parallel pull on the {image} nodes of {', '.join(pools)}. The whole image still downloads, "
        f"so the startup budget keeps its floor; AWS measured a {size:.1f} GB image in {measured:.0f} s instead of "
        f"{default:.0f} s ({measured / default:.2f}x). Record startup.measured.imagePullSeconds from a node."
    )


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
