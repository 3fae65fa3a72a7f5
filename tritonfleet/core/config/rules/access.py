"""A deployment's `access` rules: public needs a hostname, TLS and both keys; other exposures take none of those;
one TLS source this cloud supports; client selectors that select someone; valid CIDRs."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from tritonfleet.core.config.problems import MISSING, Problem, set_command
from tritonfleet.core.config.rules.context import RuleContext, validate_section
from tritonfleet.core.config.schema import DNS_LABEL_PATTERN, LABEL_KEY_PATTERN, Access
from tritonfleet.core.conventions import LABEL_VALUE_PATTERN


def check_access(ctx: RuleContext, raw_access: Any, namespace: str, at: str) -> None:
    access = validate_section(Access, raw_access)
    if access is None:
        return
    # The keys the user wrote: one the schema already refused is not reported again as missing.
    given = set(raw_access) if isinstance(raw_access, dict) else set()
    tls_sources, tls_examples = _tls_sources(ctx)
    if access.exposure == "public":
        _check_public(ctx, access, given, tls_sources, tls_examples, at)
    else:
        _check_not_public(ctx, access, at)
    _check_tls(ctx, access, tls_sources, at)
    _check_client_namespaces(ctx, access, namespace, at)
    _check_client_pod_labels(ctx, access, at)
    _check_client_cidrs(ctx, access, at)


def _tls_sources(ctx: RuleContext) -> tuple[tuple[str, ...], dict[str, str]]:
    """The TLS sources this cloud supports and their examples; every cloud's when the cloud is unknown."""
    from tritonfleet.clouds import CLOUDS, cloud_rules

    clouds = [cloud_rules(c) for c in CLOUDS] if ctx.rules is None else [ctx.rules]
    sources = tuple(s for rules in clouds for s in rules.TLS_SOURCES)
    examples = {source: example for rules in clouds for source, example in rules.TLS_EXAMPLES.items()}
    return sources, examples


def _check_public(
    ctx: RuleContext, access: Access, given: set[str], tls_sources: tuple[str, ...], tls_examples: dict[str, str], at: str
) -> None:
    if access.hostname is None and "hostname" not in given:
        ctx.add(f"{at}.hostname", MISSING, "the DNS name of the public endpoint (required when exposure is public)", "llm.example.com")
    if (access.tls is None and "tls" not in given) or (access.tls is not None and not access.tls.sources):
        source = tls_sources[-1]
        ctx.add(
            f"{at}.tls.{source}",
            MISSING,
            "a certificate for the public endpoint (required when exposure is public): one of " + ", ".join(tls_sources),
            tls_examples.get(source, "<name>"),
        )
    if not access.restrict_inference:
        allowed = "true when exposure is public: clients must send the inference key (authentication)"
        ctx.add(f"{at}.restrictInference", False, allowed, True)
    if not access.restrict_model_control:
        allowed = "true when exposure is public: anyone on the internet could load and unload models"
        ctx.add(f"{at}.restrictModelControl", False, allowed, True)
    if access.client_cidrs and ctx.rules is not None and not ctx.rules.PUBLIC_CLIENT_CIDRS:
        allowed = (
            f"unset on {ctx.cloud} with exposure public: its Ingress load balancer filters client networks only through "
            "a Cloud Armor policy, which tritonfleet does not create (use exposure internal for private networks)"
        )
        ctx.remove(f"{at}.clientCidrs", access.client_cidrs, allowed)


def _check_not_public(ctx: RuleContext, access: Access, at: str) -> None:
    for key, value in (("hostname", access.hostname), ("tls", access.tls)):
        if value is not None:
            shown = value if isinstance(value, str) else value.model_dump(by_alias=True, exclude_none=True)
            ctx.remove(f"{at}.{key}", shown, f"only with exposure public (exposure is {access.exposure}); remove it")
    if access.client_cidrs and access.exposure == "cluster":
        ctx.remove(
            f"{at}.clientCidrs",
            access.client_cidrs,
            "only with exposure internal or public (in-cluster clients are selected by namespace and labels)",
        )
    if access.exposure == "internal" and not access.client_cidrs:
        allowed = (
            "the networks the internal load balancer serves (its source ranges; required when exposure is internal, "
            "or nobody outside the cluster gets through)"
        )
        ctx.problems.append(Problem(f"{at}.clientCidrs", MISSING, allowed, set_command(f"{at}.clientCidrs[0]", "10.0.0.0/8", ctx.stack)))


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
        if not re.match(LABEL_KEY_PATTERN, key) or len(key) > 317:
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
