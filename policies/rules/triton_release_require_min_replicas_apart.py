"""A Triton release keeps its minimum replicas on at least two nodes: one node's drain, upgrade, host maintenance or
spot reclaim must not take the whole floor (GPUs do not live-migrate, and a replacement reloads its models).

Apart means either the replicas cannot share a node (a replica takes more than half of the GPUs of every node it may
land on), or the chart's hostname spread is hard (DoNotSchedule) with minDomains >= 2 and a maxSkew below the minimum,
so one node alone takes at most all but one replica of it (tritonfleet/core/placement.py hostname_spread). Enabled in
prod's policy config."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._fixes import config_fix
from policies._match import get, is_triton_release, number
from policies._pools import gpu_pools, release_node_selector, selected_pools

NODES_APART = 2


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    pools = gpu_pools(args.resources)
    for release in args.resources:
        if not is_triton_release(release.resource_type, release.props):
            continue
        values = get(release.props, "values", {}) or {}
        minimum = number(get(values, "replicas.min")) or 1
        if minimum < NODES_APART:
            report_violation(
                f"Triton release '{release.name}' keeps {minimum} replica at its minimum, so one node's drain, "
                "upgrade or host maintenance stops it. "
                + config_fix(
                    release.urn,
                    {"tritonDeployments[<i>].minReplicas": NODES_APART},
                    f" (<i>: the deployment of release '{release.name}')",
                ),
                release.urn,
            )
            continue
        gpus = number(get(values, "gpusPerReplica")) or 1
        per_node = [p.gpus_per_node for p in selected_pools(release_node_selector(release.props), pools)]
        if not per_node:
            continue  # selects no GPU pool: triton-release-tolerate-pool-taint reports it
        if all(n is not None and n // gpus < NODES_APART for n in per_node):
            continue  # a replica takes more than half of any node it may use: two never share one
        spread = get(values, "topologySpread.hostname", {}) or {}
        hard = get(spread, "whenUnsatisfiable") == "DoNotSchedule"
        domains = number(get(spread, "minDomains")) or 0
        skew = number(get(spread, "maxSkew"))
        if hard and domains >= NODES_APART and skew is not None and skew < minimum:
            continue
        report_violation(
            f"Triton release '{release.name}' may run all {minimum} replicas of its minimum on one node: its "
            f"hostname spread is {get(spread, 'whenUnsatisfiable', 'absent')} (maxSkew {skew}, minDomains "
            f"{domains or 'unset'}). Set values.topologySpread.hostname to whenUnsatisfiable DoNotSchedule, "
            f"minDomains 2, maxSkew {minimum - 1} (tritonfleet does for prod deployments).",
            release.urn,
        )


POLICY = StackValidationPolicy(
    name="triton-release-require-min-replicas-apart",
    description="A Triton release's minimum replicas must never all sit on one node.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=(
        "Keep minReplicas at 2 or more and the chart's hostname spread hard (DoNotSchedule, minDomains 2, maxSkew "
        "minReplicas-1), as tritonfleet.core.placement.hostname_spread sets it for prod."
    ),
)
