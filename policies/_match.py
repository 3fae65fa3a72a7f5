"""Shared matchers: which resources a policy is about, and reading their engine (camelCase) properties.

Properties arrive as read-only Mapping/Sequence proxies (not dicts or lists) and numbers as floats, so everything
here goes through `collections.abc` and converts numbers itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tritonfleet.core import pins
from tritonfleet.core.conventions import TRITON_CHART_NAME

EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
K8S_DEPLOYMENT = "kubernetes:apps/v1:Deployment"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
S3_BUCKET = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
GCS_BUCKET = "gcp:storage/bucket:Bucket"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
HELM_CHART_V4 = "kubernetes:helm.sh/v4:Chart"
K8S_SECRET = "kubernetes:core/v1:Secret"
K8S_CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
K8S_WORKLOADS = (
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:apps/v1:DaemonSet",
    "kubernetes:batch/v1:Job",
    "kubernetes:batch/v1:CronJob",
    "kubernetes:core/v1:Pod",
)
AWS_PROVIDER = "pulumi:providers:aws"
GCP_PROVIDER = "pulumi:providers:gcp"


def s3_part(name: str) -> tuple[str, ...]:
    """Both spellings of an S3 bucket sub-resource type: the v7 name and its deprecated V2 alias."""
    lower = name[0].lower() + name[1:]
    return (f"aws:s3/{lower}:{name}", f"aws:s3/{lower}V2:{name}V2")


def is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


def is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def get(props: Any, path: str, default: Any = None) -> Any:
    """props['a']['b']... for a dotted path; `default` when any step is missing or not an object."""
    value = props
    for part in path.split("."):
        if not is_mapping(value) or part not in value:
            return default
        value = value[part]
    return default if value is None else value


def items(value: Any) -> list[Any]:
    return list(value) if is_list(value) else []


def number(value: Any) -> int | None:
    """An integral count from the wire (4.0 -> 4); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def decoded(value: Any) -> Any:
    """Providers send nested objects as JSON text, resources as objects: the object either way (None if unreadable)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def string_map(value: Any) -> dict[str, str]:
    """A tags/labels map, from an object or from a provider's JSON text."""
    value = decoded(value)
    return {str(k): str(v) for k, v in value.items()} if is_mapping(value) else {}


def walk(value: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Every (path, key, value) below an object, depth first; list items get [i] paths and key None."""
    if is_mapping(value):
        for key in sorted(value, key=str):
            child = value[key]
            here = f"{path}.{key}" if path else str(key)
            yield here, key, child
            yield from walk(child, here)
    elif is_list(value):
        for index, child in enumerate(value):
            here = f"{path}[{index}]"
            yield here, None, child
            yield from walk(child, here)


def chart_name(props: Any) -> str:
    """The chart's own name from a Helm Release/Chart `chart` (a path, repo/name or oci:// reference)."""
    chart = get(props, "chart", "")
    return chart.rstrip("/").rsplit("/", 1)[-1] if isinstance(chart, str) else ""


def is_triton_release(resource_type: str, props: Any) -> bool:
    return resource_type == HELM_RELEASE and chart_name(props) == TRITON_CHART_NAME


def is_gpu_operator_release(resource_type: str, props: Any) -> bool:
    return resource_type == HELM_RELEASE and chart_name(props) == pins.GPU_OPERATOR_CHART["chart"]


def short_name(urn: str) -> str:
    """type::name of a URN, for messages."""
    parts = urn.split("::")
    return f"{parts[-2].rsplit('$', 1)[-1]}::{parts[-1]}" if len(parts) >= 2 else urn


def attached(resources: Sequence[Any], bucket: Any, types: tuple[str, ...]) -> list[Any]:
    """The resources of `types` that configure `bucket`: by name/id in their `bucket` property, or, where that is
    not known yet (ids are computed), by depending on the bucket through `bucket` or at all."""
    names = {v for v in (get(bucket.props, "bucket"), get(bucket.props, "id")) if isinstance(v, str)}
    found = []
    for resource in resources:
        if resource.resource_type not in types:
            continue
        ref = get(resource.props, "bucket")
        by_property = [d.urn for d in (resource.property_dependencies or {}).get("bucket", [])]
        by_dependency = [d.urn for d in resource.dependencies]
        if (isinstance(ref, str) and ref in names) or bucket.urn in (by_property or by_dependency):
            found.append(resource)
    return found


def s3_buckets(resources: Sequence[Any]) -> list[Any]:
    return [r for r in resources if r.resource_type in S3_BUCKET]
