"""Every S3 bucket's policy denies requests that do not use TLS (aws:SecureTransport false)."""

import json

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from policies._match import attached, get, is_list, is_mapping
from tritonfleet.clouds.aws.resources import s3_buckets

POLICY_TYPES = ("aws:s3/bucketPolicy:BucketPolicy",)


def _listed(value) -> list:
    return list(value) if is_list(value) else [value]


def denies_plain_http(document) -> bool:
    """True when a statement denies every principal every S3 action when aws:SecureTransport is false."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except json.JSONDecodeError:
            return False
    for statement in _listed(get(document, "Statement", [])):
        if not is_mapping(statement) or statement.get("Effect") != "Deny":
            continue
        principal = statement.get("Principal")
        everyone = principal == "*" or (is_mapping(principal) and "*" in _listed(principal.get("AWS", [])))
        actions = _listed(statement.get("Action", []))
        condition = get(statement, "Condition.Bool", {})
        insecure = is_mapping(condition) and str(condition.get("aws:SecureTransport", "")).lower() == "false"
        if everyone and ("s3:*" in actions or "*" in actions) and insecure:
            return True
    return False


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for bucket in s3_buckets(args.resources):
        policies = attached(args.resources, bucket, POLICY_TYPES)
        if not any(denies_plain_http(get(p.props, "policy")) for p in policies):
            found = (
                f"{len(policies)} bucket polic{'y' if len(policies) == 1 else 'ies'} without that statement"
                if policies
                else "no BucketPolicy"
            )
            report_violation(
                f"S3 bucket '{bucket.name}' accepts plain-HTTP requests ({found}); required: a Deny of s3:* for Principal * "
                "when aws:SecureTransport is false. Add that statement to its aws.s3.BucketPolicy.",
                bucket.urn,
            )


POLICY = StackValidationPolicy(
    name="s3-bucket-require-tls",
    description="S3 bucket policies must deny requests that do not use TLS.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=(
        'Add {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": [bucket ARN, bucket ARN/*], '
        '"Condition": {"Bool": {"aws:SecureTransport": "false"}}} to the bucket policy.'
    ),
)
