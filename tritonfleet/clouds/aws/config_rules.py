"""AWS config rules, beside the AWS facts: zones of the region, an existing VPC with its subnets, admin principals,
the pinned EKS AMI release, purchase options, capacity-block zones and KMS keys.

Called by the neutral loader (tritonfleet/core/config) through the registry in tritonfleet/clouds; the contract is
`tritonfleet.core.config.rules.context.CloudConfigRules`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from datetime import date

from tritonfleet.clouds.aws.facts import (
    AWS_REGIONS,
    AWS_ZONE_COUNT,
    CAPACITY_RESERVATION_ID_PATTERN,
    EKS_PUBLIC_ACCESS_CIDRS_MAX,
    MAX_NODES_PER_CLUSTER,
    SOCI_ON_RAID0_BOTTLEROCKET_SINCE,
    SOCI_PARALLEL_PULL_SINCE,
    TAG_LIMITS,
    eks_version,
    standard_eks_versions,
    supported_eks_versions,
)
from tritonfleet.clouds.aws.zones import aws_zones
from tritonfleet.core import pins
from tritonfleet.core.config.problems import MISSING, Problem, set_command
from tritonfleet.core.config.rules.context import RuleContext
from tritonfleet.core.config.schema import Cluster, GpuPool, ModelBucket
from tritonfleet.core.exposure import (
    ANYWHERE,
    HOSTED_CI,
    PUBLIC_CIDRS,
    Deployer,
    DeployPath,
    control_plane_access,
    uncovered,
)

SERVICE_NAME = "AWS"
REGIONS = AWS_REGIONS
# Whose account or project default model bucket names carry (conventions.default_bucket_name): the config key, the
# StackConfig field and an example.
BUCKET_OWNER_KEY, BUCKET_OWNER_FIELD, BUCKET_OWNER_EXAMPLE = "awsAccountId", "aws_account_id", "123456789012"
# Cluster keys that only mean something on AWS (config key -> field name).
CLOUD_ONLY_CLUSTER_KEYS = {
    "adminPrincipals": "admin_principals",
    "existingLoadBalancerCidrs": "existing_load_balancer_cidrs",
    "amiReleaseVersion": "ami_release_version",
    "existingPrivateSubnets": "existing_private_subnets",
    "existingVpcId": "existing_vpc_id",
}
NODE_IMAGES = ("al2023", "bottlerocket")
TLS_SOURCES = ("certificateArn",)
TLS_EXAMPLES = {"certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/<id>"}
INGRESS_CLIENT_CIDRS = "the ALB's inbound-cidrs"
# The ALB carries gRPC (backend protocol version GRPC) whatever its certificate.
APPLICATION_LB_GRPC_TLS_REFUSALS: dict[str, str] = {}
RESERVATION_EXAMPLE = "cr-0123456789abcdef0"
# fallbackPool: EKS has no compute classes; a mixed pool (onDemandBase + spotShare) is one node group set
POOL_FALLBACK = False
KMS_KEY_PATTERN = r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9_-]+$"
KMS_ALIAS_PATTERN = r"^(arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:)?alias/[A-Za-z0-9/_-]+$"
KMS_KEY_EXAMPLE = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SUBNET_EXAMPLE = "subnet-0123456789abcdef0"
VPC_EXAMPLE = "vpc-0123456789abcdef0"


def stack_zones(region: str, cluster: Cluster) -> list[str]:
    return aws_zones(region, cluster)


TAG_KEY_MAX, TAG_VALUE_MAX = TAG_LIMITS["key_max"], TAG_LIMITS["value_max"]
TAG_PATTERN, TAG_RESERVED_PREFIX = TAG_LIMITS["pattern"], TAG_LIMITS["reserved_prefix"]
TAG_RULE = (
    f"an AWS tag: a key of 1-{TAG_KEY_MAX} characters not starting with {TAG_RESERVED_PREFIX}, a value of at most "
    f"{TAG_VALUE_MAX}; letters, digits, spaces and _ . : / = + - @"
)


def check_stack(ctx: RuleContext) -> None:
    """The stack's tags go on every AWS resource: the API rejects keys and values past AWS's tag limits."""
    tags = ctx.data.get("tags")
    if not isinstance(tags, Mapping):
        return
    for key, value in tags.items():
        key_text, value_text = str(key), str(value)
        if not 0 < len(key_text) <= TAG_KEY_MAX or key_text.lower().startswith(TAG_RESERVED_PREFIX) or not re.match(TAG_PATTERN, key_text):
            ctx.remove(f"tags.{key_text}", value, f"{TAG_RULE} (key of {len(key_text)} characters)")
        elif len(value_text) > TAG_VALUE_MAX or not re.match(TAG_PATTERN, value_text):
            fitted = re.sub(r"[^\w\s.:/=+\-@]", "-", value_text)[:TAG_VALUE_MAX]
            ctx.add(f"tags.{key_text}", value, f"{TAG_RULE} (value of {len(value_text)} characters)", fitted)


def deploy_path(cluster: Cluster, environment: str) -> DeployPath:
    """How the deployer reaches the EKS endpoint (docs/access.md). The private endpoint is always on; the public one
    admits controlPlaneCidrs. Hosted runners have no fixed address: only a public endpoint open to 0.0.0.0/0 admits
    them (both endpoints authenticate every request through IAM and access entries). Known public addresses need
    controlPlaneCidrs to contain them. A runner in the network reaches the private endpoint through the cluster
    security group, which the stack opens on 443 to deployerCidrs; a VPC the stack creates holds no runner and no
    VPN on the first `up`, so that path needs an existing VPC. Source: https://docs.aws.amazon.com/eks/latest/
    userguide/cluster-endpoint.html (read 2026-12-05): a private-only endpoint is reached from the VPC or a connected
    network, and the cluster security group must admit the client on 443."""
    deployer = Deployer(cluster.deploy_from, tuple(cluster.deployer_cidrs))
    access = control_plane_access(cluster.control_plane_cidrs, environment)
    public = "private only" if access.private_only else f"public from {', '.join(access.public_cidrs)}"
    if deployer.source == HOSTED_CI:
        if access.anywhere:
            return DeployPath(deployer, "EKS public endpoint, open to 0.0.0.0/0 (IAM-authenticated)", True)
        why = (
            f"hosted runners have no fixed address (their published ranges are far more than EKS's "
            f"{EKS_PUBLIC_ACCESS_CIDRS_MAX} public CIDRs) and the EKS endpoint is {public}: open it to {ANYWHERE} "
            "(prod: with acknowledgePublicControlPlane), or deploy from a runner in an existing VPC "
            "(deployFrom private-network, existingVpcId, deployerCidrs)"
        )
        fixes: list[tuple[str, object]] = [("cluster.controlPlaneCidrs[0]", ANYWHERE)]
        if environment == "prod":
            fixes.append(("cluster.acknowledgePublicControlPlane", True))
        return DeployPath(deployer, f"EKS endpoint, {public}", False, why, tuple(fixes))
    if deployer.source == PUBLIC_CIDRS:
        missing = uncovered(deployer.cidrs, access.public_cidrs)
        if not missing:
            return DeployPath(deployer, f"EKS public endpoint, {public}", True)
        why = f"deployerCidrs {', '.join(missing)} are outside the EKS endpoint's CIDRs ({public}): add them"
        start = len(access.public_cidrs)
        fixes = [(f"cluster.controlPlaneCidrs[{start + i}]", cidr) for i, cidr in enumerate(missing)]
        return DeployPath(deployer, f"EKS endpoint, {public}", False, why, tuple(fixes))
    endpoint = f"EKS private endpoint, 443 from {', '.join(deployer.cidrs)} on the cluster security group"
    if cluster.existing_vpc_id:
        return DeployPath(deployer, endpoint, True)
    why = (
        "the stack creates its VPC, so no runner or VPN is inside it on the first `up`: name an existing VPC with "
        "the runner's network (existingVpcId, existingPrivateSubnets, existingLoadBalancerCidrs), or deploy from "
        "hosted-ci or public-cidrs"
    )
    return DeployPath(deployer, endpoint, False, why, (("cluster.existingVpcId", VPC_EXAMPLE),))


def check_cluster(ctx: RuleContext, cluster: Cluster) -> None:
    if ctx.region is None:
        return
    version_supported = _check_kubernetes_version(ctx, cluster, date.today())
    _check_zones(ctx, cluster, ctx.region)
    _check_existing_vpc(ctx, cluster)
    _check_existing_subnets(ctx, cluster, ctx.region)
    _check_admin_principals(ctx, cluster)
    if version_supported:  # an AMI pin for a version EKS refuses would only add a misleading second fix
        _check_ami_release(ctx, cluster)


def _check_kubernetes_version(ctx: RuleContext, cluster: Cluster, today: date) -> bool:
    """A version EKS supports today (standard or extended support); past that EKS neither creates nor keeps it."""
    version = cluster.kubernetes_version
    row = eks_version(version)
    if row is not None and row.supported(today):
        return True
    supported = supported_eks_versions(today)
    standard = standard_eks_versions(today)
    why = (
        f"EKS support for {version} ended on {row.end_of_extended}"
        if row is not None and row.end_of_extended
        else f"{version} is not in tritonfleet's EKS version table"
    )
    allowed = (
        f"a version EKS supports on {today}: {', '.join(supported) or 'none known: update EKS_VERSIONS'} "
        f"({why}; in standard support, without the extended-support fee: {', '.join(standard) or 'none known'})"
    )
    ctx.add("cluster.kubernetesVersion", version, allowed, (standard or supported or [pins.KUBERNETES_VERSION])[0])
    return False


def _zone_of(region: str, zone: str) -> bool:
    return re.fullmatch(rf"{re.escape(region)}[a-z]", zone) is not None


def _check_zones(ctx: RuleContext, cluster: Cluster, region: str) -> None:
    """Zones of the region, each once, at least two (EKS), at most as many as the region has."""
    for i, zone in enumerate(cluster.zones):
        if not _zone_of(region, zone):
            allowed = f"a zone of {region}: {region} followed by one letter, such as {region}a"
            ctx.add(f"cluster.zones[{i}]", zone, allowed, f"{region}{'abc'[i % 3]}")
        elif zone in cluster.zones[:i]:
            ctx.add(f"cluster.zones[{i}]", zone, "a zone not listed twice", f"{region}{'abc'[i % 3]}")
    if 0 < len(cluster.zones) < 2:
        allowed = "at least two zones (EKS needs subnets in two zones)"
        ctx.add("cluster.zones", cluster.zones, allowed, [f"{region}a", f"{region}b"])
    zone_count = AWS_ZONE_COUNT.get(region)
    if zone_count is not None and len(set(cluster.zones)) > zone_count:
        ctx.add(
            "cluster.zones",
            cluster.zones,
            f"at most {zone_count} zones: {region} has {zone_count} availability zones",
            cluster.zones[:zone_count],
        )


def _check_existing_vpc(ctx: RuleContext, cluster: Cluster) -> None:
    """existingVpcId comes with the CIDRs of its load balancers' subnets, each an IPv4 network."""
    if cluster.existing_vpc_id and not cluster.existing_load_balancer_cidrs:
        allowed = (
            "the IPv4 CIDRs of existingVpcId's load-balancer subnets, which hold no node (see `aws ec2 describe-subnets`); "
            "not the VPC CIDR, where the VPC CNI gives pods their addresses"
        )
        fix = set_command("cluster.existingLoadBalancerCidrs[0]", "10.0.224.0/24", ctx.stack)
        ctx.problems.append(Problem("cluster.existingLoadBalancerCidrs", MISSING, allowed, fix))
    for i, cidr in enumerate(cluster.existing_load_balancer_cidrs):
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError as exc:
            ctx.add(f"cluster.existingLoadBalancerCidrs[{i}]", cidr, f"a CIDR such as 10.0.224.0/24 ({exc})", "10.0.224.0/24")
    if cluster.existing_load_balancer_cidrs and not cluster.existing_vpc_id:
        ctx.add("cluster.existingVpcId", MISSING, "the VPC id the existingLoadBalancerCidrs belong to", VPC_EXAMPLE)


