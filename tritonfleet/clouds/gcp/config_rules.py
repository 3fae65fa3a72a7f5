"""GCP config rules, beside the GCP facts: the project, tags as GCP labels, zones of the region, the GPU driver mode
with its node image and device-plugin label, purchase options and Cloud KMS keys.

Called by the neutral loader (tritonfleet/core/config) through the registry in tritonfleet/clouds; the contract is
`tritonfleet.core.config.rules.context.CloudConfigRules`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tritonfleet.clouds.gcp.facts import GCP_REGIONS, GKE_NO_DEVICE_PLUGIN_LABEL
from tritonfleet.core.config.problems import MISSING
from tritonfleet.core.config.rules.context import RuleContext
from tritonfleet.core.config.schema import Cluster, GpuPool, ModelBucket

SERVICE_NAME = "GKE"
REGIONS = GCP_REGIONS
# Cluster keys that only mean something on GKE (config key -> field name).
CLOUD_ONLY_CLUSTER_KEYS = {
    "releaseChannel": "release_channel",
    "gpuDriver": "gpu_driver",
    "acknowledgeDatapathReplacement": "acknowledge_datapath_replacement",
}
NODE_IMAGES = ("COS_CONTAINERD", "UBUNTU_CONTAINERD")
TLS_SOURCES = ("preSharedCert", "secretName", "certManagerIssuer")
TLS_EXAMPLES = {"certManagerIssuer": "letsencrypt"}
PUBLIC_CLIENT_CIDRS = ""  # a GKE Ingress filters sources only through a Cloud Armor policy
RESERVATION_EXAMPLE = "my-reservation"
KMS_KEY_PATTERN = (
    r"^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/locations/[a-z0-9-]+/keyRings/[A-Za-z0-9_-]+/cryptoKeys/[A-Za-z0-9_-]+$"
)
KMS_KEY_EXAMPLE = "projects/my-project/locations/us-central1/keyRings/models/cryptoKeys/models"
LABEL_RULE = (
    "a GCP label (tags become resource labels on GCP): keys start with a lower-case letter, keys and values have at "
    "most 63 lower-case letters, digits, '_' or '-'"
)


def stack_zones(region: str, cluster: Cluster) -> list[str]:
    return list(cluster.zones)


def check_stack(ctx: RuleContext) -> None:
    if not ctx.data.get("gcpProject"):
        allowed = "the GCP project id that hosts the cluster (required when cloud is gcp)"
        ctx.add("gcpProject", MISSING, allowed, "my-project-id")
    if isinstance(ctx.data.get("tags"), Mapping):
        _check_tags_as_labels(ctx, ctx.data["tags"])


def _is_label_text(text: str, key: bool) -> bool:
    """GCP's rule for a label key or value (lower-case letters, including international ones, digits, _ and -)."""
    if len(text) > 63 or (key and not (text and text[0].isalpha() and text[0] == text[0].lower())):
        return False
    return all(c.isdigit() or c in "_-" or (c.isalpha() and c == c.lower()) for c in text)


def _check_tags_as_labels(ctx: RuleContext, tags: Mapping[Any, Any]) -> None:
    """GKE, node pools and buckets take the stack's tags as labels; the API rejects what AWS tags allow."""
    for key, value in tags.items():
        if not _is_label_text(str(key), key=True):
            ctx.remove(f"tags.{key}", value, f"{LABEL_RULE} (key {key!r})")
        elif not _is_label_text(str(value), key=False):
            ctx.add(f"tags.{key}", value, LABEL_RULE, re.sub(r"[^a-z0-9_-]", "-", str(value).lower())[:63])


def check_cluster(ctx: RuleContext, cluster: Cluster) -> None:
    if ctx.region is not None:
        region = ctx.region
        for i, zone in enumerate(cluster.zones):
            if not zone.startswith(f"{region}-"):
                ctx.add(f"cluster.zones[{i}]", zone, f"a zone of {region}, such as {region}-a", f"{region}-{'abc'[i % 3]}")
    if cluster.gke_gpu_driver == "operator" and cluster.gke_gpu_node_image != "UBUNTU_CONTAINERD":
        ctx.add(
            "cluster.gpuNodeImage",
            cluster.gpu_node_image,
            "UBUNTU_CONTAINERD: the GPU Operator's driver container does not run on Container-Optimized OS. "
            "The two valid choices are gpuDriver gke-managed (any image; GKE installs the driver) or "
            "gpuDriver operator with gpuNodeImage UBUNTU_CONTAINERD",
            "UBUNTU_CONTAINERD",
        )


def check_purchase_option(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    if pool.capacity == "capacity-block":
        allowed = "capacity-block is an AWS purchase option; on GCP use reservation or flex-start"
        ctx.add(f"{at}.capacity", pool.capacity, allowed, "reservation")


def check_pool_labels(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """GKE's device-plugin switch may only be set by tritonfleet itself, in operator driver mode."""
    if GKE_NO_DEVICE_PLUGIN_LABEL not in pool.node_labels:
        return
    driver = ctx.cluster.gke_gpu_driver if ctx.cluster is not None else "gke-managed"
    if driver == "gke-managed":
        ctx.remove(
            f"{at}.nodeLabels",
            pool.node_labels,
            f"no {GKE_NO_DEVICE_PLUGIN_LABEL} label while GKE installs the driver: it switches off GKE's device "
            "plugin, so no pod can request nvidia.com/gpu. The two valid choices are gpuDriver gke-managed "
            "without this label, or gpuDriver operator on UBUNTU_CONTAINERD (tritonfleet then sets the label itself)",
            fix_key=f"{at}.nodeLabels.{GKE_NO_DEVICE_PLUGIN_LABEL}",
        )


def check_pool_zones(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """Without cluster zones, a pool's zones must still be zones of the region."""
    if ctx.stack_zones or ctx.region is None:
        return
    for i, zone in enumerate(pool.zones):
        if not zone.startswith(f"{ctx.region}-"):
            ctx.add(f"{at}.zones[{i}]", zone, f"a zone of {ctx.region}, such as {ctx.region}-b", f"{ctx.region}-b")


def check_bucket(ctx: RuleContext, bucket: ModelBucket, at: str) -> None:
    if bucket.kms_key_id and not re.match(KMS_KEY_PATTERN, bucket.kms_key_id):
        allowed = f"a Cloud KMS key name such as {KMS_KEY_EXAMPLE}, or unset"
        ctx.add(f"{at}.kmsKeyId", bucket.kms_key_id, allowed, KMS_KEY_EXAMPLE)
