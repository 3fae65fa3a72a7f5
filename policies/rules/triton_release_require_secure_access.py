"""Triton releases keep model control behind a key, a public endpoint has TLS and authentication, and an internal one
open to every address serves no unauthenticated inference unless the policy config acknowledges it.

Read from the release's chart values (docs/access.md): `restrictedApis.groups` (which APIs need a key), `ingress`
(TLS from `tlsSecretName` or the set `certificateAnnotation`) and `service`. Exposure is decided from what the cloud's
controllers act on, never from the mere presence of annotations: a LoadBalancer Service is internal only with the AWS
Load Balancer Controller's `aws-load-balancer-type: external` and `aws-load-balancer-scheme: internal`, or GKE's
`networking.gke.io/load-balancer-type: Internal`; an Ingress only with the ALB scheme `internal` or GKE's class
`gce-internal`; a Gateway (`gateway`: TLS from `tlsSecretName` or `tlsOptions`) only with GKE's class `gke-l7-rilb`;
`internet-facing` is public; a NodePort Service opens a port on every node and counts as public; and `ingress.enabled`
and `gateway.enabled` count as Helm's `if` reads them (the text "true" is enabled). Mandatory in prod; the dev and staging
configs make it advisory.
"""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import get, is_list, is_mapping, is_triton_release, items
from policies._settings import schema, settings
from tritonfleet.clouds.aws.facts import (
    ALB_INTERNAL_SCHEME,
    ALB_PUBLIC_SCHEME,
    ALB_SCHEME_ANNOTATION,
    NLB_CONTROLLER_TYPE,
    NLB_SCHEME_ANNOTATION,
    NLB_TYPE_ANNOTATION,
)
from tritonfleet.clouds.gcp.facts import (
    GKE_INGRESS_CLASS_ANNOTATION,
    GKE_INTERNAL_GATEWAY_CLASS,
    GKE_INTERNAL_INGRESS_CLASS,
    GKE_INTERNAL_LB_TYPE,
    GKE_LB_TYPE_ANNOTATION,
)
from tritonfleet.core.exposure import ANYWHERE, INFERENCE_APIS, MODEL_CONTROL_APIS

# The ALB's client networks (comma-separated CIDRs); without it the controller opens the listeners to 0.0.0.0/0.
ALB_INBOUND_CIDRS_ANNOTATION = "alb.ingress.kubernetes.io/inbound-cidrs"
EVERY_ADDRESS = (ANYWHERE, "::/0")
SCHEMA = schema(
    acknowledgeOpenInternalInference={
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "Triton release names whose internal endpoint may take unauthenticated inference from "
        "0.0.0.0/0 (reviewed: every network routed to the VPC reaches it)",
    }
)


