"""GCP config rules, beside the GCP facts: the project, tags as GCP labels, zones of the region, the GKE version on its
channel, the GPU driver mode's device-plugin label, purchase options and Cloud KMS keys.

Called by the neutral loader (tritonfleet/core/config) through the registry in tritonfleet/clouds; the contract is
`tritonfleet.core.config.rules.context.CloudConfigRules`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from tritonfleet.clouds.gcp.facts import (
    ACCESS_TOKEN_LIFETIME_S,
    COMPUTE_CLASS_MIN_VERSION,
    DNS_ENDPOINT_PERMISSION,
    EXTENDED_CHANNEL,
    FLEX_START_MAX_RUN_SECONDS,
    GCP_REGIONS,
    GKE_DEFAULT_REGION_ZONES,
    GKE_NO_DEVICE_PLUGIN_LABEL,
    KUBERNETES_SUPPORT,
    MACHINE_TYPE_ZONES,
    MAX_NODES_PER_CLUSTER,
    MAX_NODES_PER_POOL_ZONE,
    PROXY_ONLY_MAX_PREFIX,
    SERVICE_ACCOUNT_ID_MAX,
    SERVICE_ACCOUNT_ID_PATTERN,
    gke_version_at_least,
)
from tritonfleet.clouds.gcp.layout import PLANNED_RANGES, PROXY_ONLY_CIDR, RANGE_KEYS, planned_ranges
from tritonfleet.clouds.gcp.reservations import RESERVATION_FORMS, parse_reservation, reservation_fix
from tritonfleet.core import kubernetes_support, pins
from tritonfleet.core.config.problems import MISSING
from tritonfleet.core.config.rules.context import RuleContext
from tritonfleet.core.config.schema import Cluster, GpuPool, ModelBucket
from tritonfleet.core.exposure import Deployer, DeployPath

SERVICE_NAME = "GKE"
REGIONS = GCP_REGIONS
# Whose account or project default model bucket names carry (conventions.default_bucket_name): the config key, the
# StackConfig field and an example.
BUCKET_OWNER_KEY, BUCKET_OWNER_FIELD, BUCKET_OWNER_EXAMPLE = "gcpProject", "gcp_project", "my-project-id"
# Cluster keys that only mean something on GKE (config key -> field name).
CLOUD_ONLY_CLUSTER_KEYS = {
    "releaseChannel": "release_channel",
    "gpuDriver": "gpu_driver",
    "acknowledgeDatapathReplacement": "acknowledge_datapath_replacement",
    "proxyOnlySubnetCidr": "proxy_only_subnet_cidr",
    "gkeRanges": "gke_ranges",
    "gkeVersion": "gke_version",
}
NODE_IMAGES = ("COS_CONTAINERD", "UBUNTU_CONTAINERD")
TLS_SOURCES = ("preSharedCert", "secretName", "certManagerIssuer")
TLS_EXAMPLES = {"certManagerIssuer": "letsencrypt"}
INGRESS_CLIENT_CIDRS = ""  # a GKE Ingress or Gateway limits sources only through Cloud Armor or a firewall policy
# gRPC through an Application load balancer takes a GKE Gateway (components/gcp/exposure.py): its listener takes a
# pre-shared certificate or a Secret. cert-manager issues for a Gateway only with its Gateway API support turned on and
# an HTTP-01 solver routed through the Gateway (https://cert-manager.io/docs/usage/gateway/, read 2026-12-05), which
# tritonfleet does not set up; the REST-only GKE Ingress keeps cert-manager's ingress-shim.
APPLICATION_LB_GRPC_TLS_REFUSALS = {
    "certManagerIssuer": (
        "gRPC through the load balancer takes a GKE Gateway, and cert-manager issues for a Gateway only with its "
        "Gateway API support and an HTTP-01 solver on the Gateway, which tritonfleet does not set up"
    ),
}
RESERVATION_EXAMPLE = "my-reservation"
# fallbackPool: a pool's GKE compute class lists the fallback pool's node pools after its own
POOL_FALLBACK = True
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


def deploy_path(cluster: Cluster, environment: str) -> DeployPath:
    """The Kubernetes provider talks to the cluster's DNS-based endpoint, which takes traffic from any address and
    admits only callers IAM lets in (container.clusters.connect); controlPlaneCidrs governs the IP endpoint alone, for
    people. So every deploy source reaches it (docs/access.md; facts.DNS_ENDPOINT_PERMISSION)."""
    deployer = Deployer(cluster.deploy_from, tuple(cluster.deployer_cidrs))
    endpoint = (
        f"GKE DNS-based endpoint (any address, IAM {DNS_ENDPOINT_PERMISSION}; the provider's token lasts "
        f"{ACCESS_TOKEN_LIFETIME_S // 60} min)"
    )
    return DeployPath(deployer, endpoint, True)


def check_stack(ctx: RuleContext) -> None:
    if not ctx.data.get("gcpProject"):
        allowed = "the GCP project id that hosts the cluster (required when cloud is gcp)"
        ctx.add("gcpProject", MISSING, allowed, "my-project-id")
    if isinstance(ctx.data.get("tags"), Mapping):
        _check_tags_as_labels(ctx, ctx.data["tags"])
    if ctx.data.get("awsAccountId"):
        ctx.remove("awsAccountId", ctx.data["awsAccountId"], "unset: it applies to AWS only (GCP: gcpProject)")


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


NODE_ACCOUNT_SUFFIX = "-nodes"


def node_account_id(cluster_name: str) -> str:
    """The id of the nodes' service account: <cluster name>-nodes (tf-<stack>-nodes by default)."""
    return f"{cluster_name}{NODE_ACCOUNT_SUFFIX}"


