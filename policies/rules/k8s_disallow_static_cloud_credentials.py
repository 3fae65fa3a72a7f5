"""No static cloud credentials in Kubernetes Secrets, ConfigMaps, Helm values or container environments.

Triton reads its model bucket through IRSA/Pod Identity (EKS) or Workload Identity (GKE); a static key in the
cluster is a long-lived secret that outlives the people and pods it was made for.
"""

import base64
import binascii
import re

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import HELM_CHART_V4, HELM_RELEASE, K8S_CONFIG_MAP, K8S_SECRET, K8S_WORKLOADS, get, is_mapping, walk

# Names compared lower-case with every non-alphanumeric removed (AWS_ACCESS_KEY_ID, aws-access-key-id, awsAccessKeyId).
CREDENTIAL_NAMES = {
    "awsaccesskeyid",
    "awssecretaccesskey",
    "awssessiontoken",
    "secretaccesskey",
    "googleapplicationcredentials",
    "credentialsjson",
    "keyjson",
    "serviceaccountjson",
    "serviceaccountkey",
}
AWS_KEY_ID = re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b")
PRIVATE_KEY = re.compile(r"-----BEGIN (RSA |EC )?PRIVATE KEY-----|\"private_key\"\s*:")
CHECKED_TYPES = (K8S_SECRET, K8S_CONFIG_MAP, HELM_RELEASE, HELM_CHART_V4, *K8S_WORKLOADS)


def _normal(name: object) -> str:
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def _decoded(value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return value


def findings(props, base64_under: str | None = None) -> list[str]:
    """Paths that hold a credential: by name (a key, or an env entry's name) or by value (a key id, a private key)."""
    found = []
    for path, key, value in walk(props):
        if key is not None and _normal(key) in CREDENTIAL_NAMES and value not in (None, ""):
            found.append(path)
        elif key == "name" and _normal(value) in CREDENTIAL_NAMES:
            found.append(f"{path}={value}")
        elif isinstance(value, str):
            text = _decoded(value) if base64_under and path.startswith(base64_under) else value
            if AWS_KEY_ID.search(text) or PRIVATE_KEY.search(text):
                found.append(path)
    return sorted(set(found))


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in CHECKED_TYPES:
        return
    watched = get(args.props, "values") if args.resource_type in (HELM_RELEASE, HELM_CHART_V4) else args.props
    if not is_mapping(watched):
        return
    paths = findings(watched, base64_under="data" if args.resource_type == K8S_SECRET else None)
    if paths:
        report_violation(
            f"{args.resource_type.rsplit(':', 1)[-1]} '{args.name}' carries static cloud credentials at {', '.join(paths)}; "
            "none are allowed. Remove them and grant access with IRSA/EKS Pod Identity (AWS) or Workload Identity (GCP).",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="k8s-disallow-static-cloud-credentials",
    description="Kubernetes resources and Helm values must not carry static cloud credentials.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    remediation_steps=(
        "Delete the key material, rotate the exposed key, and bind the workload's service account to a cloud identity "
        "(IRSA/Pod Identity on EKS, Workload Identity on GKE)."
    ),
)
