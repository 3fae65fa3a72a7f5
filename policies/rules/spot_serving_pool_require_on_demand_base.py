"""Pools that serve Triton keep an on-demand (or reserved) base of nodes that a spot reclaim cannot take away."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._fixes import config_fix
from policies._match import is_triton_release
from policies._pools import gpu_pools, release_node_selector, selected_pool_names, selected_pools
from policies._settings import schema, settings

SCHEMA = schema(
    minOnDemandNodes={
        "type": "integer",
        "minimum": 0,
        "default": 1,
        "description": "non-spot nodes every serving pool keeps at its minimum size",
    }
)


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    need = int(settings(args, SCHEMA)["minOnDemandNodes"])
    pools = gpu_pools(args.resources)
    for release in args.resources:
        if not is_triton_release(release.resource_type, release.props):
            continue
        # Every node pool the release may land on (a pool-less release is triton-release-tolerate-pool-taint's).
        groups = selected_pools(release_node_selector(release.props), pools)
        if not groups:
            continue
        name = selected_pool_names(groups).strip("'")
        unknown = [p for p in groups if p.guaranteed and p.min_nodes is None]
        if unknown:
            report_violation(
                f"Pool '{name}' serves Triton release '{release.name}', but the minimum of {unknown[0].name} is unknown "
                f"({unknown[0].bounds_note}), so its non-spot base of at least {need} cannot be verified. "
                "Give the pool explicit total node bounds.",
                release.urn,
            )
            continue
        base = sum(p.min_nodes or 0 for p in groups if p.guaranteed)
        if base < need:
            mix = ", ".join(f"{p.name} {p.purchase} {p.min_nodes}..{p.max_nodes}" for p in groups)
            report_violation(
                f"Pool '{name}' serves Triton release '{release.name}' with {base} non-spot node(s) at its minimum "
                f"({mix}); this environment requires at least {need}, so one spot reclaim can take serving to zero. "
                + config_fix(
                    release.urn,
                    {"gpuPools[<i>].onDemandBase": need, "gpuPools[<i>].minNodes": need},
                    f" (<i>: pool '{name}'; minNodes at least onDemandBase)",
                ),
                release.urn,
            )


POLICY = StackValidationPolicy(
    name="spot-serving-pool-require-on-demand-base",
    description="GPU pools that serve Triton must keep a minimum number of on-demand or reserved nodes.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=SCHEMA,
    remediation_steps="Raise tritonfleet:gpuPools[].onDemandBase and minNodes of the serving pool to minOnDemandNodes.",
)