def check_cluster(ctx: RuleContext, cluster: Cluster) -> None:
    _check_node_account_id(ctx, cluster)
    _check_system_nodes(ctx, cluster)
    _check_compute_class_version(ctx, cluster)
    if ctx.region is not None:
        region = ctx.region
        for i, zone in enumerate(cluster.zones):
            if not zone.startswith(f"{region}-"):
                ctx.add(f"cluster.zones[{i}]", zone, f"a zone of {region}, such as {region}-a", f"{region}-{'abc'[i % 3]}")
    _check_kubernetes_version(ctx, cluster)
    _check_ranges(ctx, cluster)
    _check_gke_build(ctx, cluster)
    _check_proxy_only_cidr(ctx, cluster)


def _check_ranges(ctx: RuleContext, cluster: Cluster) -> None:
    """cluster.gkeRanges: IPv4 networks, the control plane a private /28 (GKE's rule), no two overlapping."""
    if cluster.gke_ranges is None:
        return
    networks: dict[str, ipaddress.IPv4Network] = {}
    for word, cidr in planned_ranges(cluster.gke_ranges).items():
        key = f"cluster.gkeRanges.{RANGE_KEYS[word][0]}"
        try:
            networks[word] = network = ipaddress.IPv4Network(cidr, strict=True)
        except ValueError as exc:
            ctx.add(key, cidr, f"an IPv4 CIDR such as {PLANNED_RANGES[word]} ({exc})", PLANNED_RANGES[word])
            continue
        if word == "control-plane" and (network.prefixlen != 28 or not network.is_private):
            allowed = "a /28 of a private (RFC 1918) range that no network of yours uses, such as 10.255.255.0/28"
            ctx.add(key, cidr, allowed, "10.255.255.0/28")
    words = list(networks)
    for i, word in enumerate(words):
        clash = [other for other in words[:i] if networks[word].overlaps(networks[other])]
        if clash:
            plan = ", ".join(f"{w} {n}" for w, n in networks.items())
            allowed = f"a range apart from the {' and '.join(clash)} range ({plan})"
            ctx.add(f"cluster.gkeRanges.{RANGE_KEYS[word][0]}", str(networks[word]), allowed, "<a free range>")


def _check_gke_build(ctx: RuleContext, cluster: Cluster) -> None:
    """gkeVersion is a build of kubernetesVersion (the minor decides support, the build what the plan relies on)."""
    build = cluster.gke_version
    if build is not None and ".".join(build.split(".")[:2]) != cluster.kubernetes_version:
        allowed = f"a GKE build of kubernetesVersion {cluster.kubernetes_version} ({cluster.kubernetes_version}.N-gke.M)"
        ctx.add("cluster.gkeVersion", build, allowed, f"{cluster.kubernetes_version}.0-gke.0")


