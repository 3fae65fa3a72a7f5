"""A deployment's `access` rules: an Application load balancer (public, or internal with loadBalancer application)
needs a hostname and TLS, public both keys too, and carries gRPC only with a TLS source the cloud's takes then; other
modes take none; a load balancer kind that fits the exposure;
one TLS source this cloud supports; client selectors that select someone; valid CIDRs."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from tritonfleet.core.config.problems import MISSING, Problem, set_command
from tritonfleet.core.config.rules.context import RuleContext, validate_section
from tritonfleet.core.config.schema import DNS_LABEL_PATTERN, Access, is_label_key
from tritonfleet.core.conventions import LABEL_VALUE_PATTERN
from tritonfleet.core.exposure import ANYWHERE, APPLICATION, CLUSTER, INTERNAL, INTERNAL_APPLICATION, NETWORK, PUBLIC

# TLS sources an internal Application load balancer cannot use: cert-manager's ingress-shim answers ACME HTTP-01
# challenges through the Ingress, which an internal load balancer does not take from the internet.
PUBLIC_ONLY_TLS_SOURCES = ("certManagerIssuer",)


def check_access(ctx: RuleContext, raw_access: Any, namespace: str, at: str) -> None:
    access = validate_section(Access, raw_access)
    if access is None:
        return
    # The keys the user wrote: one the schema already refused is not reported again as missing.
    given = set(raw_access) if isinstance(raw_access, dict) else set()
    tls_sources, tls_examples = _tls_sources(ctx)
    _check_load_balancer(ctx, access, at)
    if access.mode == INTERNAL_APPLICATION:
        tls_sources = tuple(s for s in tls_sources if s not in PUBLIC_ONLY_TLS_SOURCES)
    if access.mode in (PUBLIC, INTERNAL_APPLICATION):
        _check_application(ctx, access, given, tls_sources, tls_examples, at)
    else:
        _check_no_ingress(ctx, access, at)
    if access.mode == PUBLIC:
        _check_public(ctx, access, at)
    _check_tls(ctx, access, tls_sources, at)
    _check_client_namespaces(ctx, access, namespace, at)
    _check_client_pod_labels(ctx, access, at)
    _check_client_cidrs(ctx, access, at)


def _tls_sources(ctx: RuleContext) -> tuple[tuple[str, ...], dict[str, str]]:
    """The TLS sources this cloud supports and their examples; every cloud's when the cloud is unknown."""
    from tritonfleet.core.cloud import cloud, cloud_names

    clouds = [cloud(c).rules for c in cloud_names()] if ctx.rules is None else [ctx.rules]
    sources = tuple(s for rules in clouds for s in rules.TLS_SOURCES)
    examples = {source: example for rules in clouds for source, example in rules.TLS_EXAMPLES.items()}
    return sources, examples


def _check_load_balancer(ctx: RuleContext, access: Access, at: str) -> None:
    """loadBalancer: only with a cloud load balancer; public is always an Application load balancer."""
    if access.load_balancer is None:
        return
    key = f"{at}.loadBalancer"
    if access.exposure == CLUSTER:
        allowed = "only with exposure internal or public (exposure cluster has no cloud load balancer); remove it"
        ctx.remove(key, access.load_balancer, allowed)
    elif access.exposure == PUBLIC and access.load_balancer == NETWORK:
        allowed = (
            f"{APPLICATION} (or unset) when exposure is public: a public endpoint is an Application load balancer with "
            f"TLS; for a network load balancer use exposure {INTERNAL}"
        )
        ctx.add(key, access.load_balancer, allowed, APPLICATION)


def _application_endpoint(access: Access) -> str:
    return "the public endpoint" if access.mode == PUBLIC else "the internal Application load balancer"


def _required_when(access: Access) -> str:
    return "required when exposure is public" if access.mode == PUBLIC else "required with loadBalancer application"


