"""AWS's resources in a plan: their type tokens, the offline plan's stand-ins for what AWS computes, the inputs that
replace them, and how neutral code reads planned EKS node groups, Karpenter NodePools, clusters and NAT gateways
(GPU pools, NetworkPolicy enforcement, bill lines). Reached through `Cloud` (tritonfleet/clouds/aws/cloud.py); the
shapes are tritonfleet/core/planned.py's. Pure: plain data in, plain data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from tritonfleet.clouds.aws.accelerators import accelerator
from tritonfleet.clouds.aws.exposure import PLANNED_S3_CIDRS
from tritonfleet.clouds.aws.facts import (
    EKS_CAPACITY_TYPE,
    EKS_TAINT_EFFECT,
    VPC_CNI_ADDON,
    VPC_CNI_NETWORK_POLICY_MINIMUM,
)
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.conventions import CAPACITY_LABEL, HOURS_PER_MONTH, POOL_LABEL
from tritonfleet.core.planned import (
    OFFLINE_CA,
    Enforcement,
    GpuPool,
    PlatformLine,
    Watched,
    decoded,
    get,
    is_mapping,
    items,
    number,
    priced_line,
    taints,
)

PROVIDER = "pulumi:providers:aws"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_ADDON = "aws:eks/addon:Addon"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
S3_BUCKET = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"

# What stateful-resource-require-protect protects by default (deleting a Karpenter NodePool drains and terminates
# its GPU nodes).
PROTECTED = (EKS_CLUSTER, EKS_NODE_GROUP, KARPENTER_NODE_POOL, KARPENTER_NODE_CLASS, *S3_BUCKET)


def deletion_protection_off(resource_type: str, name: str, props: Any) -> str | None:
    """AWS's protected resources have no deletion protection of their own here: Pulumi's protect is the guard."""
    return None


def s3_part(name: str) -> tuple[str, ...]:
    """Both spellings of an S3 bucket sub-resource type: the v7 name and its deprecated V2 alias."""
    lower = name[0].lower() + name[1:]
    return (f"aws:s3/{lower}:{name}", f"aws:s3/{lower}V2:{name}V2")


def s3_buckets(resources: Sequence[Any]) -> list[Any]:
    return [r for r in resources if r.resource_type in S3_BUCKET]


# ---- the offline plan (tritonfleet/plan/fake_state.py): values derived from the resource's name only ----

ACCOUNT = "123456789012"

# Answers to the data-source calls (invokes) the program makes, by token.
OFFLINE_CALLS: dict[str, dict[str, Any]] = {
    # The identity the offline plan deploys as (an assumed role, as CI runs usually are).
    "aws:index/getCallerIdentity:getCallerIdentity": {
        "accountId": ACCOUNT,
        "arn": f"arn:aws:sts::{ACCOUNT}:assumed-role/deployer/tritonfleet-plan",
        "userId": "AROAEXAMPLEDEPLOYER:tritonfleet-plan",
        "id": ACCOUNT,
    },
    # The region's S3 managed prefix list (components/aws/cloud.py s3_cidrs): a stand-in of one range, 52.216.0.0/15,
    # which us-east-1's list holds; a real preview reads the region's own list.
    "aws:ec2/getPrefixList:getPrefixList": {
        "cidrBlocks": list(PLANNED_S3_CIDRS),
        "id": "pl-0offline0s3",
        "name": "com.amazonaws.us-east-1.s3",
        "filters": [],
        "tags": {},
    },
}
# Data sources for things the offline plan's empty account does not have: the provider's not-found error.
ABSENT_CALLS: dict[str, str] = {
    "aws:eks/getCluster:getCluster": "ResourceNotFoundException: No cluster found (offline plan: an empty account)",
}


def _arn(typ: str, name: str) -> str:
    service = typ.split(":")[1].split("/")[0]
    return f"arn:aws:{service}::{ACCOUNT}:{name}"


def offline_outputs(typ: str, name: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
    """Outputs for a mocked AWS resource (its inputs plus the computed attributes our program reads); None when
    `typ` is not an AWS resource."""
    if not typ.startswith("aws:"):
        return None
    out = dict(inputs)
    out.setdefault("arn", _arn(typ, name))
    out.setdefault("name", name)
    if typ == "aws:s3/bucket:Bucket":
        out.setdefault("bucket", name)
        out["arn"] = f"arn:aws:s3:::{out['bucket']}"
    elif typ == EKS_CLUSTER:
        out["arn"] = f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/{inputs.get('name', name)}"
        out.setdefault("endpoint", f"https://{name}.gr7.us-east-1.eks.amazonaws.com")
        out.setdefault("certificateAuthority", {"data": OFFLINE_CA})
        out.setdefault("identities", [{"oidcs": [{"issuer": f"https://oidc.eks.us-east-1.amazonaws.com/id/{name.upper()}"}]}])
    elif typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
        out["arn"] = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{inputs.get('url', name).removeprefix('https://')}"
    elif typ == "aws:kms/key:Key":
        out.setdefault("keyId", f"{name}-key")
        out["arn"] = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/{name}"
    elif typ == EKS_NODE_GROUP:
        group = inputs.get("nodeGroupName", f"{name}-0000000")
        out.setdefault("nodeGroupName", group)
        out.setdefault("resources", [{"autoscalingGroups": [{"name": f"eks-{group}-00000000-0000-0000-0000-000000000000"}]}])
    elif typ == "aws:ec2/launchTemplate:LaunchTemplate":
        out.setdefault("latestVersion", 1)
    elif typ == "aws:iam/role:Role":
        out["arn"] = f"arn:aws:iam::{ACCOUNT}:role/{name}"
    return out


# ---- what replaces a resource or rolls its nodes (tritonfleet/diff/replacement.py) ----
# Sources (read 2026, the upstream schema the pinned provider is bridged from): hashicorp/terraform-provider-aws
# internal/service/eks/node_group.go and cluster.go. Karpenter NodePools and EC2NodeClasses are Kubernetes custom
# resources: the Kubernetes provider replaces one when its apiVersion, kind or metadata.name changes (a replaced
# NodePool drains and terminates all its nodes), and Karpenter replaces the nodes of a NodePool whose template or
# EC2NodeClass changed ("drift"; karpenter.sh/docs/concepts/disruption/#drift, read 2026-12-03), one node at a time
# under our disruption budgets. Behavioural fields (weight, limits, disruption, expireAfter, terminationGracePeriod)
# change nothing on running nodes.
WATCHED: dict[str, Watched] = {
    EKS_CLUSTER: Watched(
        "cluster",
        replace=(
            "name", "roleArn", "bootstrapSelfManagedAddons", "accessConfig.bootstrapClusterCreatorAdminPermissions",
            "kubernetesNetworkConfig.ipFamily", "kubernetesNetworkConfig.serviceIpv4Cidr",
        ),
    ),
    EKS_NODE_GROUP: Watched(
        "node pool",
        replace=(
            "amiType", "capacityType", "clusterName", "diskSize", "instanceTypes", "launchTemplate.id", "launchTemplate.name",
            "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "remoteAccess", "subnetIds",
        ),
        rolls_nodes=("launchTemplate.version", "releaseVersion", "version"),
    ),
    KARPENTER_NODE_POOL: Watched(
        "node pool",
        replace=("apiVersion", "kind", "metadata.name"),
        rolls_nodes=(
            "spec.template.metadata", "spec.template.spec.requirements", "spec.template.spec.taints",
            "spec.template.spec.startupTaints", "spec.template.spec.nodeClassRef",
        ),
    ),
    KARPENTER_NODE_CLASS: Watched(
        "node class",
        replace=("apiVersion", "kind", "metadata.name"),
        rolls_nodes=(
            "spec.amiSelectorTerms", "spec.amiFamily", "spec.blockDeviceMappings", "spec.instanceStorePolicy",
            "spec.metadataOptions", "spec.role", "spec.subnetSelectorTerms", "spec.securityGroupSelectorTerms",
            "spec.capacityReservationSelectorTerms", "spec.userData", "spec.tags", "spec.kubelet",
        ),
    ),
    **{bucket: Watched("bucket", replace=("bucket", "bucketPrefix", "objectLockEnabled")) for bucket in S3_BUCKET},
}
# Replacements a reviewer might not expect, in words: (type, property) -> explanation. None on AWS.
EXPLAINED: dict[tuple[str, str], str] = {}
# Replacements a prod stack refuses unless its config acknowledges them: (type, property) -> key. None on AWS.
PROD_ACKNOWLEDGEMENT: dict[tuple[str, str], str] = {}


# ---- GPU pools (policies/_pools.py): EKS managed node groups and Karpenter NodePools ----

PURCHASE_FROM_EKS = {value: option for option, value in EKS_CAPACITY_TYPE.items()}
K8S_EFFECT = {value: effect for effect, value in EKS_TAINT_EFFECT.items()}
FLOOR_ANNOTATION = "tritonfleet.io/floor-nodes"  # a NodePool's nodes at the plan's floor (components/aws/node_pools.py)


def _accelerated(types: Iterable[str]) -> bool:
    """Whether any of these types carries accelerators: catalogued, or of an accelerated family (accelerators.py)."""
    catalog = load_catalog()
    return any(catalog.find("aws", t) or accelerator(t) for t in types)


def _eks_pool(props: Any, urn: str, name: str) -> GpuPool | None:
    types = tuple(str(t) for t in items(get(props, "instanceTypes")))
    catalog = load_catalog()
    gpu_ami = any(marker in str(get(props, "amiType", "")) for marker in ("NVIDIA", "GPU", "NEURON"))
    # Without instanceTypes the type comes from the launch template, which this resource does not show: any type.
    from_template = not types and is_mapping(get(props, "launchTemplate"))
    if not (gpu_ami or from_template or _accelerated(types)):
        return None
    per_node = [entry.gpu_count for t in types if (entry := catalog.find("aws", t))]
    capacity = str(get(props, "capacityType", "ON_DEMAND"))
    low, high = number(get(props, "scalingConfig.minSize")), number(get(props, "scalingConfig.maxSize"))
    labels = {str(k): str(v) for k, v in (get(props, "labels", {}) or {}).items()}
    return GpuPool(
        urn=urn,
        name=name,
        cloud="aws",
        pool=labels.get(POOL_LABEL, name),
        instance_types=types,
        purchase=PURCHASE_FROM_EKS.get(capacity, capacity.lower()),
        min_nodes=low,
        max_nodes=high,
        bounds_note="" if low is not None and high is not None else "scalingConfig.minSize/maxSize are not set",
        gpus_per_node=max(per_node) if types and len(per_node) == len(types) else None,
        taints=taints(get(props, "taints"), K8S_EFFECT),
        labels=labels,
    )


def _requirement(props: Any, key: str) -> tuple[str, ...]:
    for requirement in items(get(props, "spec.template.spec.requirements")):
        if get(requirement, "key") == key and get(requirement, "operator") == "In":
            return tuple(str(v) for v in items(get(requirement, "values")))
    return ()


def _karpenter_pool(props: Any, urn: str, name: str) -> GpuPool | None:
    types = _requirement(props, "node.kubernetes.io/instance-type")
    catalog = load_catalog()
    limits = get(props, "spec.limits", {}) or {}
    gpu_limit = limits.get("nvidia.com/gpu") if hasattr(limits, "get") else None
    if gpu_limit is None and types and not _accelerated(types):
        return None  # a NodePool without an instance-type list may launch any type, accelerated ones included
    per_node = [entry.gpu_count for t in types if (entry := catalog.find("aws", t))]
    gpus_per_node = per_node[0] if types and len(per_node) == len(types) and len(set(per_node)) == 1 else None
    try:
        gpus = int(str(gpu_limit)) if gpu_limit is not None else None
    except ValueError:
        gpus = None
    high = gpus // gpus_per_node if gpus is not None and gpus_per_node else None
    note = "" if high is not None else (
        "spec.limits['nvidia.com/gpu'] is not set" if gpus is None else "its instance types differ in GPUs per node"
    )
    capacity = set(_requirement(props, "karpenter.sh/capacity-type"))
    labels = {str(k): str(v) for k, v in (get(props, "spec.template.metadata.labels", {}) or {}).items()}
    if "spot" in capacity:
        purchase = "spot"
    elif "reserved" in capacity:
        purchase = labels.get(CAPACITY_LABEL) if labels.get(CAPACITY_LABEL) in ("capacity-block", "reservation") else "reservation"
    else:
        purchase = "on-demand" if capacity else "unrestricted"
    return GpuPool(
        urn=urn,
        name=name,
        cloud="aws",
        pool=labels.get(POOL_LABEL, name),
        instance_types=types,
        purchase=purchase,
        min_nodes=0,
        max_nodes=high,
        bounds_note=note,
        gpus_per_node=gpus_per_node,
        taints=taints(get(props, "spec.template.spec.taints"), K8S_EFFECT),
        labels=labels,
        on_demand_fallback="spot" in capacity and "on-demand" in capacity,
        weight=number(get(props, "spec.weight")) or 0,
        priced_by_first_type=True,
    )


def gpu_pool(resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
    """The GPU pool a Karpenter NodePool or EKS node group describes; None for anything else."""
    if resource_type == KARPENTER_NODE_POOL:
        return _karpenter_pool(props, urn, name)
    if resource_type == EKS_NODE_GROUP:
        return _eks_pool(props, urn, name)
    return None


def floor_nodes(resource_type: str, props: Any, name: str) -> tuple[str, int] | None:
    """(pool, nodes) a Karpenter NodePool keeps up at the plan's floor (its FLOOR_ANNOTATION); None where none."""
    annotations = get(props, "metadata.annotations", {}) or {}
    if resource_type != KARPENTER_NODE_POOL or not hasattr(annotations, "get") or FLOOR_ANNOTATION not in annotations:
        return None
    pool_labels = get(props, "spec.template.metadata.labels", {}) or {}
    value = str(annotations.get(FLOOR_ANNOTATION))
    return str(pool_labels.get(POOL_LABEL, name)), int(value) if value.isdigit() else 0


