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
        ("gcp", {"tls": {"secretName": "llm-tls"}, "loadBalancerGrpc": False}, "kubernetes.io/ingress.class", "gce"),
    ],
)
def test_an_internal_ingress_needs_no_inference_key_but_the_same_ingress_made_public_does(cloud, access, annotation, public_value):
    internal = {"exposure": "internal", "loadBalancer": "application", "hostname": "llm.internal.example.com", **access}
    values = chart_values(cloud, internal)
    assert rule.violations(values) == []
    values["ingress"]["annotations"][annotation] = public_value
    (found,) = rule.violations(values)
    assert "public through an Ingress for llm.internal.example.com" in found and "without authentication" in found


def test_an_internal_gke_gateway_needs_no_inference_key_but_an_external_one_does_and_tls():
    internal = {"exposure": "internal", "loadBalancer": "application", "hostname": "llm.internal.example.com"}
    values = chart_values("gcp", {**internal, "tls": {"preSharedCert": "llm-regional"}})
    assert values["gateway"]["enabled"] and rule.violations(values) == []
    values["gateway"]["className"] = "gke-l7-global-external-managed"
    (found,) = rule.violations(values)
    assert "public through a Gateway for llm.internal.example.com" in found and "without authentication" in found
    values["gateway"]["tlsOptions"] = {}
    assert any("a Gateway for llm.internal.example.com without TLS" in m for m in rule.violations(values))


INTERNAL_NLB = chart_values("aws", {"exposure": "internal", "clientCidrs": ["10.0.0.0/8"]})
INTERNAL_GKE = chart_values("gcp", {"exposure": "internal", "clientCidrs": ["10.0.0.0/8"]})
SCHEME, LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-scheme", "service.beta.kubernetes.io/aws-load-balancer-type"
GKE_TYPE = "networking.gke.io/load-balancer-type"


def _edited(values: dict, change) -> dict:
    values = copy.deepcopy(values)
    change(values)
    return values


@pytest.mark.parametrize(
    ("base", "change", "what"),
    [  # issue 37: any annotation once made a LoadBalancer internal, even internet-facing
        (INTERNAL_NLB, lambda v: v["service"]["annotations"].update({SCHEME: "internet-facing"}), "LoadBalancer Service"),
        (INTERNAL_NLB, lambda v: v["service"]["annotations"].pop(LB_TYPE), "LoadBalancer Service"),  # in-tree: public
        (INTERNAL_NLB, lambda v: v["service"].update(annotations={"team": "ml"}), "LoadBalancer Service"),
        (INTERNAL_GKE, lambda v: v["service"]["annotations"].update({GKE_TYPE: "External"}), "LoadBalancer Service"),
        (INTERNAL_GKE, lambda v: v["service"]["annotations"].update({GKE_TYPE: "internal"}), "LoadBalancer Service"),
        (INTERNAL_NLB, lambda v: v["service"].update(type="NodePort"), "a NodePort Service"),
        (  # issue 37: ingress.enabled "true" (text) renders the Ingress as true does
            chart_values("aws", {}),
            lambda v: v["ingress"].update(enabled="true", hostname="llm.example.com"),
            "an Ingress for llm.example.com",
        ),
    ],
    ids=["internet-facing", "in-tree-controller", "unrelated-annotation", "gke-external", "gke-lower-case", "node-port",
         "ingress-enabled-text"],
)
def test_exposure_is_read_from_what_the_controllers_act_on(base, change, what):
    values = _edited(base, change)
    found = rule.violations(values)
    assert any("it is public through" in m and what in m for m in found), found
    assert any("without authentication" in m for m in found), found


@pytest.mark.parametrize("base", [INTERNAL_NLB, INTERNAL_GKE], ids=["eks-nlb", "gke-ilb"])
def test_a_real_internal_load_balancer_is_internal(base):
    assert rule.violations(base) == []
    assert rule.violations(_edited(base, lambda v: v["ingress"].update(enabled=False))) == []


OPEN = [
    (INTERNAL_NLB, lambda v: v["service"].update(loadBalancerSourceRanges=["0.0.0.0/0"]), "loadBalancerSourceRanges 0.0.0.0/0"),
    (INTERNAL_GKE, lambda v: v["networkPolicy"].update(clientCidrs=["0.0.0.0/0"]), "networkPolicy.clientCidrs 0.0.0.0/0"),
    (
        chart_values("aws", {"exposure": "internal", "loadBalancer": "application", "hostname": "llm.example.com",
                             "tls": {"certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/x"},
                             "clientCidrs": ["10.0.0.0/8"]}),
        lambda v: v["ingress"]["annotations"].pop("alb.ingress.kubernetes.io/inbound-cidrs"),
        "no alb.ingress.kubernetes.io/inbound-cidrs",
    ),
]


@pytest.mark.parametrize(("base", "change", "where"), OPEN, ids=["nlb-source-ranges", "network-policy", "alb-no-inbound"])
def test_internal_exposure_open_to_every_address_needs_a_key_or_an_acknowledgement(base, change, where):
    values = _edited(base, change)
    (found,) = rule.violations(values)
    assert "from every address" in found and where in found and "without authentication" in found
    assert rule.violations(values, open_internal_acknowledged=True) == []
    keyed = _edited(values, lambda v: v["restrictedApis"]["groups"].append({"name": "i", "apis": ["inference"], "key": {}}))
    assert rule.violations(keyed) == []
    props = {"chart": CHART, "values": values}
    assert run_resource(rule.POLICY, RELEASE, props, {"acknowledgeOpenInternalInference": []}, name="tf-triton-llm")
    ack = {"acknowledgeOpenInternalInference": ["tf-triton-llm"]}
    assert run_resource(rule.POLICY, RELEASE, props, ack, name="tf-triton-llm") == []
