"""Shared test material for the policy pack: compliant plans, one-field mutations, and runners for single policies."""

from __future__ import annotations

import copy
import inspect
import json
from pathlib import Path
from typing import Any

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

from components.aws.bucket import tls_only_policy  # noqa: F401 - re-exported for the engine tests

ROOT = Path(__file__).resolve().parents[2]
PACK_DIR = ROOT / "policies"


def stack_policy_config(stack: str) -> dict[str, Any]:
    return json.loads((PACK_DIR / "config" / f"{stack}.json").read_text())


def options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)


def run_resource(
    policy,
    resource_type: str,
    props: dict,
    config: dict | None = None,
    *,
    name: str = "r",
    protect: bool = False,
    provider: PolicyProviderResource | None = None,
) -> list[str]:
    """One resource policy on one resource, props wrapped like the engine's; the messages it reports."""
    messages: list[str] = []
    args = ResourceValidationArgs(
        resource_type,
        unknown_checking_proxy(copy.deepcopy(props)),
        f"urn:pulumi:t::p::{resource_type}::{name}",
        name,
        options(protect),
        provider,
        config,
    )
    result = policy.validate(args, lambda message, urn=None: messages.append(message))
    assert not inspect.isawaitable(result)
    return messages


def stack_resource(
    resource_type: str, props: dict, name: str, dependencies: list[PolicyResource] | None = None
) -> PolicyResource:
    return PolicyResource(
        resource_type,
        unknown_checking_proxy(copy.deepcopy(props)),
        f"urn:pulumi:t::p::{resource_type}::{name}",
        name,
        options(),
        None,
        None,
        list(dependencies or []),
        {},
    )


def run_stack(policy, resources: list[PolicyResource], config: dict | None = None) -> list[tuple[str, str | None]]:
    seen: list[tuple[str, str | None]] = []
    policy.validate(StackValidationArgs(resources, config), lambda message, urn=None: seen.append((message, urn)))
    return seen


# ---- plans: the real program's offline plans, made compliant where other issues still owe resources ----


def _real_plan(stack: str) -> str:
    from tests.plan_cache import stock_plan

    return json.dumps(stock_plan(stack))


def find(plan: dict, resource_type: str, name_part: str = "") -> dict:
    matches = [r for r in plan["resources"] if r["type"] == resource_type and name_part in r["name"]]
    assert matches, f"no {resource_type} named like {name_part!r}"
    return matches[0]


def add(
    plan: dict,
    resource_type: str,
    name: str,
    inputs: dict,
    *,
    depends_on: list[str] = (),
    provider: str = "",
    protect: bool = False,
) -> dict:
    urn = f"urn:pulumi:{plan['stack']}::{plan['project']}::{resource_type}::{name}"
    resource = {
        "urn": urn,
        "type": resource_type,
        "name": name,
        "custom": True,
        "parent": "",
        "provider": provider,
        "inputs": inputs,
        "protect": protect,
        "ignoreChanges": [],
        "dependsOn": sorted(depends_on),
        "retainOnDelete": False,
        "deleteBeforeReplace": False,
        "version": "",
    }
    plan["resources"].append(resource)
    return resource


def add_gpu_operator(plan: dict, values: dict, version: str = "v26.7.0") -> dict:
    """The plan's GPU Operator release, with these values in place of its own (added when the plan has none)."""
    existing = [
        r
        for r in plan["resources"]
        if r["type"] == "kubernetes:helm.sh/v3:Release" and r["inputs"].get("chart") == "gpu-operator"
    ]
    for release in existing:
        release["inputs"].update(values=values, version=version)
    if existing:
        return existing[0]
    k8s = find(plan, "pulumi:providers:kubernetes")
    return add(
        plan,
        "kubernetes:helm.sh/v3:Release",
        "tf-gpu-operator",
        {
            "chart": "gpu-operator",
            "version": version,
            "namespace": "gpu-operator",
            "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
            "values": values,
        },
        provider=k8s["urn"],
    )


def compliant_plan(stack: str) -> dict:
    """A plan of the shipped stack that passes every policy (no mandatory verdict)."""
    return json.loads(_real_plan(stack))