# ---- NetworkPolicy enforcement (tritonfleet/core/network_policy.py); facts and sources in facts.py ----


def _version(text: str) -> tuple[int, ...] | None:
    """(1, 19, 2) from v1.19.2-eksbuild.1; None when unreadable."""
    core = text.lstrip("v").split("-", 1)[0].split(".")
    return tuple(int(p) for p in core) if all(p.isdigit() for p in core) else None


def eks_enforcement(name: str, addons: Sequence[Any]) -> Enforcement:
    """`addons`: the properties of the stack's EKS add-ons."""
    cni = [a for a in addons if get(a, "addonName") == VPC_CNI_ADDON]
    if not cni:
        return Enforcement(name, False, "no managed vpc-cni add-on with its network-policy agent")
    values = decoded(get(cni[0], "configurationValues"))
    enabled = get(values, "enableNetworkPolicy") if is_mapping(values) else None
    if str(enabled).lower() != "true":
        return Enforcement(
            name, False, f"vpc-cni without enableNetworkPolicy (configurationValues: {get(cni[0], 'configurationValues')!r})"
        )
    version = get(cni[0], "addonVersion")
    if isinstance(version, str) and (parsed := _version(version)) is not None and parsed < VPC_CNI_NETWORK_POLICY_MINIMUM:
        return Enforcement(name, False, f"vpc-cni {version}, older than v1.14.0, the first with the network-policy agent")
    return Enforcement(name, True, "vpc-cni network-policy agent (enableNetworkPolicy)")


