"""The toy cloud's resources in a plan: their type tokens, the inputs that replace them, and how neutral code reads
them (GPU pools, NetworkPolicy enforcement, bill lines, deletion protection). The adapter builds them as plain
component resources (adapter.py), so the offline plan mocks none of them; offline_outputs answers for the record.
Pure: plain data in, plain data out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.conventions import HOURS_PER_MONTH, POOL_LABEL
from tritonfleet.core.planned import Enforcement, GpuPool, PlatformLine, Watched, get, number, priced_line, taints

NAME = "toy"
PROVIDER = "tritonfleet:toy:Provider"  # carries the stack's region (policies/_pools.stack_region reads it)
CLUSTER = "tritonfleet:toy:Cluster"
NODE_POOL = "tritonfleet:toy:NodePool"
BUCKET = "tritonfleet:toy:Bucket"
IDENTITY = "tritonfleet:toy:Identity"
REGISTRY = "tritonfleet:toy:Registry"  # the Triton image mirror (cluster.imageMirror)
TYPES = (PROVIDER, CLUSTER, NODE_POOL, BUCKET, IDENTITY, REGISTRY)

PROTECTED = (CLUSTER, BUCKET)
WATCHED: dict[str, Watched] = {
    CLUSTER: Watched("cluster", replace=("name", "region")),
    NODE_POOL: Watched("node pool", replace=("cluster", "machineType", "spot"), rolls_nodes=("diskGi",)),
    BUCKET: Watched("bucket", replace=("bucketName",)),
}
EXPLAINED: dict[tuple[str, str], str] = {
    (NODE_POOL, "machineType"): "a toy node pool's machine type is fixed when it is created: the pool is made again",
}
PROD_ACKNOWLEDGEMENT: dict[tuple[str, str], str] = {}
OFFLINE_CALLS: dict[str, dict[str, Any]] = {}  # the adapter calls no data source
ABSENT_CALLS: dict[str, str] = {}


def offline_outputs(typ: str, name: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
    """A toy resource's outputs are its inputs; None for another cloud's."""
    return {"name": name, **inputs} if typ in TYPES else None


def node_pool_props(
    cluster: str, pool: str, machine_type: str, min_nodes: int, max_nodes: int, spot: bool,
    node_taints: Sequence[dict[str, str]], disk_gi: int,
) -> dict[str, Any]:
    """A toy node pool's inputs, as the adapter registers them and the readers below read them."""
    return {
        "cluster": cluster, "machineType": machine_type, "minNodes": min_nodes, "maxNodes": max_nodes, "spot": spot,
        "labels": {POOL_LABEL: pool}, "taints": list(node_taints), "diskGi": disk_gi,
    }


def _is_gpu_type(machine_type: str) -> bool:
    return load_catalog().find(NAME, machine_type) is not None


def gpu_pool(resource_type: str, props: Any, urn: str, name: str) -> GpuPool | None:
    """The GPU pool a toy node pool of a catalog type describes; None for anything else (system pools included)."""
    if resource_type != NODE_POOL:
        return None
    machine = str(get(props, "machineType", ""))
    entry = load_catalog().find(NAME, machine)
    if entry is None:
        return None
    labels = {str(k): str(v) for k, v in (get(props, "labels", {}) or {}).items()}
    return GpuPool(
        urn=urn,
        name=name,
        cloud=NAME,
        pool=labels.get(POOL_LABEL, name),
        instance_types=(machine,),
        purchase="spot" if get(props, "spot") is True else "on-demand",
        min_nodes=number(get(props, "minNodes")),
        max_nodes=number(get(props, "maxNodes")),
        bounds_note="",
        gpus_per_node=entry.gpu_count,
        taints=taints(get(props, "taints"), {}),  # the toy spells effects as Kubernetes does
        labels=labels,
    )


def floor_nodes(resource_type: str, props: Any, name: str) -> tuple[str, int] | None:
    return None  # a toy node pool's minimum is its own minNodes


def cluster_enforcement(
    resource_type: str, name: str, props: Any, resources: Sequence[tuple[str, str, Any]]
) -> Enforcement | None:
    if resource_type != CLUSTER:
        return None
    if get(props, "networkPolicyEnforced") is True:
        return Enforcement(name, True, "the toy cluster's built-in NetworkPolicy engine")
    return Enforcement(name, False, "networkPolicyEnforced false")


def platform_line(resource_type: str, props: Any, name: str, urn: str, region: str | None) -> PlatformLine | None:
    """The toy control plane's fee and its system node pool (bill.RESOURCE_COUNTED_LINES); None otherwise."""
    hours = HOURS_PER_MONTH
    if resource_type == CLUSTER:
        return priced_line(NAME, "control-plane", region, name, "toy control plane", hours, hours)
    if resource_type != NODE_POOL or _is_gpu_type(str(get(props, "machineType", ""))):
        return None
    machine = str(get(props, "machineType", ""))
    low, high = number(get(props, "minNodes")) or 0, number(get(props, "maxNodes")) or 0
    return priced_line(NAME, f"instance:{machine}", region, name, f"system nodes ({machine})", low * hours, high * hours)


def deletion_protection_off(resource_type: str, name: str, props: Any) -> str | None:
    if resource_type == CLUSTER and get(props, "deletionProtection") is False:
        return f"toy cluster '{name}' has deletionProtection false; required: true in this environment."
    return None
