"""Every GCS bucket enforces public access prevention, so no IAM grant can make it public."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import get
from tritonfleet.clouds.gcp.resources import GCS_BUCKET


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != GCS_BUCKET:
        return
    value = get(args.props, "publicAccessPrevention")
    if value != "enforced":
        report_violation(
            f"GCS bucket '{args.name}' has publicAccessPrevention {value or 'unset (inherited)'}; required: enforced. "
            'Set public_access_prevention="enforced".',
            None,
        )


POLICY = ResourceValidationPolicy(
    name="gcs-bucket-prevent-public-access",
    description="GCS buckets must enforce public access prevention.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    remediation_steps='Set public_access_prevention="enforced" on gcp.storage.Bucket.',
)
