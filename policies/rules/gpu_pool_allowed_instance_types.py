"""GPU node groups and node pools use only the instance/machine types this environment allows."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._pools import gpu_pool
from policies._settings import schema, settings

SCHEMA = schema(
    allowedInstanceTypes={
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "instance/machine types GPU pools may use in this environment (empty: none)",
    }
)


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    pool = gpu_pool(args.resource_type, args.props, args.urn, args.name)
    if pool is None:
        return
    allowed = [str(t) for t in settings(args, SCHEMA)["allowedInstanceTypes"]]
    if not pool.instance_types:
        report_violation(
            f"GPU pool '{args.name}' does not name its instance type; allowed here: {', '.join(allowed) or 'none'}. "
            "Set the pool's instanceType explicitly.",
            None,
        )
    for itype in pool.instance_types:
        if itype not in allowed:
            report_violation(
                f"GPU pool '{args.name}' uses instance type {itype}, which this environment does not allow "
                f"(allowed: {', '.join(allowed) or 'none'}). Pick an allowed type in gpuPools[].instanceType, "
                "or add it to allowedInstanceTypes in this stack's policy config after review.",
                None,
            )


POLICY = ResourceValidationPolicy(
    name="gpu-pool-allowed-instance-types",
    description="GPU pools may only use the instance or machine types allowed for the environment.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=SCHEMA,
    remediation_steps=(
        "Choose an allowed type for the pool (tritonfleet:gpuPools[].instanceType), or extend allowedInstanceTypes in "
        "policies/config/<stack>.json through review."
    ),
)
