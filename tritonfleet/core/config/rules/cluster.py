"""Cluster rules every cloud shares: keys that belong to another cloud, and a node image of this cloud."""

from __future__ import annotations

from tritonfleet.core.config.rules.context import RuleContext


def check_other_cloud_keys(ctx: RuleContext) -> None:
    """A cluster key that only another cloud uses is refused, not ignored."""
    from tritonfleet.clouds import CLOUDS, cloud_rules

    assert ctx.cluster is not None
    for other in (c for c in CLOUDS if c != ctx.cloud):
        rules = cloud_rules(other)
        for key, field_name in rules.CLOUD_ONLY_CLUSTER_KEYS.items():
            value = getattr(ctx.cluster, field_name)
            if value:
                ctx.remove(f"cluster.{key}", value, f"unset: it applies to {rules.SERVICE_NAME} only")


def check_node_image(ctx: RuleContext) -> None:
    assert ctx.cluster is not None and ctx.rules is not None
    images = ctx.rules.NODE_IMAGES
    if ctx.cluster.gpu_node_image is not None and ctx.cluster.gpu_node_image not in images:
        ctx.add("cluster.gpuNodeImage", ctx.cluster.gpu_node_image, f"on {ctx.cloud}: " + " or ".join(images), images[0])
