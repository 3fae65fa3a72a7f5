"""What each GPU pool becomes under Karpenter: its EC2NodeClass, its NodePools and its warm-capacity placeholders.

Plain data, no Pulumi (components/aws/gpu_node_pools.py creates them). One configured pool becomes, in the order
Karpenter fills them (NodePool `weight`, highest first; every NodePool of a pool matches the same Triton pods, since
they carry the same labels and taint):

- `<pool>-reserved` (capacity-block / reservation pools): capacity type `reserved`, the reservation named in the
  EC2NodeClass's capacityReservationSelectorTerms, limit = maxNodes;
- `<pool>-base`: on-demand only, limit = onDemandBase: the base is on-demand first;
- `<pool>-burst`: the nodes above the base. With a spot share it allows spot AND on-demand (unless
  onDemandFallback: false): Karpenter prefers spot and launches on-demand in the same provisioning round when EC2 says
  spot is unavailable (tritonfleet/clouds/aws/facts.py SPOT_FALLS_BACK_TO_ON_DEMAND). It diversifies across every
  catalog type with the pool's GPU that `burst_instance_types` admits.

The tiers come from the one cost model (`tritonfleet.core.cost.capacity_tiers`), so the limits add up to maxNodes and
the plan, the budget policy and preflight count each pool's maximum once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tritonfleet.clouds.aws.facts import (
    AL2023_FAST_IMAGE_PULL_GATE,
    AMI_ALIAS_FAMILY,
    BOTTLEROCKET_SOCI_SETTINGS,
    KARPENTER_CAPACITY_TYPES,
    KARPENTER_DISCOVERY_TAG,
)
from tritonfleet.clouds.aws.layout import IMAGE_VOLUME_DEVICE
from tritonfleet.clouds.aws.zones import pool_zones
from tritonfleet.core import pins
from tritonfleet.core.capacity import CapacityTier, capacity_tiers, split_nodes
from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import POOL_LABEL, gpu_taint, pool_node_labels
from tritonfleet.core.disruption import consolidation_delay_seconds, drain_seconds
from tritonfleet.core.placement import floor_placement

if TYPE_CHECKING:
    from tritonfleet.core.startup import ImagePullPath

NODE_POOL_API = "karpenter.sh/v1"
NODE_CLASS_API = "karpenter.k8s.aws/v1"
GPU_RESOURCE = "nvidia.com/gpu"
# Higher weight wins among NodePools that fit a pod: prepaid reservations, then the on-demand base, then the burst.
TIER_WEIGHT = {"reserved": 100, "base": 50, "burst": 10}

# Disruption fitted to serving. WhenEmpty: Karpenter never consolidates a node that runs a Triton replica (it would
# evict it mid-request to pack pods tighter); it removes a GPU node only once nothing but daemons runs there, after
# consolidateAfter: the longest model load of the pool's deployments, at least 10 minutes (a lull shorter than a
# reload does not cost one; tritonfleet/core/disruption.py consolidation_delay_seconds). Warm placeholders keep their
# nodes non-empty.
CONSOLIDATION_POLICY = "WhenEmpty"
# Voluntary disruption (drift after an AMI bump, empty nodes) takes at most one node of a NodePool at a time, so a
# rollout of a new AMI replaces GPU nodes one by one while the PodDisruptionBudgets pace the replicas on them.
DISRUPTION_BUDGETS = [{"nodes": "1", "reasons": ["Drifted"]}, {"nodes": "100%", "reasons": ["Empty"]}]
# GPU nodes never expire. Expiration is forceful in Karpenter v1: it does not wait for disruption budgets or spin up
# a replacement first, and nodes launched together expire together; a p5en full of 1-GPU llm replicas with 20-minute
# loads needs hours of PDB-paced drain. Kernel and driver fixes reach the nodes through drift instead: bumping the
# pinned AMI release (pins.EKS_AMI_RELEASES, the EC2NodeClass's amiSelectorTerms alias) drifts every node, and drift
# is graceful (budgets above, PDBs respected). Source: karpenter-provider-aws v1.14 concepts/disruption.md
# ("Automated Graceful Methods": drift, consolidation; "Automated Forceful Methods": expiration, interruption, node
# repair), https://karpenter.sh/v1.14/concepts/disruption/, read 2026-12-05.
EXPIRE_AFTER = "Never"
# How long Karpenter lets a draining node honour PodDisruptionBudgets before it deletes the remaining pods: at least
# an hour, and at least a PDB-paced drain of a node full of the pool's slowest deployment (`drain_seconds`).
MIN_TERMINATION_GRACE_SECONDS = 3600
# The EBS volume of a GPU node is layout.IMAGE_VOLUME_DEVICE (AL2023's root, Bottlerocket's data volume). With
# instanceStorePolicy RAID0 the kubelet, containerd (images) and pods' ephemeral storage (Triton's model copy) live on
# the instance-store NVMe array instead, so that volume mostly holds the OS.
# What the NVMe array keeps for itself besides pods' ephemeral storage: the Triton image (about 20 GiB unpacked) and
# the kubelet's default hard eviction threshold (nodefs.available 10%).
NODE_IMAGES_GI = 30
EVICTION_SHARE = 0.10

# Warm capacity: Karpenter keeps no minimum node count. Triton's own minReplicas keep the nodes the placement gives
# them (tritonfleet/core/placement.py); only where minNodes asks for more does the pool run placeholder pods, one per
# missing node, each asking for a whole node's GPUs, at a negative priority. They never stand beside Triton's floor
# (the bug this replaced: minNodes placeholders opened minNodes nodes next to the replicas' own). Any Triton pod that
# finds no room preempts one; the evicted placeholder goes Pending and Karpenter launches a node for it (up to the
# NodePool limits), so the warm node count holds as Triton grows (the plan's ceiling counts it). Chosen over
# Karpenter's CapacityBuffer and static capacity because both are ALPHA feature gates, off by default in chart 1.14.1
# (tests/upstream/karpenter-1.14.1/values.yaml); this is the overprovisioning pattern Karpenter's FAQ and the
# cluster-proportional-autoscaler docs describe and needs nothing but a PriorityClass.
# Annotation on each NodePool: its nodes at the plan's floor (Triton's minReplicas and the warm nodes, in weight
# order). Karpenter ignores it; the policy pack reads it as the NodePool's minimum (policies/_pools.py).
FLOOR_ANNOTATION = "tritonfleet.io/floor-nodes"
PLACEHOLDER_PRIORITY_CLASS = "tritonfleet-warm-capacity"
PLACEHOLDER_PRIORITY = -10
PLACEHOLDER_NAMESPACE = "tritonfleet-capacity"


def ami_alias(config: StackConfig) -> str:
    """amiSelectorTerms alias `<family>@v<version>`, from the one pinned EKS AMI release of the cluster's version
    (pins.EKS_AMI_RELEASES or cluster.amiReleaseVersion): AL2023 `1.33.5-20251120` -> `al2023@v20251120`,
    Bottlerocket `1.42.0-a1b2c3d4` -> `bottlerocket@v1.42.0`. Karpenter takes the NVIDIA variant for GPU types."""
    image = config.cluster.eks_gpu_node_image
    release = config.cluster.ami_release_version or pins.eks_ami_release(image, config.cluster.kubernetes_version)
    assert release is not None, "validated configs always resolve"
    version = release.split("-", 1)[1] if image == "al2023" else release.split("-", 1)[0]
    return f"{AMI_ALIAS_FAMILY[image]}@v{version}"


def burst_instance_types(config: StackConfig, pool: GpuPool) -> list[str]:
    """The instance types of the pool's burst NodePool (`diversified_types` of its type)."""
    return diversified_types(config.instance_type(pool), config.region)