def _check_proxy_only_cidr(ctx: RuleContext, cluster: Cluster) -> None:
    """A proxy-only subnet of at least 64 addresses, apart from every range of the stack's address plan."""
    cidr, key = cluster.proxy_only_subnet_cidr, "cluster.proxyOnlySubnetCidr"
    if cidr is None:
        return
    try:
        network = ipaddress.IPv4Network(cidr, strict=True)
    except ValueError as exc:
        ctx.add(key, cidr, f"an IPv4 CIDR such as {PROXY_ONLY_CIDR} ({exc})", PROXY_ONLY_CIDR)
        return
    if network.prefixlen > PROXY_ONLY_MAX_PREFIX:
        allowed = f"a /{PROXY_ONLY_MAX_PREFIX} or larger range (a proxy-only subnet needs at least 64 addresses; /23 recommended)"
        ctx.add(key, cidr, allowed, str(network.supernet(new_prefix=23)))
    ranges = planned_ranges(cluster.gke_ranges)
    overlaps = [name for name, planned in ranges.items() if _overlaps(network, planned)]
    if overlaps:
        plan = ", ".join(f"{name} {planned}" for name, planned in ranges.items())
        allowed = f"a range outside the stack's {' and '.join(overlaps)} range ({plan})"
        ctx.add(key, cidr, allowed, PROXY_ONLY_CIDR)


def _overlaps(network: ipaddress.IPv4Network, cidr: str) -> bool:
    """Whether `network` overlaps `cidr` (a malformed `cidr` is reported by _check_ranges, not here)."""
    try:
        return network.overlaps(ipaddress.IPv4Network(cidr, strict=False))
    except ValueError:
        return False


def _check_node_account_id(ctx: RuleContext, cluster: Cluster) -> None:
    """The node account id derives from the cluster name; GCP refuses an id over 30 characters at `pulumi up`."""
    cluster_name = cluster.name or f"tf-{ctx.stack}"
    account_id = node_account_id(cluster_name)
    if re.match(SERVICE_ACCOUNT_ID_PATTERN, account_id):
        return
    room = SERVICE_ACCOUNT_ID_MAX - len(NODE_ACCOUNT_SUFFIX)
    allowed = (
        f"a cluster name of at most {room} characters: the nodes' service account id {account_id!r} "
        f"({len(account_id)} characters) must have 6-{SERVICE_ACCOUNT_ID_MAX} (lower-case letters, digits, '-'). "
        "Set it before the first `pulumi up`: renaming the cluster later replaces it"
    )
    ctx.add("cluster.name", cluster.name or MISSING, allowed, cluster_name[:room].rstrip("-"))


def _check_system_nodes(ctx: RuleContext, cluster: Cluster) -> None:
    """GKE creates a regional pool's initial nodes in every zone: the count must split evenly over its zones."""
    count, zones = cluster.system_nodes.count, len(cluster.zones) or GKE_DEFAULT_REGION_ZONES
    if cluster.zones and count < zones:
        return  # one node in each of the first `count` zones
    if count % zones:
        where = f"{zones} zones" if cluster.zones else f"GKE's {zones} default zones (cluster.zones is empty)"
        allowed = f"a multiple of the zone count ({where}; GKE creates the same number of system nodes in each zone)"
        ctx.add("cluster.systemNodes.count", count, allowed, count + zones - count % zones)


def _check_compute_class_version(ctx: RuleContext, cluster: Cluster) -> None:
    """Each GPU pool is scheduled through a custom compute class, which needs COMPUTE_CLASS_MIN_VERSION."""
    if not gke_version_at_least(cluster.gke_build, COMPUTE_CLASS_MIN_VERSION):
        allowed = (
            f"a GKE version of at least {COMPUTE_CLASS_MIN_VERSION}: tritonfleet schedules each GPU pool through a "
            "custom compute class"
        )
        ctx.add("cluster.kubernetesVersion", cluster.kubernetes_version, allowed, COMPUTE_CLASS_MIN_VERSION.split(".")[0] + ".31")


