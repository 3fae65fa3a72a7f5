"""Google Cloud's resources in a plan: their type tokens, the offline plan's stand-ins for what GCP computes, the
inputs that replace them, and how neutral code reads planned GKE clusters and node pools (GPU pools, NetworkPolicy
enforcement, bill lines). Reached through `Cloud` (tritonfleet/clouds/gcp/cloud.py); the shapes are
tritonfleet/core/planned.py's. Pure: plain data in, plain data out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tritonfleet.clouds.gcp.accelerators import accelerator
from tritonfleet.clouds.gcp.facts import (
    ADVANCED_DATAPATH,
    GKE_INGRESS_CLASS_ANNOTATION,
    GKE_INTERNAL_GATEWAY_CLASS,
    GKE_INTERNAL_INGRESS_CLASS,
    GKE_INTERNAL_LB_TYPE,
    GKE_LB_TYPE_ANNOTATION,
    GKE_TAINT_EFFECT,
)
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.conventions import HOURS_PER_MONTH, POOL_LABEL
from tritonfleet.core.planned import (
    OFFLINE_CA,
    Enforcement,
    GpuPool,
    PlatformLine,
    Watched,
    get,
    items,
    number,
    priced_line,
    taints,
)

PROVIDER = "pulumi:providers:gcp"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GCS_BUCKET = "gcp:storage/bucket:Bucket"

# What stateful-resource-require-protect protects by default.
PROTECTED = (GKE_CLUSTER, GKE_NODE_POOL, GCS_BUCKET)


def deletion_protection_off(resource_type: str, name: str, props: Any) -> str | None:
    """A GKE cluster with its own deletion protection off (stateful-resource-require-protect)."""
    if resource_type == GKE_CLUSTER and get(props, "deletionProtection") is False:
        return (
            f"GKE cluster '{name}' has deletionProtection false; required: true in this environment. "
            "Set deletion_protection=True."
        )
    return None


# ---- the offline plan (tritonfleet/plan/fake_state.py): values derived from the resource's name only ----

PROJECT_NUMBER = "123456789012"
# Answers to the data-source calls (invokes) the program makes, by token.
OFFLINE_CALLS: dict[str, dict[str, Any]] = {
    "gcp:storage/getProjectServiceAccount:getProjectServiceAccount": {
        "emailAddress": f"service-{PROJECT_NUMBER}@gs-project-accounts.iam.gserviceaccount.com",
        "member": f"serviceAccount:service-{PROJECT_NUMBER}@gs-project-accounts.iam.gserviceaccount.com",
        "id": PROJECT_NUMBER,
    },
    # The GCP provider's own configuration: its identity's short-lived OAuth access token (the Kubernetes provider's).
    "gcp:organizations/getClientConfig:getClientConfig": {
        "accessToken": "offline-plan-access-token",
        "id": "offline-plan",
        "project": "offline-plan",
        "region": "us-central1",
        "zone": "",
        "defaultLabels": {},
    },
    "gcp:organizations/getProject:getProject": {
        "number": PROJECT_NUMBER,
        "projectId": "offline-plan",
        "name": "offline-plan",
        "id": "projects/offline-plan",
    },
}
# Data sources for things the offline plan's empty project does not have. None on GCP.
ABSENT_CALLS: dict[str, str] = {}


def offline_outputs(typ: str, name: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
    """Outputs for a mocked GCP resource (its inputs plus the computed attributes our program reads); None when
    `typ` is not a GCP resource."""
    if not typ.startswith("gcp:"):
        return None
    out = dict(inputs)
    out.setdefault("name", name)
    out.setdefault("selfLink", f"https://www.googleapis.com/{typ.split(':')[1].split('/')[0]}/v1/{name}")
    if typ == GKE_CLUSTER:
        out.setdefault("endpoint", "203.0.113.10")
        out.setdefault("masterAuth", {"clusterCaCertificate": OFFLINE_CA})
        dns = (out.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig")
        if dns is not None:
            dns.setdefault("endpoint", f"gke-{name}-0000.{inputs.get('location', 'us-central1')}.gke.goog")
    elif typ == "gcp:serviceaccount/account:Account":
        project = inputs.get("project", "project")
        out.setdefault("email", f"{inputs.get('accountId', name)}@{project}.iam.gserviceaccount.com")
        out["name"] = f"projects/{project}/serviceAccounts/{out['email']}"
        out.setdefault("member", f"serviceAccount:{out['email']}")
    return out


# ---- what replaces a resource or rolls its nodes (tritonfleet/diff/replacement.py) ----
# Source (read 2026, the upstream schema the pinned provider is bridged from): hashicorp/terraform-provider-google
# google/services/container/node_config.go.
WATCHED: dict[str, Watched] = {
    GKE_CLUSTER: Watched("cluster", replace=("name", "location", "project", "datapathProvider")),
    GKE_NODE_POOL: Watched(
        "node pool",
        replace=(
            "name", "namePrefix", "cluster", "location", "project", "initialNodeCount",
            "nodeConfig.guestAccelerators", "nodeConfig.spot", "nodeConfig.preemptible", "nodeConfig.reservationAffinity",
            "nodeConfig.serviceAccount", "nodeConfig.oauthScopes", "nodeConfig.localSsdCount", "nodeConfig.metadata",
            "nodeConfig.ephemeralStorageLocalSsdConfig",
        ),
        rolls_nodes=("nodeConfig.machineType", "nodeConfig.diskSizeGb", "nodeConfig.diskType", "nodeConfig.imageType", "version"),
    ),
    GCS_BUCKET: Watched("bucket", replace=("name", "location", "project")),
}
# Replacements a reviewer might not expect, in words: (type, property) -> explanation.
EXPLAINED: dict[tuple[str, str], str] = {
    (GKE_NODE_POOL, "initialNodeCount"): (
        "GKE sets a node pool's initial node count (per zone) only when it creates the pool: changing it (e.g. the "
        "system node count, or its zones) deletes the pool and creates it again, evicting every pod on it"
    ),
    (GKE_CLUSTER, "datapathProvider"): (
        "the datapath (Dataplane V2, which enforces NetworkPolicies) is chosen when a GKE cluster is created: changing "
        "it deletes the cluster, its node pools and every workload, and creates a new one"
    ),
}
# Replacements a prod stack refuses unless its config acknowledges them: (type, property) -> acknowledgement key.
PROD_ACKNOWLEDGEMENT: dict[tuple[str, str], str] = {(GKE_CLUSTER, "datapathProvider"): "cluster.acknowledgeDatapathReplacement"}


# ---- GPU pools (policies/_pools.py): GKE node pools and a kept default pool ----

K8S_EFFECT = {value: effect for effect, value in GKE_TAINT_EFFECT.items()}
# A pool pinned to a named reservation; ANY_RESERVATION is on-demand capacity that may use a matching one.
GKE_RESERVATION_TYPES = ("SPECIFIC_RESERVATION",)
ZONE = re.compile(r"^[a-z]+-[a-z]+\d+-[a-z]$")


def node_bounds(props: Any) -> tuple[int | None, int | None, str]:
    """Total node bounds: GKE's minNodeCount/maxNodeCount/nodeCount are per zone, total* are per pool."""
    total_min, total_max = (
        number(get(props, "autoscaling.totalMinNodeCount")),
        number(get(props, "autoscaling.totalMaxNodeCount")),
    )
    if total_max is not None:
        return total_min or 0, total_max, ""
    per_zone_min, per_zone_max = number(get(props, "autoscaling.minNodeCount")), number(get(props, "autoscaling.maxNodeCount"))
    if per_zone_max is None:
        fixed = number(get(props, "nodeCount"))
        fixed = number(get(props, "initialNodeCount")) if fixed is None else fixed
        per_zone_min = per_zone_max = fixed
    if per_zone_max is None:
        return None, None, "neither autoscaling bounds nor nodeCount are set"
    zones = len(items(get(props, "nodeLocations")))
    if not zones and ZONE.match(str(get(props, "location", ""))):
        zones = 1
    if not zones:
        return (
            None,
            None,
            ("autoscaling.minNodeCount/maxNodeCount count nodes per zone and this regional pool lists no nodeLocations"),
        )
    return (per_zone_min or 0) * zones, per_zone_max * zones, ""


