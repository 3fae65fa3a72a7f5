"""Call the pack's policies in this process, as a unit test would: the same policy objects, no gRPC.

What the engine and the SDK's servicer would do is done here by hand: apply the reconciled config and enforcement
levels, wrap properties in the SDK's unknown-checking proxy, catch not-applicable and unknown-value signals.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.policy import _NotApplicableError
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from tritonfleet.policycheck import pack_config
from tritonfleet.policycheck.verdicts import PREVIEW_PREFIX, Verdict, ordered
from tritonfleet.policycheck.wire import PlanResource, plan_resources


def load_policies(pack_dir: Path) -> list[Policy]:
    """The pack's policy list, imported from the repository that holds `pack_dir` (never its __main__)."""
    root = str(pack_dir.resolve().parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return list(importlib.import_module(f"{pack_dir.resolve().name}.registry").ALL_POLICIES)


def policy_meta(policies: list[Policy]) -> list[pack_config.PolicyMeta]:
    return [
        pack_config.PolicyMeta(
            name=p.name,
            enforcement=(p.enforcement_level or EnforcementLevel.ADVISORY).value,
            schema_properties=dict(p.config_schema.properties) if p.config_schema else {},
            required=tuple(p.config_schema.required or ()) if p.config_schema else (),
        )
        for p in policies
    ]


def _props(values: dict[str, Any]) -> Any:
    return unknown_checking_proxy(deserialize_properties(values))


def _options(resource: PlanResource) -> PolicyResourceOptions:
    dbr = resource.delete_before_replace or None
    return PolicyResourceOptions(
        resource.protect, list(resource.ignore_changes), dbr, [], PolicyCustomTimeouts(0, 0, 0), [], resource.parent or None
    )


def _provider(resource: PlanResource, by_urn: dict[str, PlanResource]) -> PolicyProviderResource | None:
    provider = by_urn.get(resource.provider_urn)
    return (
        None if provider is None else PolicyProviderResource(provider.type, _props(provider.props), provider.urn, provider.name)
    )


def _run(policy: Policy, args: Any, collect) -> str | None:
    """Run one validation; the unknown-value detail when a value was not known (the engine's advisory), else None."""
    try:
        result = policy.validate(args, collect)
        if inspect.isawaitable(result):
            asyncio.run(result)
    except UnknownValueError as error:
        return error.message
    except _NotApplicableError:
        pass
    return None


def run_direct(
    pack_dir: Path, plan: dict[str, Any], config: dict[str, Any], config_source: str = "policy config"
) -> list[Verdict]:
    policies = load_policies(pack_dir)
    configured = pack_config.reconcile(policy_meta(policies), config, config_source)
    resources = plan_resources(plan)
    by_urn = {r.urn: r for r in resources}
    verdicts: list[Verdict] = []

    def reporter(policy: Policy, level: str, default_urn: str):
        def report(message: str, urn: str | None = None) -> None:
            severity = policy.severity.value if policy.severity else ""
            verdicts.append(Verdict(policy.name, level, severity, urn or default_urn, message or policy.description))

        return report

    stack_resources = [
        PolicyResource(r.type, _props(r.props), r.urn, r.name, _options(r), _provider(r, by_urn), None, [], {}) for r in resources
    ]
    linked = {r.urn: r for r in stack_resources}
    for plan_resource, resource in zip(resources, stack_resources, strict=True):
        resource.parent = linked.get(plan_resource.parent)
        resource.dependencies.extend(linked[d] for d in plan_resource.dependencies if d in linked)

    for policy in policies:
        entry = configured[policy.name]
        if entry.enforcement == "disabled":
            continue
        level = "mandatory" if entry.enforcement == "remediate" else entry.enforcement
        config_copy = dict(entry.properties) or None
        if isinstance(policy, ResourceValidationPolicy):
            for r in resources:
                args = ResourceValidationArgs(
                    r.type, _props(r.props), r.urn, r.name, _options(r), _provider(r, by_urn), config_copy
                )
                unknown = _run(policy, args, reporter(policy, level, r.urn))
                if unknown is not None:
                    verdicts.append(Verdict(policy.name, "advisory", "", r.urn, PREVIEW_PREFIX + unknown))
        elif isinstance(policy, StackValidationPolicy):
            unknown = _run(policy, StackValidationArgs(stack_resources, config_copy), reporter(policy, level, ""))
            if unknown is not None:
                verdicts.append(Verdict(policy.name, "advisory", "", "", PREVIEW_PREFIX + unknown))
    return ordered(verdicts)
