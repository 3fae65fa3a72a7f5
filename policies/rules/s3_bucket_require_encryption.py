"""Every S3 bucket has a server-side encryption configuration (SSE-S3 or SSE-KMS)."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import attached, get, items
from tritonfleet.clouds.aws.resources import s3_buckets, s3_part

SSE = s3_part("BucketServerSideEncryptionConfiguration")
ALGORITHMS = ("AES256", "aws:kms", "aws:kms:dsse")


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for bucket in s3_buckets(args.resources):
        configs = attached(args.resources, bucket, SSE)
        algorithms = [
            str(get(rule, "applyServerSideEncryptionByDefault.sseAlgorithm", ""))
            for config in configs
            for rule in items(get(config.props, "rules"))
        ]
        if not any(a in ALGORITHMS for a in algorithms):
            found = ", ".join(a or "none" for a in algorithms) or "no BucketServerSideEncryptionConfiguration"
            report_violation(
                f"S3 bucket '{bucket.name}' has no default encryption ({found}); allowed: {', '.join(ALGORITHMS)}. "
                "Add an aws.s3.BucketServerSideEncryptionConfiguration for it (AES256, or aws:kms with modelBuckets[].kmsKeyId).",
                bucket.urn,
            )


POLICY = StackValidationPolicy(
    name="s3-bucket-require-encryption",
    description="S3 buckets must have a default server-side encryption configuration.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=(
        "Create aws.s3.BucketServerSideEncryptionConfiguration(bucket=..., "
        "rules=[{applyServerSideEncryptionByDefault: {sseAlgorithm: AES256 or aws:kms}}])."
    ),
)
