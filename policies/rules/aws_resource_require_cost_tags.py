"""Cost-bearing AWS resources carry the cost-allocation tags (their own tags or the provider's defaultTags).

Karpenter's GPU instances and volumes take their tags from their EC2NodeClass's spec.tags (no provider defaults
reach them: Karpenter, not Pulumi, launches them)."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._cost_keys import check_cost_keys, cost_key_schema, provider_defaults
from policies._match import decoded, get
from policies._settings import settings
from tritonfleet.clouds.aws.resources import EKS_CLUSTER, EKS_NODE_GROUP, KARPENTER_NODE_CLASS, S3_BUCKET
from tritonfleet.clouds.aws.resources import PROVIDER as AWS_PROVIDER

SCHEMA = cost_key_schema("tag", "AWS", [EKS_CLUSTER, EKS_NODE_GROUP, KARPENTER_NODE_CLASS, *S3_BUCKET])


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    config = settings(args, SCHEMA)
    if args.resource_type not in config["resourceTypes"]:
        return
    if args.resource_type == KARPENTER_NODE_CLASS:
        own, defaults = get(args.props, "spec.tags"), None
        fix = " (the program copies them into the EC2NodeClass's spec.tags)."
    else:
        own, fix = get(args.props, "tags"), "."
        defaults = provider_defaults(args, AWS_PROVIDER, lambda props: get(decoded(get(props, "defaultTags")), "tags"))
    check_cost_keys(args, report_violation, "tag", config["requiredTags"], own, defaults, fix=fix)


POLICY = ResourceValidationPolicy(
    name="aws-resource-require-cost-tags",
    description="Cost-bearing AWS resources must carry the required cost-allocation tags.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    config_schema=SCHEMA,
    remediation_steps="Add the missing keys to tritonfleet:tags (the program tags every cost-bearing resource with them).",
)
