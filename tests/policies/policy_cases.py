"""Shared test material for the policy pack: compliant plans, one-field mutations, and runners for single policies."""

from __future__ import annotations

import copy
import inspect
import json
from functools import cache
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


@cache
def _real_plan(stack: str) -> str:
    from tritonfleet.plan.document import build_plan

    return json.dumps(build_plan(ROOT, stack))


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


def tls_only_policy(bucket: str) -> str:
    arn = f"arn:aws:s3:::{bucket}"
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyInsecureTransport",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [arn, f"{arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )


def secure_s3(plan: dict) -> None:
    """The bucket settings issue 5 adds, as the program will declare them (v7 resources, bucket by id)."""
    for bucket in [r for r in plan["resources"] if r["type"] == "aws:s3/bucket:Bucket"]:
        name, deps, provider = bucket["inputs"]["bucket"], [bucket["urn"]], bucket["provider"]
        ref = f"{bucket['name']}-id"  # what the mock gives as the bucket's id: matched through the dependency
        add(
            plan,
            "aws:s3/bucketVersioning:BucketVersioning",
            f"{bucket['name']}-versioning",
            {"bucket": ref, "versioningConfiguration": {"status": "Enabled"}},
            depends_on=deps,
            provider=provider,
        )
        add(
            plan,
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            f"{bucket['name']}-sse",
            {"bucket": ref, "rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]},
            depends_on=deps,
            provider=provider,
        )
        add(
            plan,
            "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
            f"{bucket['name']}-public-access",
            {
                "bucket": ref,
                "blockPublicAcls": True,
                "blockPublicPolicy": True,
                "ignorePublicAcls": True,
                "restrictPublicBuckets": True,
            },
            depends_on=deps,
            provider=provider,
        )
        add(
            plan,
            "aws:s3/bucketPolicy:BucketPolicy",
            f"{bucket['name']}-tls-only",
            {"bucket": ref, "policy": tls_only_policy(name)},
            depends_on=deps,
            provider=provider,
        )


def gke_total_bounds(plan: dict) -> None:
    """Node pools as issue 4 must declare them: total autoscaling bounds and billing labels (resourceLabels)."""
    tags = find(plan, "gcp:container/cluster:Cluster")["inputs"]["resourceLabels"]
    for pool in [r for r in plan["resources"] if r["type"] == "gcp:container/nodePool:NodePool"]:
        bounds = pool["inputs"]["autoscaling"]
        pool["inputs"]["autoscaling"] = {"totalMinNodeCount": bounds["minNodeCount"], "totalMaxNodeCount": bounds["maxNodeCount"]}
        pool["inputs"]["nodeConfig"]["resourceLabels"] = dict(tags)


def add_gpu_operator(plan: dict, values: dict, version: str = "v26.7.0") -> dict:
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
    plan = json.loads(_real_plan(stack))
    if plan["cloud"] == "aws":
        secure_s3(plan)
        add_gpu_operator(plan, {"driver": {"enabled": False}, "toolkit": {"enabled": False}})
    else:
        gke_total_bounds(plan)
    return plan
