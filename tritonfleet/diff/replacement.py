"""Which resources a reviewer must not miss, and which input changes replace them or roll their nodes.

The table is deliberately small: clusters, GPU node pools and model buckets, the resources whose loss costs
hours (a cluster, a GPU pool) or data (a bucket). A property listed under `replace` makes the provider delete
and re-create the resource (Terraform `ForceNew`, which the bridged Pulumi providers inherit); one listed under
`rolls_nodes` is updated in place but every node of the pool is recreated, evicting the Triton pods on it.

Sources (read 2026, the upstream schemas the pinned providers are bridged from):
  hashicorp/terraform-provider-aws internal/service/eks/node_group.go and cluster.go,
  hashicorp/terraform-provider-google google/services/container/node_config.go.
Karpenter NodePools and EC2NodeClasses are Kubernetes custom resources: the Kubernetes provider replaces one when its
apiVersion, kind or metadata.name changes (a replaced NodePool drains and terminates all its nodes), and Karpenter
replaces the nodes of a NodePool whose template or EC2NodeClass changed ("drift"; karpenter.sh/docs/concepts/
disruption/#drift, read 2026-12-03), one node at a time under our disruption budgets. Behavioural fields (weight,
limits, disruption, expireAfter, terminationGracePeriod) change nothing on running nodes.
The offline diff cannot see provider defaults, state or drift: `pulumi preview` stays the authority,
and the workflows run it next to this diff.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Watched:
    kind: str  # what a reviewer calls it: cluster, node pool, bucket
    replace: tuple[str, ...]  # input paths (camelCase wire form) whose change replaces the resource
    rolls_nodes: tuple[str, ...] = ()  # input paths whose change recreates every node of the pool in place


WATCHED: dict[str, Watched] = {
    "aws:eks/cluster:Cluster": Watched(
        "cluster",
        replace=(
            "name", "roleArn", "bootstrapSelfManagedAddons", "accessConfig.bootstrapClusterCreatorAdminPermissions",
            "kubernetesNetworkConfig.ipFamily", "kubernetesNetworkConfig.serviceIpv4Cidr",
        ),
    ),
    "aws:eks/nodeGroup:NodeGroup": Watched(
        "node pool",
        replace=(
            "amiType", "capacityType", "clusterName", "diskSize", "instanceTypes", "launchTemplate.id", "launchTemplate.name",
            "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "remoteAccess", "subnetIds",
        ),
        rolls_nodes=("launchTemplate.version", "releaseVersion", "version"),
    ),
    "kubernetes:karpenter.sh/v1:NodePool": Watched(
        "node pool",
        replace=("apiVersion", "kind", "metadata.name"),
        rolls_nodes=(
            "spec.template.metadata", "spec.template.spec.requirements", "spec.template.spec.taints",
            "spec.template.spec.startupTaints", "spec.template.spec.nodeClassRef",
        ),
    ),
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": Watched(
        "node class",
        replace=("apiVersion", "kind", "metadata.name"),
        rolls_nodes=(
            "spec.amiSelectorTerms", "spec.amiFamily", "spec.blockDeviceMappings", "spec.instanceStorePolicy",
            "spec.metadataOptions", "spec.role", "spec.subnetSelectorTerms", "spec.securityGroupSelectorTerms",
            "spec.capacityReservationSelectorTerms", "spec.userData", "spec.tags", "spec.kubelet",
        ),
    ),
    "aws:s3/bucket:Bucket": Watched("bucket", replace=("bucket", "bucketPrefix", "objectLockEnabled")),
    "aws:s3/bucketV2:BucketV2": Watched("bucket", replace=("bucket", "bucketPrefix", "objectLockEnabled")),
    "gcp:container/cluster:Cluster": Watched("cluster", replace=("name", "location", "project", "datapathProvider")),
    "gcp:container/nodePool:NodePool": Watched(
        "node pool",
        replace=(
            "name", "namePrefix", "cluster", "location", "project", "initialNodeCount",
            "nodeConfig.guestAccelerators", "nodeConfig.spot", "nodeConfig.preemptible", "nodeConfig.reservationAffinity",
            "nodeConfig.serviceAccount", "nodeConfig.oauthScopes", "nodeConfig.localSsdCount", "nodeConfig.metadata",
            "nodeConfig.ephemeralStorageLocalSsdConfig",
        ),
        rolls_nodes=("nodeConfig.machineType", "nodeConfig.diskSizeGb", "nodeConfig.diskType", "nodeConfig.imageType", "version"),
    ),
    "gcp:storage/bucket:Bucket": Watched("bucket", replace=("name", "location", "project")),
}


# Replacements a reviewer might not expect, in words (shown next to the property in the diff).
EXPLAINED = {
    ("gcp:container/nodePool:NodePool", "initialNodeCount"): (
        "GKE sets a node pool's initial node count (per zone) only when it creates the pool: changing it (e.g. the "
        "system node count, or its zones) deletes the pool and creates it again, evicting every pod on it"
    ),
    ("gcp:container/cluster:Cluster", "datapathProvider"): (
        "the datapath (Dataplane V2, which enforces NetworkPolicies) is chosen when a GKE cluster is created: changing "
        "it deletes the cluster, its node pools and every workload, and creates a new one"
    ),
}
# Replacements a prod stack refuses unless its config acknowledges them: (type, property) -> acknowledgement key.
PROD_ACKNOWLEDGEMENT = {("gcp:container/cluster:Cluster", "datapathProvider"): "cluster.acknowledgeDatapathReplacement"}


def path_under(path: str, prefix: str) -> bool:
    """True when `path` is `prefix` or lies inside it (`a.b` is under `a`; `a[0].b` is under `a`)."""
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _without_indices(path: str) -> str:
    """`nodeConfig.guestAccelerators[0].count` -> `nodeConfig.guestAccelerators.count` (table paths carry no indices)."""
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _matches(paths: list[str], table: tuple[str, ...]) -> list[str]:
    return sorted({prefix for path in paths for prefix in table if path_under(_without_indices(path), prefix)})


def replace_reasons(resource_type: str, changed_paths: list[str]) -> list[str]:
    """The table entries among the changed input paths that replace a watched resource."""
    watched = WATCHED.get(resource_type)
    return _matches(changed_paths, watched.replace) if watched else []


def node_roll_reasons(resource_type: str, changed_paths: list[str]) -> list[str]:
    watched = WATCHED.get(resource_type)
    return _matches(changed_paths, watched.rolls_nodes) if watched else []


def watched_kind(resource_type: str) -> str | None:
    watched = WATCHED.get(resource_type)
    return watched.kind if watched else None
