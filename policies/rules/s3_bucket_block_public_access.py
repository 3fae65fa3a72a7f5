"""Every S3 bucket has a public access block with all four switches on."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import attached, get
from tritonfleet.clouds.aws.resources import s3_buckets

BLOCK = ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",)
SWITCHES = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for bucket in s3_buckets(args.resources):
        blocks = attached(args.resources, bucket, BLOCK)
        if not blocks:
            report_violation(
                f"S3 bucket '{bucket.name}' has no public access block; required: {', '.join(SWITCHES)} all true. "
                "Add an aws.s3.BucketPublicAccessBlock for it.",
                bucket.urn,
            )
            continue
        off = sorted({s for b in blocks for s in SWITCHES if get(b.props, s) is not True})
        if off:
            report_violation(
                f"S3 bucket '{bucket.name}' public access block leaves {', '.join(off)} off; all four must be true. "
                "Set them to true on its aws.s3.BucketPublicAccessBlock.",
                bucket.urn,
            )


POLICY = StackValidationPolicy(
    name="s3-bucket-block-public-access",
    description="S3 buckets must block public ACLs and public policies.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    remediation_steps=(
        "Create aws.s3.BucketPublicAccessBlock(bucket=..., block_public_acls=True, block_public_policy=True, "
        "ignore_public_acls=True, restrict_public_buckets=True)."
    ),
)