def _check_existing_subnets(ctx: RuleContext, cluster: Cluster, region: str) -> None:
    """An existing VPC brings private subnets in at least two zones of the region; the zones follow them."""
    subnets = cluster.existing_private_subnets
    if cluster.existing_vpc_id and len(subnets) < 2:
        ctx.add(
            "cluster.existingPrivateSubnets",
            subnets,
            "a map of at least two zones to private subnet ids of existingVpcId (EKS needs subnets in two zones)",
            {f"{region}a": "subnet-0123456789abcdef0", f"{region}b": "subnet-0123456789abcdef1"},
        )
    if subnets and not cluster.existing_vpc_id:
        ctx.add("cluster.existingVpcId", MISSING, "the VPC id the existingPrivateSubnets belong to", VPC_EXAMPLE)
    for zone, subnet in subnets.items():
        if not _zone_of(region, zone):
            ctx.add(f"cluster.existingPrivateSubnets.{zone}", subnet, f"keys are zones of {region}, such as {region}a", subnet)
        if not re.fullmatch(r"subnet-[0-9a-f]{8,17}", subnet):
            ctx.add(f"cluster.existingPrivateSubnets.{zone}", subnet, f"a subnet id such as {SUBNET_EXAMPLE}", SUBNET_EXAMPLE)
    if subnets and cluster.zones and set(subnets) != set(cluster.zones):
        allowed = "the zones of existingPrivateSubnets (or leave zones unset): " + ", ".join(subnets)
        ctx.add("cluster.zones", cluster.zones, allowed, list(subnets))


