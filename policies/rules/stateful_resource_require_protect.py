"""Clusters, GPU node pools (Karpenter NodePools and EC2NodeClasses on AWS) and buckets are protected, so no `pulumi up` or destroy can delete them by accident."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._fixes import config_fix
from policies._settings import schema, settings
from tritonfleet.core.cloud import cloud, cloud_names

SCHEMA = schema(
    resourceTypes={
        "type": "array",
        "items": {"type": "string"},
        "default": [typ for name in cloud_names() for typ in cloud(name).protected_types],
        "description": "resource type tokens that must be protected",
    }
)


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in settings(args, SCHEMA)["resourceTypes"]:
        return
    if not args.opts.protect:
        report_violation(
            f"'{args.name}' ({args.resource_type}) is not protected (protect: false); required: true in this environment, "
            "so a replace or destroy cannot delete it (protect is true by default in prod). "
            + config_fix(args.urn, {"protect": True}),
            None,
        )
    for name in cloud_names():
        if (problem := cloud(name).deletion_protection_off(args.resource_type, args.name, args.props)) is not None:
            report_violation(problem, None)


POLICY = ResourceValidationPolicy(
    name="stateful-resource-require-protect",
    description="Clusters, node pools and buckets must be protected against deletion.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=SCHEMA,
    remediation_steps="Set tritonfleet:protect to true (the default for prod stacks); the program passes protect=True.",
)
