"""The most GPUs a stack can run at once (every pool at its maximum) stays within the environment's ceiling."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._pools import gpu_pools
from policies._settings import schema, settings

SCHEMA = schema(maxGpus={"type": "integer", "minimum": 0, "default": 0, "description": "the most GPUs the stack may run at once"})


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    limit = int(settings(args, SCHEMA)["maxGpus"])
    pools = gpu_pools(args.resources)
    for pool in pools:
        if pool.max_gpus is None:
            why = pool.bounds_note or f"instance type {', '.join(pool.instance_types) or '?'} has no known GPU count"
            report_violation(
                f"GPU pool '{pool.name}' has no known GPU maximum ({why}), so the ceiling of {limit} GPUs cannot be "
                "enforced. Give the pool explicit total node bounds and a catalogued type.",
                pool.urn,
            )
    total = sum(p.max_gpus for p in pools if p.max_gpus is not None)
    if total > limit:
        detail = ", ".join(f"{p.name} {p.max_gpus}" for p in pools if p.max_gpus)
        report_violation(
            f"The stack can run {total} GPUs at its maximum ({detail}), over the environment's ceiling of {limit}. "
            "Lower gpuPools[].maxNodes, or raise maxGpus in this stack's policy config after review.",
            None,
        )


POLICY = StackValidationPolicy(
    name="gpu-stack-limit-total-gpus",
    description="The stack's GPU pools at their maximum size must stay within the environment's GPU ceiling.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=SCHEMA,
    remediation_steps="Lower tritonfleet:gpuPools[].maxNodes, or raise maxGpus in policies/config/<stack>.json through review.",
)