def _purchase(props: Any) -> str:
    if get(props, "nodeConfig.spot") is True or get(props, "nodeConfig.preemptible") is True:
        return "spot"
    if get(props, "nodeConfig.reservationAffinity.consumeReservationType") in GKE_RESERVATION_TYPES:
        return "reservation"
    if get(props, "nodeConfig.flexStart") is True or get(props, "queuedProvisioning.enabled") is True:
        return "flex-start"
    return "on-demand"


def _gke_pool(props: Any, urn: str, name: str) -> GpuPool | None:
    machine = str(get(props, "nodeConfig.machineType", ""))
    accelerators = items(get(props, "nodeConfig.guestAccelerators"))
    entry = load_catalog().find("gcp", machine)
    if not (accelerators or entry or accelerator(machine)):
        return None
    declared = sum(number(get(a, "count")) or 0 for a in accelerators)
    low, high, note = node_bounds(props)
    labels = {str(k): str(v) for k, v in (get(props, "nodeConfig.labels", {}) or {}).items()}
    return GpuPool(
        urn=urn,
        name=name,
        cloud="gcp",
        pool=labels.get(POOL_LABEL, name),
        instance_types=(machine,) if machine else (),
        purchase=_purchase(props),
        min_nodes=low,
        max_nodes=high,
        bounds_note=note,
        gpus_per_node=entry.gpu_count if entry else (declared or None),
        taints=taints(get(props, "nodeConfig.taints"), K8S_EFFECT),
        labels=labels,
    )


