"""A stack that ships NetworkPolicies runs them on a cluster that enforces them.

Without enforcement a NetworkPolicy is stored and shown (`kubectl get networkpolicy` looks fine) and does nothing.
EKS enforces through the VPC CNI add-on's network-policy agent (add-on configuration `enableNetworkPolicy: "true"`,
vpc-cni v1.14.0 or later); GKE through Dataplane V2 (`datapathProvider: ADVANCED_DATAPATH`) or Calico network policy
(`networkPolicy.enabled` with the NETWORK_POLICY add-on). Sources: docs.aws.amazon.com/eks/latest/userguide/
cni-network-policy-configure.html, cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2 (read 2026-12).
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import EKS_CLUSTER, GKE_CLUSTER, decoded, get, is_mapping, is_triton_release

EKS_ADDON = "aws:eks/addon:Addon"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
VPC_CNI = "vpc-cni"
VPC_CNI_MINIMUM = (1, 14, 0)
ADVANCED_DATAPATH = "ADVANCED_DATAPATH"
FIX = (
    "Turn enforcement on: EKS, the vpc-cni add-on (v1.14.0 or later) with configuration values "
    '{"enableNetworkPolicy": "true"}; GKE, datapathProvider ADVANCED_DATAPATH (Dataplane V2, set when the cluster '
    "is created). tritonfleet sets both."
)


def ships_network_policies(resources: list[Any]) -> list[str]:
    """Names of what puts NetworkPolicies in the cluster: NetworkPolicy objects, Triton releases with theirs on."""
    found = []
    for r in resources:
        if r.resource_type == NETWORK_POLICY:
            found.append(r.name)
        elif is_triton_release(r.resource_type, r.props) and get(r.props, "values.networkPolicy.enabled", True) is not False:
            found.append(r.name)
    return found


def _version(text: str) -> tuple[int, ...] | None:
    """(1, 19, 2) from v1.19.2-eksbuild.1; None when unreadable."""
    core = text.lstrip("v").split("-", 1)[0].split(".")
    return tuple(int(p) for p in core) if core and all(p.isdigit() for p in core) else None


def eks_problem(addons: list[Any]) -> str | None:
    """Why the EKS cluster's pods are not policed (None when they are)."""
    cni = [a for a in addons if get(a.props, "addonName") == VPC_CNI]
    if not cni:
        return "has no managed vpc-cni add-on with its network-policy agent enabled"
    props = cni[0].props
    values = decoded(get(props, "configurationValues"))
    enabled = get(values, "enableNetworkPolicy") if is_mapping(values) else None
    if str(enabled).lower() != "true":
        return f"runs the vpc-cni add-on without enableNetworkPolicy (configurationValues: {get(props, 'configurationValues')!r})"
    version = get(props, "addonVersion")
    if isinstance(version, str) and (parsed := _version(version)) is not None and parsed < VPC_CNI_MINIMUM:
        return f"pins vpc-cni {version}, older than v1.14.0, the first with the network-policy agent"
    return None


def gke_problem(props: Any) -> str | None:
    datapath = get(props, "datapathProvider", "")
    if datapath == ADVANCED_DATAPATH:
        return None
    if get(props, "networkPolicy.enabled") is True and get(props, "addonsConfig.networkPolicyConfig.disabled") is not True:
        return None
    return f"has datapathProvider {datapath or 'unset'} (legacy datapath) and no Calico network policy"


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    shipped = ships_network_policies(args.resources)
    if not shipped:
        return
    shown = ", ".join(sorted(shipped)[:3]) + (" …" if len(shipped) > 3 else "")
    addons = [r for r in args.resources if r.resource_type == EKS_ADDON]
    for resource in args.resources:
        if resource.resource_type == EKS_CLUSTER:
            problem = eks_problem(addons)
        elif resource.resource_type == GKE_CLUSTER:
            problem = gke_problem(resource.props)
        else:
            continue
        if problem:
            report_violation(
                f"Cluster '{resource.name}' {problem}: the NetworkPolicies of {shown} would be stored and never enforced. {FIX}",
                resource.urn,
            )


POLICY = StackValidationPolicy(
    name="cluster-require-network-policy-enforcement",
    description="A stack that ships NetworkPolicies must run them on a cluster that enforces NetworkPolicy.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=FIX,
)