def _check_application(
    ctx: RuleContext, access: Access, given: set[str], tls_sources: tuple[str, ...], tls_examples: dict[str, str], at: str
) -> None:
    """An Application load balancer (public, internal-application) ends TLS for one hostname; it limits client networks
    only where this cloud's Ingress can."""
    endpoint, required = _application_endpoint(access), _required_when(access)
    if access.hostname is None and "hostname" not in given:
        name = "llm.example.com" if access.mode == PUBLIC else "llm.internal.example.com"
        ctx.add(f"{at}.hostname", MISSING, f"the DNS name of {endpoint} ({required})", name)
    if (access.tls is None and "tls" not in given) or (access.tls is not None and not access.tls.sources):
        source = tls_sources[-1]
        ctx.add(
            f"{at}.tls.{source}",
            MISSING,
            f"a certificate for {endpoint} ({required}): one of " + ", ".join(tls_sources),
            tls_examples.get(source, "<name>"),
        )
    filters = ctx.rules.INGRESS_CLIENT_CIDRS if ctx.rules is not None else None
    if access.client_cidrs and filters == "":
        alternative = "loadBalancer network" if access.mode == INTERNAL_APPLICATION else "exposure internal"
        allowed = (
            f"unset on {ctx.cloud} with an Application load balancer: it limits client networks only through "
            f"a Cloud Armor or firewall policy, which tritonfleet does not create (use {alternative} to limit clients "
            "by CIDR)"
        )
        ctx.remove(f"{at}.clientCidrs", access.client_cidrs, allowed)
    if access.mode == INTERNAL_APPLICATION and not access.client_cidrs and filters:
        _require_client_cidrs(ctx, at, f"{filters}; without them every network routed to the VPC gets through")
    refusals = ctx.rules.APPLICATION_LB_GRPC_TLS_REFUSALS if ctx.rules is not None else {}
    refused = [s for s in (access.tls.sources if access.tls else ()) if s in refusals and s in tls_sources]
    if refused and access.load_balancer_grpc is not False:
        others = " or ".join(s for s in tls_sources if s not in refusals)
        allowed = (
            f"false with tls.{refused[0]} on {ctx.cloud} ({refusals[refused[0]]}): {endpoint} then carries REST (/v2) "
            f"only. For gRPC through it, use tls {others} instead (docs/access.md)"
        )
        shown = MISSING if access.load_balancer_grpc is None else access.load_balancer_grpc
        ctx.add(f"{at}.loadBalancerGrpc", shown, allowed, False)


def _require_client_cidrs(ctx: RuleContext, at: str, why: str) -> None:
    allowed = f"the networks the internal load balancer serves (required when exposure is internal: {why})"
    ctx.problems.append(Problem(f"{at}.clientCidrs", MISSING, allowed, set_command(f"{at}.clientCidrs[0]", "10.0.0.0/8", ctx.stack)))


def _check_public(ctx: RuleContext, access: Access, at: str) -> None:
    if not access.restrict_inference:
        allowed = "true when exposure is public: clients must send the inference key (authentication)"
        ctx.add(f"{at}.restrictInference", False, allowed, True)
    if not access.restrict_model_control:
        allowed = "true when exposure is public: anyone on the internet could load and unload models"
        ctx.add(f"{at}.restrictModelControl", False, allowed, True)


def _check_no_ingress(ctx: RuleContext, access: Access, at: str) -> None:
    """cluster and internal (network load balancer): no hostname, no TLS; internal names its client networks."""
    for key, value in (("hostname", access.hostname), ("tls", access.tls), ("loadBalancerGrpc", access.load_balancer_grpc)):
        if value is not None:
            shown = value if isinstance(value, (str, bool)) else value.model_dump(by_alias=True, exclude_none=True)
            allowed = (
                f"only with an Application load balancer: exposure public, or internal with loadBalancer application "
                f"(exposure is {access.exposure}"
                + (", loadBalancer network" if access.exposure == INTERNAL else "")
                + "); remove it"
            )
            ctx.remove(f"{at}.{key}", shown, allowed)
    if access.client_cidrs and access.exposure == CLUSTER:
        ctx.remove(
            f"{at}.clientCidrs",
            access.client_cidrs,
            "only with exposure internal or public (in-cluster clients are selected by namespace and labels)",
        )
    if access.mode == INTERNAL and not access.client_cidrs:
        _require_client_cidrs(ctx, at, "its source ranges, or nobody outside the cluster gets through")