def _check_admin_principals(ctx: RuleContext, cluster: Cluster) -> None:
    """Well-formed ARNs; in prod at least one. A prod cluster whose only admin is the deployer (CI's role) has no
    break-glass access when CI is down or its role is changed: EKS access entries are the only way in
    (authenticationMode API)."""
    if ctx.data.get("environment") == "prod" and not cluster.admin_principals:
        account = ctx.data.get("awsAccountId") or "123456789012"
        allowed = (
            "in prod, at least one IAM role of the people who administer the cluster (break-glass access besides "
            "the deployer's role)"
        )
        ctx.add("cluster.adminPrincipals[0]", MISSING, allowed, f"arn:aws:iam::{account}:role/platform-admin")
    for i, principal in enumerate(cluster.admin_principals):
        if not re.fullmatch(r"arn:aws(-[a-z]+)*:iam::\d{12}:(role|user)/[\w+=,.@/-]+", principal):
            allowed = "an IAM role or user ARN, arn:aws:iam::<12-digit account>:role/<name>"
            ctx.add(f"cluster.adminPrincipals[{i}]", principal, allowed, "arn:aws:iam::123456789012:role/platform-admin")


def _check_ami_release(ctx: RuleContext, cluster: Cluster) -> None:
    """An AMI release for the node image and Kubernetes version: the pinned one, or a well-formed one of the user's."""
    release, image, version = cluster.ami_release_version, cluster.eks_gpu_node_image, cluster.kubernetes_version
    if release is None:
        if pins.eks_ami_release(image, version) is None:
            where = (
                f"`aws ssm get-parameter --name /aws/service/bottlerocket/aws-k8s-{version}-nvidia/x86_64/latest/image_version`"
                if image == "bottlerocket"
                else "the amazon-eks-ami releases page"
            )
            ctx.add(
                "cluster.amiReleaseVersion",
                MISSING,
                f"an EKS {image} AMI release for Kubernetes {version} (none is pinned for it); see {where}",
            )
    elif not re.fullmatch(pins.EKS_AMI_RELEASE_PATTERN[image].format(k8s=re.escape(version)), release):
        example = pins.eks_ami_release(image, version) or "<release>"
        ctx.add(
            "cluster.amiReleaseVersion",
            release,
            f"a {image} release for Kubernetes {version}, like "
            + ("1.35.7-20260903 (<k8s version>.<patch>-<date>)" if image == "al2023" else "1.42.0-a1b2c3d4"),
            example,
        )


