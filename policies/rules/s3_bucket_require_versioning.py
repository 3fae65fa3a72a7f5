"""Every S3 bucket keeps object versions, so a bad model upload or delete can be rolled back."""

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import attached, get
from tritonfleet.clouds.aws.resources import s3_buckets, s3_part

VERSIONING = s3_part("BucketVersioning")


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for bucket in s3_buckets(args.resources):
        statuses = [str(get(v.props, "versioningConfiguration.status", "")) for v in attached(args.resources, bucket, VERSIONING)]
        if "Enabled" not in statuses:
            found = ", ".join(s or "unset" for s in statuses) or "no BucketVersioning"
            report_violation(
                f"S3 bucket '{bucket.name}' does not keep versions (versioning: {found}; required: Enabled). "
                "Add an aws.s3.BucketVersioning with versioningConfiguration.status Enabled.",
                bucket.urn,
            )


POLICY = StackValidationPolicy(
    name="s3-bucket-require-versioning",
    description="S3 buckets must have versioning enabled.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    remediation_steps="Create aws.s3.BucketVersioning(bucket=..., versioning_configuration={status: Enabled}).",
)
