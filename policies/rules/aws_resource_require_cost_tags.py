"""Cost-bearing AWS resources carry the cost-allocation tags (their own tags or the provider's defaultTags).

Karpenter's GPU instances and volumes take their tags from their EC2NodeClass's spec.tags (no provider defaults
reach them: Karpenter, not Pulumi, launches them)."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import decoded, get, string_map
from policies._settings import schema, settings
from tritonfleet.clouds.aws.resources import EKS_CLUSTER, EKS_NODE_GROUP, KARPENTER_NODE_CLASS, S3_BUCKET
from tritonfleet.clouds.aws.resources import PROVIDER as AWS_PROVIDER

SCHEMA = schema(
    requiredTags={
        "type": "array",
        "items": {"type": "string"},
        "default": ["team", "cost-center"],
        "description": "tag keys every covered resource carries",
    },
    resourceTypes={
        "type": "array",
        "items": {"type": "string"},
        "default": [EKS_CLUSTER, EKS_NODE_GROUP, KARPENTER_NODE_CLASS, *S3_BUCKET],
        "description": "AWS resource type tokens that must carry the tags",
    },
)


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    config = settings(args, SCHEMA)
    if args.resource_type not in config["resourceTypes"]:
        return
    if args.resource_type == KARPENTER_NODE_CLASS:
        tags = string_map(get(args.props, "spec.tags"))
    else:
        tags = string_map(get(args.props, "tags"))
    if args.resource_type != KARPENTER_NODE_CLASS and args.provider is not None and args.provider.resource_type == AWS_PROVIDER:
        tags = string_map(get(decoded(get(args.provider.props, "defaultTags")), "tags")) | tags
    missing = [key for key in config["requiredTags"] if not tags.get(key)]
    if missing:
        report_violation(
            f"'{args.name}' ({args.resource_type}) lacks cost-allocation tag(s) {', '.join(missing)} "
            f"(has: {', '.join(sorted(tags)) or 'none'}). Set them in tritonfleet:tags"
            + (" (the program copies them into the EC2NodeClass's spec.tags)." if args.resource_type == KARPENTER_NODE_CLASS else "."),
            None,
        )


POLICY = ResourceValidationPolicy(
    name="aws-resource-require-cost-tags",
    description="Cost-bearing AWS resources must carry the required cost-allocation tags.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    config_schema=SCHEMA,
    remediation_steps="Add the missing keys to tritonfleet:tags (the program tags every cost-bearing resource with them).",
)