def kubernetes_version_support(cluster: Cluster) -> kubernetes_support.StackKubernetes:
    """The stack's GKE version, channel and support window (the plan prints its end)."""
    version, channel = cluster.kubernetes_version, cluster.gke_release_channel
    return kubernetes_support.StackKubernetes(
        service="GKE",
        version=version,
        channel=channel,
        extended=channel == EXTENDED_CHANNEL,
        support=kubernetes_support.find(KUBERNETES_SUPPORT, version),
    )


def _check_kubernetes_version(ctx: RuleContext, cluster: Cluster) -> None:
    """A minor version GKE supports today on the stack's channel (extended support only on the Extended channel)."""
    choice = kubernetes_version_support(cluster)
    version, extended, support = choice.version, choice.extended, choice.support
    day = kubernetes_support.today()
    if support is not None and support.supported_on(day, extended):
        return
    supported = kubernetes_support.supported_minors(KUBERNETES_SUPPORT, day, extended)
    scope = "extended" if extended else "standard"
    if support is None:
        why = "not in tritonfleet's GKE version table"
    else:
        why = f"its GKE {scope} support ended {support.support_ends(extended).isoformat()}"
        if not extended and support.supported_on(day, extended=True):
            why += f"; its extended support, until {support.support_ends(True).isoformat()}, needs releaseChannel EXTENDED"
    allowed = (
        f"a GKE minor version in {scope} support on {day.isoformat()}: {', '.join(supported) or 'none known'} "
        f"({why}; GKE release schedule https://cloud.google.com/kubernetes-engine/docs/release-schedule)"
    )
    suggestion = pins.KUBERNETES_VERSION if pins.KUBERNETES_VERSION in supported else (supported or ["<version>"])[-1]
    ctx.add("cluster.kubernetesVersion", version, allowed, suggestion)


