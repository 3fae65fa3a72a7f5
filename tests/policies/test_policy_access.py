"""triton-release-require-secure-access: the plain check on chart values, and its levels per environment (mandatory in
prod, advisory in dev and staging) through the real pack."""

from __future__ import annotations

import copy

import pytest
from policy_cases import PACK_DIR, compliant_plan, find, run_resource, stack_policy_config

from policies.rules import triton_release_require_secure_access as rule
from tests.access_helpers import ACCESS_CASES, chart_values
from tritonfleet.policycheck.direct import run_direct

RELEASE = "kubernetes:helm.sh/v3:Release"
CHART = "charts/triton-inference-server"


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=[c[0] for c in ACCESS_CASES])
def test_values_tritonfleet_builds_pass_unless_model_control_is_open(label, cloud, access):
    found = rule.violations(chart_values(cloud, access))
    if access.get("restrictModelControl", True):
        assert found == []
    else:
        assert len(found) == 1 and "model-repository, model-config, shared-memory, trace, logging" in found[0]


PUBLIC = chart_values("aws", {"exposure": "public", "hostname": "a.example.com", "tls": {"certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/x"}, "restrictInference": True})


def _without(values: dict, path: str) -> dict:
    values = copy.deepcopy(values)
    *parents, last = path.split(".")
    node = values
    for part in parents:
        node = node[part]
    del node[last]
    return values


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        (lambda v: v["ingress"].update(certificateAnnotation=""), ["without TLS"]),
        (lambda v: v["ingress"]["annotations"].pop("alb.ingress.kubernetes.io/certificate-arn"), ["without TLS"]),
        (lambda v: v["restrictedApis"].update(groups=v["restrictedApis"]["groups"][:1]), ["without authentication"]),
        (lambda v: v["restrictedApis"].update(groups=[]), ["model-control APIs", "without authentication"]),
        (lambda v: v["restrictedApis"]["groups"][0].update(apis=["model-repository"]), ["model-config, shared-memory, trace, logging"]),
    ],
)
def test_public_release_without_tls_or_keys_is_caught(change, fragments):
    values = copy.deepcopy(PUBLIC)
    change(values)
    found = rule.violations(values)
    assert len(found) == len(fragments) and all(f in m for f, m in zip(fragments, found, strict=True)), found


def test_the_policy_reads_only_triton_releases():
    props = {"chart": CHART, "values": {"restrictedApis": {"groups": []}}}
    assert run_resource(rule.POLICY, RELEASE, props, name="tf-triton-llm")[0].startswith("Triton release 'tf-triton-llm':")
    assert run_resource(rule.POLICY, RELEASE, {**props, "chart": "gpu-operator"}) == []


@pytest.mark.parametrize(("stack", "blocking"), [("prod", True), ("gcp-prod", True), ("dev", False)])
def test_mandatory_in_prod_advisory_elsewhere(stack, blocking):
    plan = compliant_plan(stack)
    release = next(r for r in plan["resources"] if r["type"] == RELEASE and "triton" in r["name"])
    release["inputs"]["values"]["restrictedApis"]["groups"] = []
    verdicts = [v for v in run_direct(PACK_DIR, plan, stack_policy_config(stack)) if v.policy == rule.POLICY.name]
    assert verdicts and all(v.blocking is blocking for v in verdicts)
    assert find(plan, RELEASE, "triton")  # the plan really holds the release the verdict is about


@pytest.mark.parametrize(
    ("cloud", "access", "annotation", "public_value"),
    [
        (
            "aws",
            {"tls": {"certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/x"}, "clientCidrs": ["10.0.0.0/8"]},
            "alb.ingress.kubernetes.io/scheme",
            "internet-facing",
        ),
        ("gcp", {"tls": {"secretName": "llm-tls"}}, "kubernetes.io/ingress.class", "gce"),
    ],
)
def test_an_internal_ingress_needs_no_inference_key_but_the_same_ingress_made_public_does(cloud, access, annotation, public_value):
    internal = {"exposure": "internal", "loadBalancer": "application", "hostname": "llm.internal.example.com", **access}
    values = chart_values(cloud, internal)
    assert rule.violations(values) == []
    values["ingress"]["annotations"][annotation] = public_value
    (found,) = rule.violations(values)
    assert "public through an Ingress for llm.internal.example.com" in found and "without authentication" in found