def gpu_pool(resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
    """The GPU pool a GKE node pool (or a cluster's kept default pool) describes; None for anything else."""
    if resource_type == GKE_NODE_POOL:
        return _gke_pool(props, urn, name)
    if resource_type == GKE_CLUSTER and get(props, "removeDefaultNodePool") is not True:
        return _gke_pool(props, urn, name)  # the default node pool, kept: the cluster's nodeConfig and node count
    return None


def floor_nodes(resource_type: str, props: Any, name: str) -> tuple[str, int] | None:
    """GKE node pools carry no floor annotation: their minimum is their own node bounds."""
    return None


# ---- NetworkPolicy enforcement (tritonfleet/core/network_policy.py); facts and sources in facts.py ----


def gke_enforcement(name: str, props: Any) -> Enforcement:
    datapath = get(props, "datapathProvider", "")
    if datapath == ADVANCED_DATAPATH:
        return Enforcement(name, True, "Dataplane V2 (ADVANCED_DATAPATH)")
    if get(props, "networkPolicy.enabled") is True and get(props, "addonsConfig.networkPolicyConfig.disabled") is not True:
        return Enforcement(name, True, "Calico network policy")
    return Enforcement(name, False, f"datapathProvider {datapath or 'unset'} (legacy datapath) and no Calico network policy")


def cluster_enforcement(
    resource_type: str, name: str, props: Any, resources: Sequence[tuple[str, str, Any]]
) -> Enforcement | None:
    """Whether a GKE cluster enforces NetworkPolicy; None for other resources."""
    return gke_enforcement(name, props) if resource_type == GKE_CLUSTER else None


# ---- the non-GPU bill lines a plan's resources prove (policies/_platform.py) ----


def platform_line(resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
    """The GKE management fee, or a node pool without accelerators (system nodes); None otherwise."""
    hours = HOURS_PER_MONTH
    if resource_type == GKE_CLUSTER:
        return priced_line("gcp", "control-plane", region, name, "GKE management fee", hours, hours)
    if resource_type != GKE_NODE_POOL or gpu_pool(resource_type, props, urn, name) is not None:
        return None
    types = [str(get(props, "nodeConfig.machineType", ""))]
    low, high, _ = node_bounds(props)
    what = f"system nodes ({', '.join(types) or 'type unknown'})"
    if low is None or high is None or len(types) != 1:
        return PlatformLine(name, what, None, None, "its node bounds or its one instance type are not set")
    return priced_line("gcp", f"instance:{types[0]}", region, name, what, low * hours, high * hours)


def release_internal(kind: str, annotations: Mapping[str, str], class_name: str) -> bool | None:
    """GKE's reading: a Service is internal with the internal load balancer type, an Ingress with class
    gce-internal, a Gateway with class gke-l7-rilb; nothing GKE reads marks one public."""
    internal = {
        "service": annotations.get(GKE_LB_TYPE_ANNOTATION) == GKE_INTERNAL_LB_TYPE,
        "ingress": annotations.get(GKE_INGRESS_CLASS_ANNOTATION) == GKE_INTERNAL_INGRESS_CLASS,
        "gateway": class_name == GKE_INTERNAL_GATEWAY_CLASS,
    }
    return True if internal.get(kind) else None


def ingress_open_sources(annotations: Mapping[str, str], every_address: tuple[str, ...]) -> list[str]:
    """A GKE Ingress limits client networks only through Cloud Armor or a firewall policy, not an annotation."""
    return []
