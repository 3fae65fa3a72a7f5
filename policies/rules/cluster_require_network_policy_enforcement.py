"""A stack that ships NetworkPolicies runs them on a cluster that enforces them.

Without enforcement a NetworkPolicy is stored and shown (`kubectl get networkpolicy` looks fine) and does nothing.
What enforces it on each cloud is read by tritonfleet/core/network_policy.py (sources there): EKS, the vpc-cni
add-on's network-policy agent; GKE, Dataplane V2 or Calico.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from tritonfleet.core.conventions import TRITON_CHART_NAME
from tritonfleet.core.network_policy import enforcement, ships_network_policies

FIX = (
    "Turn enforcement on: EKS, the vpc-cni add-on (v1.14.0 or later) with configuration values "
    '{"enableNetworkPolicy": "true"}; GKE, datapathProvider ADVANCED_DATAPATH (Dataplane V2, set when the cluster '
    "is created). tritonfleet sets both."
)


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = [(r.resource_type, r.name, r.props) for r in args.resources]
    shipped = ships_network_policies(resources, TRITON_CHART_NAME)
    if not shipped:
        return
    shown = ", ".join(sorted(shipped)[:3]) + (" …" if len(shipped) > 3 else "")
    urns = {r.name: r.urn for r in args.resources}
    for found in enforcement(resources):
        if not found.enforced:
            report_violation(
                f"Cluster '{found.cluster}' has {found.how}: the NetworkPolicies of {shown} would be stored and never "
                f"enforced. {FIX}",
                urns.get(found.cluster),
            )


POLICY = StackValidationPolicy(
    name="cluster-require-network-policy-enforcement",
    description="A stack that ships NetworkPolicies must run them on a cluster that enforces NetworkPolicy.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=FIX,
)