def _check_tls(ctx: RuleContext, access: Access, tls_sources: tuple[str, ...], at: str) -> None:
    """At most one certificate source, and one this cloud supports."""
    if access.tls is None:
        return
    sources = access.tls.sources
    if len(sources) > 1:
        ctx.add(
            f"{at}.tls",
            access.tls.model_dump(by_alias=True, exclude_none=True),
            "exactly one certificate source, not " + " and ".join(sources),
            "<one source>",
        )
    for source in sources:
        if source not in tls_sources:
            allowed = f"a certificate source {ctx.cloud} supports: " + ", ".join(tls_sources)
            if source in PUBLIC_ONLY_TLS_SOURCES and access.mode == INTERNAL_APPLICATION:
                allowed = (
                    "not with an internal load balancer: cert-manager's HTTP-01 challenge needs the hostname reachable "
                    "from the internet. Use " + " or ".join(tls_sources)
                )
                if "secretName" in tls_sources:
                    allowed += " (secretName: a Secret that cert-manager can fill through a DNS-01 Certificate)"
            ctx.remove(f"{at}.tls.{source}", access.tls.value_of(source), allowed)


def _check_client_namespaces(ctx: RuleContext, access: Access, namespace: str, at: str) -> None:
    if access.client_namespaces is None:
        return
    if not access.client_namespaces:
        ctx.add(
            f"{at}.clientNamespaces",
            [],
            "at least one namespace: an empty list selects no client (unset it for the default, the pods of "
            f"'{namespace}' labelled as this deployment's clients)",
            [namespace],
        )
    for i, name in enumerate(access.client_namespaces):
        if not re.match(DNS_LABEL_PATTERN, name):
            ctx.add(f"{at}.clientNamespaces[{i}]", name, "a Kubernetes namespace name (lower-case DNS label)", namespace)


def _check_client_pod_labels(ctx: RuleContext, access: Access, at: str) -> None:
    for key, value in access.client_pod_labels.items():
        if not is_label_key(key):
            ctx.add(
                f"{at}.clientPodLabels",
                {key: value},
                "label keys like app or example.com/app: a key this malformed selects no pod",
                {"app": "frontend"},
            )
        elif not isinstance(value, str) or not re.match(LABEL_VALUE_PATTERN, value):
            ctx.add(
                f"{at}.clientPodLabels.{key}",
                value,
                "a label value (at most 63 letters, digits, '-', '_' or '.'): this one selects no pod",
                "frontend",
            )


def _check_client_cidrs(ctx: RuleContext, access: Access, at: str) -> None:
    for i, cidr in enumerate(access.client_cidrs):
        try:
            ipaddress.ip_network(cidr, strict=True)
        except ValueError as exc:
            ctx.add(f"{at}.clientCidrs[{i}]", cidr, f"a CIDR such as 10.20.0.0/16 ({exc})", "10.0.0.0/16")
    _check_open_internal_inference(ctx, access, at)


def _check_open_internal_inference(ctx: RuleContext, access: Access, at: str) -> None:
    """Prod: an internal endpoint open to every address serves inference only with a key, unless acknowledged."""
    if ctx.data.get("environment") != "prod" or access.exposure != INTERNAL or access.restrict_inference:
        return
    if access.acknowledge_open_internal_inference or ANYWHERE not in access.client_cidrs:
        return
    allowed = (
        f"true when clientCidrs holds {ANYWHERE} in prod: every network routed to the VPC reaches the endpoint, so "
        "clients must send the inference key (or narrow clientCidrs, or set acknowledgeOpenInternalInference true "
        "and name the release in the policy config)"
    )
    ctx.add(f"{at}.restrictInference", False, allowed, True)