def diversified_types(itype: InstanceType, region: str) -> list[str]:
    """The pool's type first, then catalog types with the same CPU architecture (one node image), GPU and GPU count, at
    least its vCPUs and memory, sold
    as spot, whose spot price in `region` is known and not above the pool type's on-demand price there, and whose
    on-demand price there is not below it. Prices are the region's (core/catalog.py): where one of them is unknown,
    no type is admitted on a reference region's figure, and the pool's type stays alone.

    Several types let spot draw from more capacity pools (price-capacity-optimized). The same GPU count keeps a node's
    GPUs what Triton replicas and placeholders pack against; the size floor keeps every node able to run what fits on
    the pool's type; the spot ceiling means diversity never costs more than the on-demand node it replaces; the
    on-demand floor keeps the pool's type the cheapest on-demand fallback (EC2 Fleet picks the lowest price), so the
    fallback ceiling priced at that type holds whenever it has on-demand capacity.
    """
    on_demand = itype.price("on-demand", region)
    ceiling = on_demand.usd if on_demand else None

    def fits(other: InstanceType) -> bool:
        spot, other_on_demand = other.price("spot", region), other.price("on-demand", region)
        return (
            other.name != itype.name
            and other.host.arch == itype.host.arch
            and other.gpu_count == itype.gpu_count
            and other.vcpu >= itype.vcpu
            and other.memory_gib >= itype.memory_gib
            and "spot" in other.purchase_options
            and spot is not None
            and ceiling is not None
            and spot.usd <= ceiling
            and other_on_demand is not None
            and other_on_demand.usd >= ceiling
        )

    others = sorted((t for t in load_catalog().types_for("aws", itype.gpu) if fits(t)), key=lambda t: (t.vcpu, t.name))
    return [itype.name, *(t.name for t in others)]


