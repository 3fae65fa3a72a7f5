"""Every GCS bucket uses uniform bucket-level access (IAM only, no per-object ACLs)."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import get
from tritonfleet.clouds.gcp.resources import GCS_BUCKET


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != GCS_BUCKET:
        return
    value = get(args.props, "uniformBucketLevelAccess")
    if value is not True:
        report_violation(
            f"GCS bucket '{args.name}' has uniformBucketLevelAccess {value if value is not None else 'unset'}; required: true, "
            "so object ACLs cannot grant access. Set uniform_bucket_level_access=True.",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="gcs-bucket-require-uniform-access",
    description="GCS buckets must use uniform bucket-level access.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps="Set uniform_bucket_level_access=True on gcp.storage.Bucket.",
)
