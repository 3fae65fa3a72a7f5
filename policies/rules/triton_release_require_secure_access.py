"""Triton releases keep model control behind a key, and a public endpoint has TLS and authentication.

Read from the release's chart values (docs/access.md): `restrictedApis.groups` (which APIs need a key),
`ingress` (public exposure; TLS from `tlsSecretName` or the set `certificateAnnotation`) and `service` (a LoadBalancer
with no annotations is internet-facing on EKS and GKE). Mandatory in prod; the dev and staging configs make it advisory.
"""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import get, is_mapping, is_triton_release, items
from tritonfleet.clouds.aws.facts import ALB_INTERNAL_SCHEME, ALB_SCHEME_ANNOTATION
from tritonfleet.clouds.gcp.facts import GKE_INGRESS_CLASS_ANNOTATION, GKE_INTERNAL_INGRESS_CLASS
from tritonfleet.core.exposure import INFERENCE_APIS, MODEL_CONTROL_APIS

# Ingress annotations that make the load balancer internal to the cloud network (either cloud's).
INTERNAL_INGRESS_ANNOTATIONS = {ALB_SCHEME_ANNOTATION: ALB_INTERNAL_SCHEME, GKE_INGRESS_CLASS_ANNOTATION: GKE_INTERNAL_INGRESS_CLASS}


def _restricted_apis(values) -> set[str]:
    return {str(api) for group in items(get(values, "restrictedApis.groups")) for api in items(get(group, "apis"))}


def _public(values) -> str | None:
    """How the release is reachable from the internet, or None."""
    if get(values, "ingress.enabled") is True and not _internal_ingress(values):
        return f"an Ingress for {get(values, 'ingress.hostname', '(no hostname)')}"
    annotations = get(values, "service.annotations", {})
    if get(values, "service.type") == "LoadBalancer" and not (is_mapping(annotations) and len(annotations)):
        return "a LoadBalancer Service without internal-load-balancer annotations"
    return None


def _internal_ingress(values) -> bool:
    annotations = get(values, "ingress.annotations", {})  # keys contain dots: index the mapping, not a dotted path
    return is_mapping(annotations) and any(annotations.get(k) == v for k, v in INTERNAL_INGRESS_ANNOTATIONS.items())


def _has_tls(values) -> bool:
    if get(values, "ingress.enabled") is not True:
        return False  # a bare LoadBalancer Service forwards TCP: nothing terminates TLS for Triton
    if get(values, "ingress.tlsSecretName", ""):
        return True
    annotation = get(values, "ingress.certificateAnnotation", "")
    annotations = get(values, "ingress.annotations", {})  # keys contain dots: index the mapping, not a dotted path
    return bool(annotation) and is_mapping(annotations) and bool(annotations.get(annotation))


def violations(values) -> list[str]:
    """What is wrong with a Triton release's access values (plain function: the policy reports each)."""
    found = []
    restricted = _restricted_apis(values)
    open_control = [api for api in MODEL_CONTROL_APIS if api not in restricted]
    if open_control:
        found.append(
            f"the model-control APIs {', '.join(open_control)} need no key: any client that reaches port 8000/8001 can "
            "load, unload or reconfigure models. Set access.restrictModelControl true (the default)."
        )
    public = _public(values)
    if public:
        if not _has_tls(values):
            found.append(
                f"it is public through {public} without TLS. Use access.exposure public with access.tls "
                "(an ACM certificate ARN on AWS; a pre-shared certificate, a Secret or a cert-manager issuer on GCP)."
            )
        missing = [api for api in INFERENCE_APIS if api not in restricted]
        if missing:
            found.append(
                f"it is public through {public} and serves {', '.join(missing)} without authentication. "
                "Set access.restrictInference true; clients then send the inference key."
            )
    return found


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not is_triton_release(args.resource_type, args.props):
        return
    for problem in violations(get(args.props, "values", {})):
        report_violation(f"Triton release '{args.name}': {problem}", None)


POLICY = ResourceValidationPolicy(
    name="triton-release-require-secure-access",
    description="Triton releases lock model control behind a key; public endpoints have TLS and authentication.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    remediation_steps=(
        "Keep access.restrictModelControl true; for access.exposure public set access.tls and access.restrictInference "
        "true (tritonfleet refuses public without them); see docs/access.md."
    ),
)