@dataclass(frozen=True)
class NodePoolSpec:
    """One Karpenter NodePool of a pool: its tier, Kubernetes name and manifest spec (EC2NodeClass named by pool)."""

    pool: str
    tier: str  # reserved, base or burst
    name: str  # metadata.name (cluster-scoped)
    nodes: int  # the most nodes it may run (its limits)
    capacity_types: tuple[str, ...]
    instance_types: tuple[str, ...]
    spec: dict[str, Any]
    floor_nodes: int = 0  # nodes of this NodePool up at the plan's floor (FLOOR_ANNOTATION)

    def metadata(self) -> dict[str, Any]:
        """The NodePool's metadata: its name, and the floor the policy pack counts (Karpenter keeps no minimum)."""
        return {"name": self.name, "annotations": {FLOOR_ANNOTATION: str(self.floor_nodes)}}


def _tier_capacity_types(tier: CapacityTier) -> tuple[str, ...]:
    types: list[str] = []
    for option in tier.purchase:
        types += [t for t in KARPENTER_CAPACITY_TYPES[option] if t not in types]
    return tuple(types)


def _capacity_label(tier: CapacityTier) -> str:
    """The tritonfleet.io/capacity label of a tier's nodes: its preferred purchase option. A burst node that fell back
    to on-demand still says spot here; Karpenter's own karpenter.sh/capacity-type label says what it is."""
    return tier.purchase[0]


def termination_grace_seconds(config: StackConfig, pool: GpuPool) -> int:
    """The NodePools' terminationGracePeriod: MIN_TERMINATION_GRACE_SECONDS, or a PDB-paced drain of a full node."""
    return max(MIN_TERMINATION_GRACE_SECONDS, drain_seconds(config, pool.name))


def node_pool_specs(config: StackConfig, pool: GpuPool) -> list[NodePoolSpec]:
    """The NodePools of one pool, highest weight first; their node limits add up to the pool's maxNodes, and the
    plan's floor nodes (tritonfleet/core/placement.py) are shared out in the order Karpenter fills them."""
    itype = config.instance_type(pool)
    catalog = load_catalog()
    taint = gpu_taint("aws")
    specs = []
    floor_left = floor_placement(config)[pool.name].nodes
    for tier in sorted(capacity_tiers(config.cloud, pool), key=lambda t: -TIER_WEIGHT[t.name]):
        floor = min(floor_left, tier.nodes)
        floor_left -= floor
        capacity_types = _tier_capacity_types(tier)
        types = burst_instance_types(config, pool) if "spot" in capacity_types else [itype.name]
        vcpus = max(entry.vcpu for name in types if (entry := catalog.find("aws", name)))
        labels = pool_node_labels(
            pool.name, pool.gpu, _capacity_label(tier), pool.node_labels, pool.assumed_usd_per_hour
        )
        requirements = [
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity_types)},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": pool_zones(config, pool)},
        ]
        spec = {
            "weight": TIER_WEIGHT[tier.name],
            "limits": {GPU_RESOURCE: str(tier.nodes * itype.gpu_count), "cpu": str(tier.nodes * vcpus)},
            "disruption": {
                "consolidationPolicy": CONSOLIDATION_POLICY,
                "consolidateAfter": f"{consolidation_delay_seconds(config, {pool.name})}s",
                "budgets": DISRUPTION_BUDGETS,
            },
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
                    "requirements": requirements,
                    "taints": [dict(taint)],
                    "expireAfter": EXPIRE_AFTER,
                    "terminationGracePeriod": f"{termination_grace_seconds(config, pool)}s",
                },
            },
        }
        specs.append(
            NodePoolSpec(
                pool.name, tier.name, f"{pool.name}-{tier.name}", tier.nodes, capacity_types, tuple(types), spec, floor
            )
        )
    return sorted(specs, key=lambda s: -TIER_WEIGHT[s.tier])