def cluster_enforcement(
    resource_type: str, name: str, props: Any, resources: Sequence[tuple[str, str, Any]]
) -> Enforcement | None:
    """Whether an EKS cluster among a stack's (type, name, properties) enforces NetworkPolicy; None for others."""
    if resource_type != EKS_CLUSTER:
        return None
    return eks_enforcement(name, [p for typ, _, p in resources if typ == EKS_ADDON])


# ---- the non-GPU bill lines a plan's resources prove (policies/_platform.py) ----


def platform_line(resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
    """The EKS control plane, a NAT gateway, or a node group without accelerators (system nodes); None otherwise."""
    hours = HOURS_PER_MONTH
    if resource_type == EKS_CLUSTER:
        from tritonfleet.clouds.aws.support import usd_per_cluster_hour

        monthly = round(usd_per_cluster_hour(str(get(props, "version", "")), date.today()) * hours, 2)
        return PlatformLine(name, "EKS control plane", monthly, monthly)
    if resource_type == NAT_GATEWAY:
        return priced_line("aws", "nat-gateway", region, name, "NAT gateway", hours, hours)
    if resource_type != EKS_NODE_GROUP or gpu_pool(resource_type, props, urn, name) is not None:
        return None
    types = [str(t) for t in items(get(props, "instanceTypes"))]
    low, high = number(get(props, "scalingConfig.minSize")), number(get(props, "scalingConfig.maxSize"))
    what = f"system nodes ({', '.join(types) or 'type unknown'})"
    if low is None or high is None or len(types) != 1:
        return PlatformLine(name, what, None, None, "its node bounds or its one instance type are not set")
    return priced_line("aws", f"instance:{types[0]}", region, name, what, low * hours, high * hours)
