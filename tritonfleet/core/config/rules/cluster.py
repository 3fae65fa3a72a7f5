"""Cluster rules every cloud shares: a region of this cloud, keys that belong to another cloud, a node image of this
cloud."""

from __future__ import annotations

import ipaddress

from tritonfleet.core.config.problems import Problem, choose_from, nearest, set_command
from tritonfleet.core.config.rules.context import RuleContext
from tritonfleet.core.exposure import ANYWHERE, HOSTED_CI


def check_region(ctx: RuleContext) -> None:
    """The region is one of this cloud's (its facts' table). Otherwise it is reported, said to be another cloud's if
    it is, and forgotten (ctx.region = None) so that no zone is checked against it or suggested from it."""
    from tritonfleet.core.cloud import cloud, cloud_names

    region = ctx.data.get("region")
    if ctx.rules is None or "region" not in ctx.data or region in ctx.rules.REGIONS:
        return
    ctx.region = None
    name = str(ctx.cloud)
    owner = next((c for c in cloud_names() if c != name and region in cloud(c).rules.REGIONS), None)
    whose = f"{region} is a {owner.upper()} region, not an {name.upper()} one; " if owner else ""
    allowed = f"{whose}one of the {name.upper()} regions: " + ", ".join(ctx.rules.REGIONS)
    meant = _region_meant(region, ctx.rules.REGIONS, another_clouds=owner is not None)
    ctx.add("region", region, allowed, meant or choose_from(ctx.rules.REGIONS))


def _region_meant(region: object, regions: tuple[str, ...], another_clouds: bool) -> str | None:
    """The region meant: the same name in this cloud's spelling (GCP us-east1 -> AWS us-east-1), or, for a name no
    cloud has, the closest by spelling. Another cloud's region gets no guess (us-central1 is not eu-central-1)."""
    if not isinstance(region, str):
        return None
    squashed = {r.replace("-", ""): r for r in regions}
    same = squashed.get("".join(c for c in region.lower() if c.isalnum()))
    return same or (None if another_clouds else nearest(region, regions, cutoff=0.8))


def check_other_cloud_keys(ctx: RuleContext) -> None:
    """A cluster key that only another cloud uses is refused, not ignored."""
    from tritonfleet.core.cloud import cloud, cloud_names

    assert ctx.cluster is not None
    for other in (c for c in cloud_names() if c != ctx.cloud):
        rules = cloud(other).rules
        for key, field_name in rules.CLOUD_ONLY_CLUSTER_KEYS.items():
            value = getattr(ctx.cluster, field_name)
            if value:
                ctx.remove(f"cluster.{key}", value, f"unset: it applies to {rules.SERVICE_NAME} only")


def check_node_image(ctx: RuleContext) -> None:
    assert ctx.cluster is not None and ctx.rules is not None
    images = ctx.rules.NODE_IMAGES
    if ctx.cluster.gpu_node_image is not None and ctx.cluster.gpu_node_image not in images:
        ctx.add("cluster.gpuNodeImage", ctx.cluster.gpu_node_image, f"on {ctx.cloud}: " + " or ".join(images), images[0])


def check_control_plane(ctx: RuleContext) -> None:
    """Valid CIDRs; the whole internet in prod only when acknowledged."""
    assert ctx.cluster is not None
    cidrs = ctx.cluster.control_plane_cidrs or []
    for i, cidr in enumerate(cidrs):
        try:
            ipaddress.IPv4Network(cidr, strict=True)
        except ValueError as exc:
            ctx.add(f"cluster.controlPlaneCidrs[{i}]", cidr, f"a CIDR such as 198.51.100.0/24 ({exc})", "198.51.100.0/24")
            continue
        if cidr == ANYWHERE and ctx.data.get("environment") == "prod" and not ctx.cluster.acknowledge_public_control_plane:
            allowed = (
                "your CI runners' and administrators' networks: prod's API server is not open to the internet unless "
                "cluster.acknowledgePublicControlPlane is true (or [] for private only)"
            )
            ctx.add(f"cluster.controlPlaneCidrs[{i}]", cidr, allowed, "198.51.100.0/24")


def check_system_nodes(ctx: RuleContext) -> None:
    """System nodes are CPU nodes: an accelerated type there would run GPUs (or Trainium, TPUs...) that no GPU pool,
    budget or GPU limit counts."""
    from tritonfleet.core.cloud import cloud

    assert ctx.cluster is not None and ctx.cloud is not None
    instance_type = ctx.cluster.system_nodes.instance_type
    carries = cloud(ctx.cloud).accelerator(instance_type) if instance_type else None
    if carries:
        allowed = (
            f"a CPU instance/machine type: {instance_type} carries {carries}, and system nodes are not counted in "
            "the GPU budget or GPU limit (put accelerators in gpuPools); unset for the default"
        )
        ctx.remove("cluster.systemNodes.instanceType", instance_type, allowed)


def check_deploy_path(ctx: RuleContext) -> None:
    """deployerCidrs are CIDRs, given exactly when the source has addresses, and the deployer reaches the API
    endpoint the cloud's cluster would have (else every Kubernetes object times out after the cloud resources exist)."""
    assert ctx.cluster is not None
    cluster = ctx.cluster
    cidrs_ok = True
    for i, cidr in enumerate(cluster.deployer_cidrs):
        try:
            ipaddress.IPv4Network(cidr, strict=True)
        except ValueError as exc:
            cidrs_ok = False
            ctx.add(f"cluster.deployerCidrs[{i}]", cidr, f"a CIDR such as 198.51.100.0/24 ({exc})", "198.51.100.0/24")
    if cluster.deploy_from == HOSTED_CI and cluster.deployer_cidrs:
        allowed = "unset with deployFrom hosted-ci (hosted runners have no fixed address); or set deployFrom"
        ctx.remove("cluster.deployerCidrs", cluster.deployer_cidrs, allowed)
        return
    if cluster.deploy_from != HOSTED_CI and not cluster.deployer_cidrs:
        allowed = f"the IPv4 CIDRs `pulumi up` connects from, required with deployFrom {cluster.deploy_from}"
        ctx.add("cluster.deployerCidrs[0]", cluster.deployer_cidrs, allowed, "198.51.100.0/24")
        return
    if not cidrs_ok or ctx.rules is None:
        return
    path = ctx.rules.deploy_path(cluster, str(ctx.data.get("environment")))
    if not path.reachable:
        fix = " && ".join(set_command(key, value, ctx.stack) for key, value in path.fixes) or "see docs/access.md"
        allowed = f"a deployer that reaches the API endpoint: {path.why} (docs/access.md)"
        ctx.problems.append(Problem("cluster.deployFrom", cluster.deploy_from, allowed, fix))
