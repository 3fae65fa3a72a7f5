"""The toy cloud's config rules (tritonfleet.core.config.rules.context.CloudConfigRules): its regions and zones, its
node limits, on-demand and spot only. Called by the neutral loader through the registry."""

from __future__ import annotations

from tritonfleet.core.config.rules.context import RuleContext
from tritonfleet.core.config.schema import Cluster, GpuPool, ModelBucket
from tritonfleet.core.exposure import Deployer, DeployPath

SERVICE_NAME = "Toy Kubernetes"
REGIONS = ("toy-east-1", "toy-west-1")
ZONE_LETTERS = "abc"
# The toy has no account or project of its own in the config: a new cloud cannot add a top-level config key (they are
# StackConfig fields), so its default bucket names carry the region (a neutral key) where AWS's carry awsAccountId.
BUCKET_OWNER_KEY, BUCKET_OWNER_FIELD, BUCKET_OWNER_EXAMPLE = "region", "region", REGIONS[0]
CLOUD_ONLY_CLUSTER_KEYS: dict[str, str] = {}
NODE_IMAGES = ("toy-os",)
TLS_SOURCES = ("secretName",)
TLS_EXAMPLES: dict[str, str] = {}
INGRESS_CLIENT_CIDRS = ""
APPLICATION_LB_GRPC_TLS_REFUSALS: dict[str, str] = {}
RESERVATION_EXAMPLE = "toy-reservation"
POOL_FALLBACK = False
MAX_NODES_PER_POOL = 10
MAX_NODES_PER_CLUSTER = 50


def stack_zones(region: str, cluster: Cluster) -> list[str]:
    return list(cluster.zones) or [f"{region}{letter}" for letter in ZONE_LETTERS[:2]]


def deploy_path(cluster: Cluster, environment: str) -> DeployPath:
    """The toy API endpoint admits every deployer."""
    return DeployPath(Deployer(cluster.deploy_from, tuple(cluster.deployer_cidrs)), "the toy API endpoint", True)


def check_stack(ctx: RuleContext) -> None:
    """No stack-wide rule of its own."""


def check_cluster(ctx: RuleContext, cluster: Cluster) -> None:
    """Zones are the region's: <region>a, <region>b or <region>c."""
    if ctx.region is None:
        return
    allowed = [f"{ctx.region}{letter}" for letter in ZONE_LETTERS]
    for i, zone in enumerate(cluster.zones):
        if zone not in allowed:
            ctx.add(f"cluster.zones[{i}]", zone, f"a zone of {ctx.region}: {', '.join(allowed)}", allowed[i % 3])


def check_purchase_option(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    if pool.capacity != "mixed":
        ctx.add(f"{at}.capacity", pool.capacity, "mixed: the toy cloud sells on-demand and spot nodes only", "mixed")


def check_mixed_pool(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """A toy node pool is all spot or all on-demand: the neutral split decides how many of each."""


def check_pool_labels(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """No rule on node labels beyond the neutral ones."""


def check_pool_image_pull(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """The toy cloud has no faster image pull."""
    if pool.parallel_image_pull:
        ctx.remove(f"{at}.parallelImagePull", True, "unset: the toy cloud pulls images one way only")


def check_pool_zones(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """Pools run in the stack's zones."""


def check_bucket(ctx: RuleContext, bucket: ModelBucket, at: str) -> None:
    if bucket.kms_key_id:
        ctx.remove(f"{at}.kmsKeyId", bucket.kms_key_id, "unset: the toy cloud has no key service")


def pool_node_limit(ctx: RuleContext, zones: list[str]) -> tuple[int, str]:
    return MAX_NODES_PER_POOL, f"{SERVICE_NAME} runs at most {MAX_NODES_PER_POOL} nodes in a node pool"


def cluster_node_limit() -> tuple[int, str]:
    return MAX_NODES_PER_CLUSTER, f"{SERVICE_NAME} runs at most {MAX_NODES_PER_CLUSTER} nodes in a cluster"


def node_local_ssd_gi(instance_type: str, region: str | None) -> int | None:
    return None  # the boot disk backs a toy node's ephemeral storage
