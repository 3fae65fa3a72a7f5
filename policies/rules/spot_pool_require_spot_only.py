"""In environments that run on spot only (dev), every GPU pool buys spot capacity."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._fixes import config_fix
from policies._pools import gpu_pool


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    pool = gpu_pool(args.resource_type, args.props, args.urn, args.name)
    if pool is None or (pool.purchase == "spot" and not pool.on_demand_fallback):
        return
    if pool.on_demand_fallback:
        report_violation(
            f"GPU pool '{args.name}' prefers spot but falls back to on-demand ({pool.max_nodes if pool.max_nodes is not None else '?'} "
            "nodes at most, karpenter.sh/capacity-type spot and on-demand); this environment runs GPUs on spot only. "
            + config_fix(args.urn, {"gpuPools[<i>].onDemandFallback": False}, f" (<i>: pool '{pool.pool}')"),
            None,
        )
        return
    report_violation(
        f"GPU pool '{args.name}' buys {pool.purchase} capacity ({pool.max_nodes if pool.max_nodes is not None else '?'} "
        "nodes at most); this environment runs GPUs on spot only. "
        + config_fix(
            args.urn,
            {"gpuPools[<i>].capacity": "mixed", "gpuPools[<i>].onDemandBase": 0, "gpuPools[<i>].spotShare": 1},
            f" (<i>: pool '{pool.pool}')",
        ),
        None,
    )


POLICY = ResourceValidationPolicy(
    name="spot-pool-require-spot-only",
    description="GPU pools must buy only spot capacity in spot-only environments.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    remediation_steps=(
        "Set tritonfleet:gpuPools[].onDemandBase to 0, spotShare to 1 and onDemandFallback to false (capacity: mixed)."
    ),
)