def node_class_spec(config: StackConfig, pool: GpuPool, cluster_name: str) -> dict[str, Any]:
    """The pool's EC2NodeClass spec; the component adds `role` (the node role's name, a program output).

    IMDSv2 only, hop limit 1: a pod's network namespace is one hop further, so no pod can read the node role's
    credentials. What runs on the node's own network reaches IMDS: the kubelet and the VPC CNI (host network), the
    NVIDIA device plugin / DCGM of the GPU Operator need none. Pods that need AWS get IRSA/Pod Identity; the AWS Load
    Balancer Controller runs on the system nodes and is given its region and VPC id instead of reading IMDS.
    """
    discovery = {KARPENTER_DISCOVERY_TAG: cluster_name}
    image = config.cluster.eks_gpu_node_image
    spec: dict[str, Any] = {
        "amiSelectorTerms": [{"alias": ami_alias(config)}],
        "subnetSelectorTerms": [{"tags": discovery}],
        "securityGroupSelectorTerms": [{"tags": discovery}],
        "instanceStorePolicy": "RAID0",
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": [
            {
                "deviceName": IMAGE_VOLUME_DEVICE[image],
                "ebs": {"volumeSize": f"{pool.disk_gi}Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True},
            }
        ],
        "tags": {**config.tags, POOL_LABEL: pool.name},
    }
    if pool.capacity in ("capacity-block", "reservation"):
        spec["capacityReservationSelectorTerms"] = [{"id": pool.reservation_id}]
    if pool.parallel_image_pull:
        spec["userData"] = parallel_pull_user_data(image)
    return spec


def image_pull_path(pool: GpuPool) -> ImagePullPath | None:
    """SOCI parallel pull on the pool's nodes (parallelImagePull): the whole image still crosses the network, so the
    budget keeps the download floor; AWS's measured speed-up is in the plan's note (plan_notes.image_pull)."""
    from tritonfleet.core.startup import ImagePullPath

    return ImagePullPath("SOCI parallel pull", None, "") if pool.parallel_image_pull else None


# AL2023 user data may be a NodeConfig (YAML or JSON); Karpenter puts its own NodeConfig before it in a MIME archive and
# nodeadm merges them. Bottlerocket user data is TOML settings, merged with Karpenter's. Source: karpenter-provider-aws
# v1.14 concepts/nodeclasses.md ("spec.userData": AL2023, Bottlerocket), https://karpenter.sh/v1.14/concepts/
# nodeclasses/, read 2026-12-05.
NODE_CONFIG_API = "node.eks.aws/v1alpha1"


def parallel_pull_user_data(image: str) -> str:
    """The EC2NodeClass userData that turns SOCI parallel pull on: nodeadm's FastImagePull gate (AL2023), or the
    snapshotter settings (Bottlerocket). With instanceStorePolicy RAID0 SOCI's layers land on the NVMe array."""
    if image == "al2023":
        node_config = {"apiVersion": NODE_CONFIG_API, "kind": "NodeConfig",
                       "spec": {"featureGates": {AL2023_FAST_IMAGE_PULL_GATE: True}}}
        return json.dumps(node_config, indent=2) + "\n"
    return toml_tables({"settings": BOTTLEROCKET_SOCI_SETTINGS})


def toml_tables(data: dict[str, Any], prefix: str = "") -> str:
    """Nested mappings of strings, integers and booleans as TOML tables (what Bottlerocket settings need)."""
    plain = {key: value for key, value in data.items() if not isinstance(value, dict)}
    text = ""
    if plain:
        text += f"[{prefix}]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in plain.items())
    for key, value in data.items():
        if isinstance(value, dict):
            text += ("\n" if text else "") + toml_tables(value, f"{prefix}.{key}" if prefix else key)
    return text