def check_purchase_option(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    if pool.capacity == "capacity-block":
        allowed = "capacity-block is an AWS purchase option; on GCP use reservation or flex-start"
        ctx.add(f"{at}.capacity", pool.capacity, allowed, "reservation")
    if pool.reservation_id and parse_reservation(pool.reservation_id, "") is None:
        why = "a reservation block without its reservation: " if "reservationBlocks/" in pool.reservation_id else ""
        allowed = f"{why}a GCP reservation: {RESERVATION_FORMS}"
        ctx.add(f"{at}.reservationId", pool.reservation_id, allowed, reservation_fix(pool.reservation_id))
    if pool.capacity == "flex-start" and pool.min_nodes > 0:
        allowed = (
            f"0 on a flex-start pool: GKE removes a flex-start VM after at most {FLEX_START_MAX_RUN_SECONDS // 86400} "
            "days and a new one waits for capacity, so it cannot be a serving floor; keep the floor on a reservation "
            "or on-demand pool"
        )
        ctx.add(f"{at}.minNodes", pool.min_nodes, allowed, 0)


def check_mixed_pool(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """GKE node pools take one purchase option each and never fall back from spot to on-demand."""
    if pool.on_demand_fallback is not None:
        ctx.remove(
            f"{at}.onDemandFallback",
            pool.on_demand_fallback,
            "unset: on GCP each purchase option is its own node pool and spot never falls back to on-demand",
        )


def check_pool_image_pull(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """GKE has no parallel-pull switch: its GPU pools stream the Triton image (cluster.imageMirror)."""
    if pool.parallel_image_pull:
        ctx.remove(
            f"{at}.parallelImagePull",
            True,
            "unset: on GKE the GPU pools stream the image instead (image streaming, with cluster.imageMirror: true "
            "and COS nodes)",
        )


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
            "plugin, so no pod can request nvidia.com/gpu. The valid choices are gpuDriver gke-managed without this "
            "label, or gpuDriver operator (COS with Google's driver installer, or UBUNTU_CONTAINERD with the GPU "
            "Operator's driver; tritonfleet then sets the label itself)",
            fix_key=f"{at}.nodeLabels.{GKE_NO_DEVICE_PLUGIN_LABEL}",
        )


def node_local_ssd_gi(instance_type: str, region: str | None) -> int | None:
    """The machine's bundled local SSDs (the catalog's host.localSsd) back its ephemeral storage (the GPU node pools
    ask GKE for that); the same in every region."""
    from tritonfleet.core.catalog import load_catalog

    itype = load_catalog().find("gcp", instance_type)
    local = itype.host.local_ssd if itype else None
    return int(local.total_gib) if local else None


def check_pool_zones(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """Without cluster zones, a pool's zones must still be zones of the region; and where we know which zones offer
    the pool's machine type, every zone its node pool spans must offer it."""
    if ctx.region is None:
        return
    if not ctx.stack_zones:
        for i, zone in enumerate(pool.zones):
            if not zone.startswith(f"{ctx.region}-"):
                ctx.add(f"{at}.zones[{i}]", zone, f"a zone of {ctx.region}, such as {ctx.region}-b", f"{ctx.region}-b")
    _check_machine_type_zones(ctx, pool, at)


def _check_machine_type_zones(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    itype = ctx.catalog.find("gcp", pool.instance_type) if pool.instance_type else ctx.catalog.default_type("gcp", pool.gpu)
    offered = MACHINE_TYPE_ZONES.get(ctx.region or "", {}).get(itype.name) if itype else None
    zones = list(pool.zones or ctx.stack_zones)
    if offered is None or not zones:
        return  # not known offline, or GKE's default zones: `tritonfleet preflight` checks those
    # Zones outside the region or the cluster are reported by their own rules; only the valid ones are checked here.
    valid = [z for z in zones if z.startswith(f"{ctx.region}-") and (not ctx.stack_zones or z in ctx.stack_zones)]
    missing = [z for z in valid if z not in offered]
    if not missing:
        return
    allowed = (
        f"zones that offer {itype.name} in {ctx.region}: {', '.join(offered)} ({', '.join(missing)} does not; "
        "GCP machine-type zones, tritonfleet/clouds/gcp/facts.py; `tritonfleet preflight` asks Compute Engine)"
    )
    if pool.zones:  # drop the zones that do not offer it
        for i, zone in enumerate(pool.zones):
            if zone in missing:
                ctx.remove(f"{at}.zones[{i}]", zone, allowed)
    else:  # the pool spans the cluster's zones: give it its own
        keep = [z for z in valid if z in offered] or list(offered[:1])
        ctx.add(f"{at}.zones[0]", f"unset (the cluster's zones {', '.join(zones)})", allowed, keep[0])


def pool_node_limit(ctx: RuleContext, zones: list[str]) -> tuple[int, str]:
    count = len(zones or ctx.stack_zones) or 1
    limit = MAX_NODES_PER_POOL_ZONE * count
    return limit, f"GKE runs at most {MAX_NODES_PER_POOL_ZONE:,} nodes of a node pool per zone ({count} zone(s) here)"


def cluster_node_limit() -> tuple[int, str]:
    return MAX_NODES_PER_CLUSTER, f"GKE runs at most {MAX_NODES_PER_CLUSTER:,} nodes in a cluster"


def check_bucket(ctx: RuleContext, bucket: ModelBucket, at: str) -> None:
    if bucket.kms_key_id and not re.match(KMS_KEY_PATTERN, bucket.kms_key_id):
        allowed = f"a Cloud KMS key name such as {KMS_KEY_EXAMPLE}, or unset"
        ctx.add(f"{at}.kmsKeyId", bucket.kms_key_id, allowed, KMS_KEY_EXAMPLE)
        return
    location = bucket.kms_key_id.split("/")[3] if bucket.kms_key_id else None
    if location is not None and ctx.region is not None and location != ctx.region:
        # The bucket is regional in the stack's region (components/gcp/bucket.py), and its default key must be in
        # the bucket's location: https://cloud.google.com/storage/docs/encryption/customer-managed-keys ("Key
        # residency": the key must be in the same location as the data it encrypts), read 2026-12-05.
        allowed = (
            f"a Cloud KMS key in {ctx.region}, the bucket's location (the key is in {location}; GCS encrypts with a "
            "key of the bucket's own location only)"
        )
        parts = bucket.kms_key_id.split("/")
        parts[3] = ctx.region
        ctx.add(f"{at}.kmsKeyId", bucket.kms_key_id, allowed, "/".join(parts))
