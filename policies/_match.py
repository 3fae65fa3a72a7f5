"""Shared matchers: which resources a policy is about, and reading their engine (camelCase) properties.

A cloud's resource types are its own (tritonfleet/clouds/<cloud>/resources.py): rules prefixed by their cloud import
them from there; the others ask the registered clouds (tritonfleet/core/cloud.py).

Properties arrive as read-only Mapping/Sequence proxies (not dicts or lists) and numbers as floats, so everything
here goes through `collections.abc` and converts numbers itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from tritonfleet.core import pins
from tritonfleet.core.conventions import TRITON_CHART_NAME

# The property readers are the neutral ones every reader of planned resources shares (the rules import them here).
from tritonfleet.core.planned import decoded, get, is_list, is_mapping, items, number, string_map  # noqa: F401

K8S_DEPLOYMENT = "kubernetes:apps/v1:Deployment"
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