def check_purchase_option(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """Reserved pools (capacity-block, reservation = an On-Demand Capacity Reservation) name an EC2 capacity
    reservation id, which Karpenter's EC2NodeClass selects (capacityReservationSelectorTerms[].id)."""
    if pool.capacity == "flex-start":
        ctx.add(f"{at}.capacity", pool.capacity, "flex-start is a GCP purchase option; on AWS use capacity-block", "capacity-block")
    if pool.reservation_id and not re.fullmatch(CAPACITY_RESERVATION_ID_PATTERN, pool.reservation_id):
        kind = "On-Demand Capacity Reservation" if pool.capacity == "reservation" else "capacity block"
        ctx.add(
            f"{at}.reservationId",
            pool.reservation_id,
            f"the EC2 id of the {kind}: cr- followed by lowercase letters and digits (aws ec2 "
            "describe-capacity-reservations)",
            RESERVATION_EXAMPLE,
        )


def check_mixed_pool(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """A spot-only pool (onDemandFallback: false) is all spot: Karpenter cannot hold part of a burst on-demand."""
    has_spot = pool.spot_share > 0 and pool.max_nodes > pool.on_demand_base
    if pool.on_demand_fallback is False and has_spot and pool.spot_share < 1:
        ctx.add(
            f"{at}.spotShare",
            pool.spot_share,
            "1: a pool without on-demand fallback (onDemandFallback: false) is spot only; or unset onDemandFallback",
            1,
        )


def check_pool_labels(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """No AWS rule on node labels beyond the neutral ones."""


def parallel_pull_since(image: str) -> str:
    """The oldest AMI release of `image` whose GPU nodes pull with SOCI parallel pull under our node classes: AL2023
    from the release that ships it; Bottlerocket from the one whose instance-store bind puts SOCI's layers on NVMe."""
    return SOCI_PARALLEL_PULL_SINCE["al2023"] if image == "al2023" else SOCI_ON_RAID0_BOTTLEROCKET_SINCE


def release_at_least(image: str, release: str, since: str) -> bool:
    """Whether an EKS AMI release (AL2023 `1.33.5-20251120`: its date; Bottlerocket `1.46.0-a1b2c3d4`: its version)
    is `since` or later."""
    head, _, tail = release.partition("-")
    if image == "al2023":
        return tail >= since
    version = tuple(int(part) for part in head.split(".") if part.isdigit())
    return version >= tuple(int(part) for part in since.split("."))


def check_pool_image_pull(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """SOCI parallel pull (parallelImagePull) needs GPU nodes of an AMI release that has it."""
    cluster = ctx.cluster
    if not pool.parallel_image_pull or cluster is None:
        return
    image, version = cluster.eks_gpu_node_image, cluster.kubernetes_version
    release = cluster.ami_release_version or pins.eks_ami_release(image, version)
    if release is None or not re.fullmatch(pins.EKS_AMI_RELEASE_PATTERN[image].format(k8s=re.escape(version)), release):
        return  # the cluster's rules report a missing or malformed release
    since = parallel_pull_since(image)
    if release_at_least(image, release, since):
        return
    allowed = (
        f"unset, or GPU nodes of {image} release {since} or later (cluster.amiReleaseVersion is {release}): "
        + ("SOCI parallel pull ships in AL2023 from v20250821"
           if image == "al2023"
           else "before 1.46.0 Karpenter's instance-store RAID0 leaves SOCI's layers on the EBS data volume")
    )
    pinned = pins.eks_ami_release(image, version)
    if pinned is not None and release_at_least(image, pinned, since):
        ctx.add("cluster.amiReleaseVersion", release, allowed, pinned)
    else:
        ctx.remove(f"{at}.parallelImagePull", True, allowed)


def node_local_ssd_gi(instance_type: str, region: str | None) -> int | None:
    """GiB of instance-store NVMe that back a GPU node's ephemeral storage: Karpenter's EC2NodeClass builds a RAID0
    array of it (instanceStorePolicy RAID0) for the kubelet, containerd and pods' ephemeral storage. Counted on the
    smallest array the pool's NodePools may launch (the type and its spot-diversity types in `region`), less the kubelet's
    eviction threshold and Triton's image; None for a type without instance store (the root volume then)."""
    from tritonfleet.clouds.aws.node_pools import NODE_IMAGES_GI, diversified_types, nvme_room_gi
    from tritonfleet.core.catalog import load_catalog

    itype = load_catalog().find("aws", instance_type)
    if itype is None:
        return None
    room = nvme_room_gi(diversified_types(itype, region) if region else [itype.name])
    return int(room - NODE_IMAGES_GI) if room > 0 else None


def check_pool_zones(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """A capacity block lives in one zone, so its pool names exactly that zone."""
    if pool.capacity == "capacity-block" and len(pool.zones) != 1:
        ctx.add(
            f"{at}.zones",
            pool.zones or MISSING,
            "exactly one zone: the availability zone of the capacity block (its nodes can only launch there)",
            ctx.stack_zones[:1] or ["<zone>"],
        )


def pool_node_limit(ctx: RuleContext, zones: list[str]) -> tuple[int, str]:
    return cluster_node_limit()  # Karpenter's NodePools bound nodes only through the limits tritonfleet sets


def cluster_node_limit() -> tuple[int, str]:
    return MAX_NODES_PER_CLUSTER, f"EKS runs at most {MAX_NODES_PER_CLUSTER:,} nodes in a cluster"


def check_bucket(ctx: RuleContext, bucket: ModelBucket, at: str) -> None:
    """A KMS key ARN. Not an alias: the Triton roles' kms:Decrypt grant names the key as its Resource, and IAM never
    matches an alias ARN there (the request carries the key ARN); resolving the alias would need a cloud call."""
    key = bucket.kms_key_id
    if not key or re.match(KMS_KEY_PATTERN, key):
        return
    if re.match(KMS_ALIAS_PATTERN, key):
        allowed = (
            "a KMS key ARN, not an alias: an IAM grant on an alias ARN never matches the key; find the key ARN with "
            f"`aws kms describe-key --key-id {key} --query KeyMetadata.Arn`"
        )
    else:
        allowed = f"a KMS key ARN such as {KMS_KEY_EXAMPLE}, or unset"
    ctx.add(f"{at}.kmsKeyId", key, allowed, KMS_KEY_EXAMPLE)
