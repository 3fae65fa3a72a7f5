"""Whether a planned cluster enforces NetworkPolicy, read from resource properties (engine form, camelCase).

One reading for two users: the plan document's `networkPolicy` section (and `tritonfleet plan`'s summary) and the
policy `cluster-require-network-policy-enforcement`. Plain data in, plain data out; no Pulumi import. Each cloud
reads its own clusters (`Cloud.cluster_enforcement`, tritonfleet/clouds/<cloud>/resources.py, the facts and their
sources in its facts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tritonfleet.core.cloud import cloud, cloud_names
from tritonfleet.core.planned import Enforcement, get

NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def enforcement(resources: Sequence[tuple[str, str, Any]]) -> list[Enforcement]:
    """Per cluster of a stack, from (type, name, properties) of its resources."""
    clouds = [cloud(name) for name in cloud_names()]
    return [
        found
        for typ, name, props in resources
        for each in clouds
        if (found := each.cluster_enforcement(typ, name, props, resources)) is not None
    ]


def ships_network_policies(resources: Sequence[tuple[str, str, Any]], triton_chart: str) -> list[str]:
    """Names of what puts NetworkPolicies in the cluster: NetworkPolicy objects, and Triton releases (chart
    `triton_chart`) with theirs on (the chart's default)."""
    found = []
    for typ, name, props in resources:
        chart = get(props, "chart", "")
        if typ == NETWORK_POLICY or (
            typ == HELM_RELEASE
            and isinstance(chart, str)
            and chart.rstrip("/").rsplit("/", 1)[-1] == triton_chart
            and get(props, "values.networkPolicy.enabled", True) is not False
        ):
            found.append(name)
    return found
