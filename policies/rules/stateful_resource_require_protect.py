"""Clusters, GPU node pools (Karpenter NodePools and EC2NodeClasses on AWS) and buckets are protected, so no `pulumi up` or destroy can delete them by accident."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._fixes import config_fix
from policies._match import (
    EKS_CLUSTER,
    EKS_NODE_GROUP,
    GCS_BUCKET,
    GKE_CLUSTER,
    GKE_NODE_POOL,
    KARPENTER_NODE_CLASS,
    KARPENTER_NODE_POOL,
    S3_BUCKET,
    get,
)
from policies._settings import schema, settings

SCHEMA = schema(
    resourceTypes={
        "type": "array",
        "items": {"type": "string"},
        "default": [
            EKS_CLUSTER,
            EKS_NODE_GROUP,
            KARPENTER_NODE_POOL,  # deleting one drains and terminates its GPU nodes
            KARPENTER_NODE_CLASS,
            *S3_BUCKET,
            GKE_CLUSTER,
            GKE_NODE_POOL,
            GCS_BUCKET,
        ],
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
    if args.resource_type == GKE_CLUSTER and get(args.props, "deletionProtection") is False:
        report_violation(
            f"GKE cluster '{args.name}' has deletionProtection false; required: true in this environment. "
            "Set deletion_protection=True.",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="stateful-resource-require-protect",
    description="Clusters, node pools and buckets must be protected against deletion.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=SCHEMA,
    remediation_steps="Set tritonfleet:protect to true (the default for prod stacks); the program passes protect=True.",
)