def _helm_true(value) -> bool:
    """Whether Helm's `if` takes a value as true (Go template truth: any non-empty text, "false" included)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str) or is_mapping(value) or is_list(value):
        return len(value) > 0
    return False


def _annotations(values, path: str) -> dict[str, str]:
    found = get(values, path, {})  # keys contain dots: index the mapping, not a dotted path
    return {str(k): str(v) for k, v in found.items()} if is_mapping(found) else {}


def _internal_service(annotations: dict[str, str]) -> bool:
    if annotations.get(NLB_SCHEME_ANNOTATION) == ALB_PUBLIC_SCHEME:
        return False
    aws = annotations.get(NLB_TYPE_ANNOTATION) == NLB_CONTROLLER_TYPE and (
        annotations.get(NLB_SCHEME_ANNOTATION) == ALB_INTERNAL_SCHEME
    )
    return aws or annotations.get(GKE_LB_TYPE_ANNOTATION) == GKE_INTERNAL_LB_TYPE


def _internal_ingress(annotations: dict[str, str]) -> bool:
    if annotations.get(ALB_SCHEME_ANNOTATION) == ALB_PUBLIC_SCHEME:
        return False
    return annotations.get(ALB_SCHEME_ANNOTATION) == ALB_INTERNAL_SCHEME or (
        annotations.get(GKE_INGRESS_CLASS_ANNOTATION) == GKE_INTERNAL_INGRESS_CLASS
    )


def _every_address(values, path: str) -> list[str]:
    return [f"{path} {cidr}" for cidr in items(get(values, path)) if cidr in EVERY_ADDRESS]


def exposures(values) -> list[tuple[bool, str, list[str]]]:
    """How the release is reachable from outside the cluster: (internal, what, client sources open to every address)
    for its Ingress, its Gateway and its Service."""
    found = []
    open_policy = _every_address(values, "networkPolicy.clientCidrs")
    if _helm_true(get(values, "gateway.enabled")):
        hostname = get(values, "gateway.hostname", "") or "(no hostname)"
        internal = get(values, "gateway.className") == GKE_INTERNAL_GATEWAY_CLASS
        found.append((internal, f"a Gateway for {hostname}", open_policy))
    if _helm_true(get(values, "ingress.enabled")):
        annotations = _annotations(values, "ingress.annotations")
        inbound = annotations.get(ALB_INBOUND_CIDRS_ANNOTATION)
        sources = [f"{ALB_INBOUND_CIDRS_ANNOTATION} {c}" for c in (inbound or "").split(",") if c.strip() in EVERY_ADDRESS]
        if inbound is None and annotations.get(ALB_SCHEME_ANNOTATION) == ALB_INTERNAL_SCHEME:
            sources.append(f"no {ALB_INBOUND_CIDRS_ANNOTATION} (the ALB then takes {ANYWHERE})")
        hostname = get(values, "ingress.hostname", "") or "(no hostname)"
        found.append((_internal_ingress(annotations), f"an Ingress for {hostname}", sources + open_policy))
    service_type = get(values, "service.type")
    if service_type == "LoadBalancer":
        annotations = _annotations(values, "service.annotations")
        internal = _internal_service(annotations)
        sources = _every_address(values, "service.loadBalancerSourceRanges")
        what = "an internal LoadBalancer Service" if internal else (
            "a LoadBalancer Service without the cloud's internal-load-balancer annotation values"
        )
        found.append((internal, what, sources + open_policy))
    elif service_type == "NodePort":
        found.append((False, "a NodePort Service (a port on every node's address)", open_policy))
    return found


def _restricted_apis(values) -> set[str]:
    return {str(api) for group in items(get(values, "restrictedApis.groups")) for api in items(get(group, "apis"))}


def _has_tls(values, what: str) -> bool:
    if what.startswith("a Gateway"):
        options = get(values, "gateway.tlsOptions", {})
        return bool(get(values, "gateway.tlsSecretName", "")) or (is_mapping(options) and any(options.values()))
    if not _helm_true(get(values, "ingress.enabled")):
        return False  # a bare LoadBalancer or NodePort Service forwards TCP: nothing terminates TLS for Triton
    if get(values, "ingress.tlsSecretName", ""):
        return True
    annotation = get(values, "ingress.certificateAnnotation", "")
    return bool(annotation) and bool(_annotations(values, "ingress.annotations").get(annotation))


def violations(values, open_internal_acknowledged: bool = False) -> list[str]:
    """What is wrong with a Triton release's access values (plain function: the policy reports each)."""
    found = []
    restricted = _restricted_apis(values)
    open_control = [api for api in MODEL_CONTROL_APIS if api not in restricted]
    if open_control:
        found.append(
            f"the model-control APIs {', '.join(open_control)} need no key: any client that reaches port 8000/8001 can "
            "load, unload or reconfigure models. Set access.restrictModelControl true (the default)."
        )
    unauthenticated = [api for api in INFERENCE_APIS if api not in restricted]
    for internal, what, open_sources in exposures(values):
        if not internal:
            if not _has_tls(values, what):
                found.append(
                    f"it is public through {what} without TLS. Use access.exposure public with access.tls "
                    "(an ACM certificate ARN on AWS; a pre-shared certificate, a Secret or a cert-manager issuer on GCP)."
                )
            if unauthenticated:
                found.append(
                    f"it is public through {what} and serves {', '.join(unauthenticated)} without authentication. "
                    "Set access.restrictInference true; clients then send the inference key."
                )
        elif open_sources and unauthenticated and not open_internal_acknowledged:
            found.append(
                f"it is reachable through {what} from every address ({'; '.join(open_sources)}) and serves "
                f"{', '.join(unauthenticated)} without authentication. Narrow access.clientCidrs to the client "
                "networks or set access.restrictInference true; or add the release to "
                "acknowledgeOpenInternalInference in this stack's policy config after review."
            )
    return found


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not is_triton_release(args.resource_type, args.props):
        return
    acknowledged = args.name in [str(n) for n in settings(args, SCHEMA)["acknowledgeOpenInternalInference"]]
    for problem in violations(get(args.props, "values", {}), acknowledged):
        report_violation(f"Triton release '{args.name}': {problem}", None)


POLICY = ResourceValidationPolicy(
    name="triton-release-require-secure-access",
    description="Triton releases lock model control behind a key; public endpoints have TLS and authentication.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    config_schema=SCHEMA,
    remediation_steps=(
        "Keep access.restrictModelControl true; for access.exposure public set access.tls and access.restrictInference "
        "true (tritonfleet refuses public without them); for internal exposure name the client networks in "
        "access.clientCidrs (never 0.0.0.0/0 with unauthenticated inference); see docs/access.md."
    ),
)