def warm_nodes(config: StackConfig, pool: GpuPool) -> int:
    """Placeholder pods (one per node) that keep the pool's minNodes warm: the nodes minNodes asks for beyond those
    the deployments' minReplicas keep up."""
    return floor_placement(config)[pool.name].warm_nodes


def placeholder_deployment(config: StackConfig, pool: GpuPool) -> dict[str, Any] | None:
    """The Deployment of pause pods that keeps `minNodes` nodes of the pool up, or None when Triton's minimum replicas
    keep that many up already.

    Each pod asks for every GPU of a node of the pool's type, tolerates the GPU taint and selects the pool, so it lands
    on the pool's highest-weight NodePool with room (reserved, then the on-demand base, then the burst)."""
    replicas = warm_nodes(config, pool)
    if replicas == 0:
        return None
    gpus = config.instance_type(pool).gpu_count
    name = f"warm-{pool.name}"
    labels = {"app.kubernetes.io/name": "warm-capacity", "app.kubernetes.io/instance": name, POOL_LABEL: pool.name}
    taint = gpu_taint("aws")
    return {
        # Pulumi does not wait for GPU nodes to boot (minutes) before it goes on: the pods are Pending until then.
        "metadata": {
            "name": name,
            "namespace": PLACEHOLDER_NAMESPACE,
            "labels": labels,
            "annotations": {"pulumi.com/skipAwait": "true"},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": PLACEHOLDER_PRIORITY_CLASS,
                    "terminationGracePeriodSeconds": 0,
                    "automountServiceAccountToken": False,
                    "nodeSelector": {POOL_LABEL: pool.name},
                    "tolerations": [{"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}],
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65535, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [
                        {
                            "name": "pause",
                            "image": pins.PAUSE_IMAGE,
                            "resources": {
                                "requests": {"cpu": "10m", "memory": "16Mi", GPU_RESOURCE: str(gpus)},
                                "limits": {"memory": "16Mi", GPU_RESOURCE: str(gpus)},
                            },
                            "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                                "capabilities": {"drop": ["ALL"]}},
                        }
                    ],
                },
            },
        },
    }


def placeholder_priority_class() -> dict[str, Any]:
    """Below every real pod (default priority 0), and never preempting anything itself."""
    return {
        "metadata": {"name": PLACEHOLDER_PRIORITY_CLASS},
        "value": PLACEHOLDER_PRIORITY,
        "global_default": False,
        "preemption_policy": "Never",
        "description": "tritonfleet warm GPU capacity: placeholder pods any workload preempts",
    }


def node_storage_gi(gpus_per_node: int, repository_gi: int, gpus_per_replica: int) -> int:
    """Ephemeral storage a node full of one deployment's replicas uses: each replica's chart limit (repositoryGi + 2,
    charts/triton-inference-server deployment.yaml) plus the images."""
    return NODE_IMAGES_GI + (gpus_per_node // max(1, gpus_per_replica)) * (repository_gi + 2)


def nvme_room_gi(types: list[str]) -> float:
    """Ephemeral storage the smallest RAID0 array among `types` offers pods: its size in GiB (the catalog's
    host.localSsd), less the kubelet's eviction threshold (0 for a type without instance store)."""
    catalog = load_catalog()
    stores = [catalog.find("aws", name).host.local_ssd for name in types]  # type: ignore[union-attr]
    store_gib = min(store.total_gib if store else 0 for store in stores)
    return round(store_gib * (1 - EVICTION_SHARE), 1)


def pool_types(pool: GpuPool, itype: InstanceType, region: str) -> list[str]:
    """Every instance type the pool's NodePools may launch in `region`."""
    return diversified_types(itype, region) if split_nodes(pool, pool.max_nodes).get("spot") else [itype.name]


def ephemeral_storage_gi(config: StackConfig, pool: GpuPool) -> tuple[float, float]:
    """(needed, available) GiB of ephemeral storage on the smallest node the pool may launch, for the most demanding
    deployment on it (`node_storage_gi` against `nvme_room_gi`)."""
    itype = config.instance_type(pool)
    needs = [
        node_storage_gi(itype.gpu_count, d.repository_gi, d.gpus_per_replica)
        for d in config.triton_deployments
        if d.pool == pool.name
    ]
    return float(max(needs, default=NODE_IMAGES_GI)), nvme_room_gi(pool_types(pool, itype, config.region))
