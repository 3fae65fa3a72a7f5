"""Whether a planned cluster enforces NetworkPolicy, read from resource properties (engine form, camelCase).

One reading for two users: the plan document's `networkPolicy` section (and `tritonfleet plan`'s summary) and the
policy `cluster-require-network-policy-enforcement`. Plain data in, plain data out; no Pulumi import. The facts (and
their sources) are the clouds' own: tritonfleet/clouds/aws/facts.py, tritonfleet/clouds/gcp/facts.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tritonfleet.clouds.aws.facts import VPC_CNI_ADDON, VPC_CNI_NETWORK_POLICY_MINIMUM
from tritonfleet.clouds.gcp.facts import ADVANCED_DATAPATH

EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_ADDON = "aws:eks/addon:Addon"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"

@dataclass(frozen=True)
class Enforcement:
    cluster: str  # the cluster resource's name
    enforced: bool
    how: str  # what enforces it, or why nothing does


def _get(props: Any, path: str, default: Any = None) -> Any:
    value = props
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return default
        value = value[part]
    return default if value is None else value


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def _version(text: str) -> tuple[int, ...] | None:
    """(1, 19, 2) from v1.19.2-eksbuild.1; None when unreadable."""
    core = text.lstrip("v").split("-", 1)[0].split(".")
    return tuple(int(p) for p in core) if all(p.isdigit() for p in core) else None


def eks_enforcement(name: str, addons: Sequence[Any]) -> Enforcement:
    """`addons`: the properties of the stack's EKS add-ons."""
    cni = [a for a in addons if _get(a, "addonName") == VPC_CNI_ADDON]
    if not cni:
        return Enforcement(name, False, "no managed vpc-cni add-on with its network-policy agent")
    values = _decoded(_get(cni[0], "configurationValues"))
    enabled = _get(values, "enableNetworkPolicy") if isinstance(values, Mapping) else None
    if str(enabled).lower() != "true":
        return Enforcement(
            name, False, f"vpc-cni without enableNetworkPolicy (configurationValues: {_get(cni[0], 'configurationValues')!r})"
        )
    version = _get(cni[0], "addonVersion")
    if isinstance(version, str) and (parsed := _version(version)) is not None and parsed < VPC_CNI_NETWORK_POLICY_MINIMUM:
        return Enforcement(name, False, f"vpc-cni {version}, older than v1.14.0, the first with the network-policy agent")
    return Enforcement(name, True, "vpc-cni network-policy agent (enableNetworkPolicy)")


def gke_enforcement(name: str, props: Any) -> Enforcement:
    datapath = _get(props, "datapathProvider", "")
    if datapath == ADVANCED_DATAPATH:
        return Enforcement(name, True, "Dataplane V2 (ADVANCED_DATAPATH)")
    if _get(props, "networkPolicy.enabled") is True and _get(props, "addonsConfig.networkPolicyConfig.disabled") is not True:
        return Enforcement(name, True, "Calico network policy")
    return Enforcement(name, False, f"datapathProvider {datapath or 'unset'} (legacy datapath) and no Calico network policy")


def enforcement(resources: Sequence[tuple[str, str, Any]]) -> list[Enforcement]:
    """Per cluster of a stack, from (type, name, properties) of its resources."""
    addons = [props for typ, _, props in resources if typ == EKS_ADDON]
    found = []
    for typ, name, props in resources:
        if typ == EKS_CLUSTER:
            found.append(eks_enforcement(name, addons))
        elif typ == GKE_CLUSTER:
            found.append(gke_enforcement(name, props))
    return found


def ships_network_policies(resources: Sequence[tuple[str, str, Any]], triton_chart: str) -> list[str]:
    """Names of what puts NetworkPolicies in the cluster: NetworkPolicy objects, and Triton releases (chart
    `triton_chart`) with theirs on (the chart's default)."""
    found = []
    for typ, name, props in resources:
        chart = _get(props, "chart", "")
        if typ == NETWORK_POLICY or (
            typ == "kubernetes:helm.sh/v3:Release"
            and isinstance(chart, str)
            and chart.rstrip("/").rsplit("/", 1)[-1] == triton_chart
            and _get(props, "values.networkPolicy.enabled", True) is not False
        ):
            found.append(name)
    return found
