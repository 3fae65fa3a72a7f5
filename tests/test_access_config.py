"""Access config: good configs load; bad ones (public without TLS or keys, unknown modes, selectors that select
nothing, TLS sources the cloud cannot use) fail with the key, the bad value and the fix command."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, engine_config, one_line, run_cli

from tests.access_helpers import ACCESS_CASES, ACM_ARN
from tritonfleet.core.config import ConfigError, load_stack_config


def _with_access(stack: str, access: dict, cloud_stack: str | None = None) -> dict[str, str]:
    raw = engine_config(cloud_stack or stack)
    import json

    deployments = json.loads(raw["tritonfleet:tritonDeployments"])
    deployments[0]["access"] = access
    return {**raw, "tritonfleet:tritonDeployments": json.dumps(deployments)}


def _stack_for(cloud: str) -> str:
    return "prod" if cloud == "aws" else "gcp-prod"


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=[c[0] for c in ACCESS_CASES])
def test_good_access_configs_load(label, cloud, access):
    stack = _stack_for(cloud)
    config = load_stack_config(_with_access(stack, access), stack)
    assert config.triton_deployments[0].access.exposure == access.get("exposure", "cluster")


def test_default_is_private_with_locked_model_control(stack_config):
    access = stack_config("dev").triton_deployments[0].access
    assert (access.exposure, access.restrict_model_control, access.restrict_inference) == ("cluster", True, False)
    assert access.client_namespaces is None and access.tls is None


def _problems(stack: str, access: dict) -> dict[str, tuple]:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(_with_access(stack, access), stack)
    return {p.key.split("access.", 1)[1]: (p.value, p.allowed, p.fix) for p in caught.value.problems if "access" in p.key}


PUBLIC = {"exposure": "public", "hostname": "llm.example.com", "restrictInference": True}
INTERNAL_APP = {"exposure": "internal", "loadBalancer": "application"}
# (case, stack, access, key below access, text in allowed or fix)
BAD_ACCESS = [
    ("unknown-exposure", "prod", {"exposure": "internet"}, "exposure", "cluster (ClusterIP only), internal"),
    ("public-without-tls", "prod", {**PUBLIC}, "tls.certificateArn", "required when exposure is public"),
    ("public-without-tls-gcp", "gcp-prod", {**PUBLIC}, "tls.certManagerIssuer", "preSharedCert, secretName, certManagerIssuer"),
    ("public-without-auth", "prod", {**PUBLIC, "restrictInference": False, "tls": {"certificateArn": ACM_ARN}}, "restrictInference", "authentication"),
    ("public-open-model-control", "prod", {**PUBLIC, "tls": {"certificateArn": ACM_ARN}, "restrictModelControl": False}, "restrictModelControl", "load and unload"),
    ("public-without-hostname", "prod", {"exposure": "public", "tls": {"certificateArn": ACM_ARN}, "restrictInference": True}, "hostname", "DNS name"),
    ("bad-hostname", "prod", {**PUBLIC, "hostname": "LLM_Example", "tls": {"certificateArn": ACM_ARN}}, "hostname", "lower-case"),
    ("wildcard-hostname", "prod", {**PUBLIC, "hostname": "*.example.com", "tls": {"certificateArn": ACM_ARN}}, "hostname", "lower-case"),
    ("bad-acm-arn", "prod", {**PUBLIC, "tls": {"certificateArn": "arn:aws:iam::1:cert"}}, "tls.certificateArn", "ACM certificate ARN"),
    ("cert-manager-on-aws", "prod", {**PUBLIC, "tls": {"certManagerIssuer": "letsencrypt"}}, "tls.certManagerIssuer", "aws supports: certificateArn"),
    ("acm-on-gcp", "gcp-prod", {**PUBLIC, "tls": {"certificateArn": ACM_ARN}}, "tls.certificateArn", "gcp supports"),
    ("two-tls-sources", "gcp-prod", {**PUBLIC, "tls": {"secretName": "a", "preSharedCert": "b"}}, "tls", "exactly one certificate source"),
    ("tls-without-public", "prod", {"exposure": "internal", "tls": {"certificateArn": ACM_ARN}}, "tls", "only with an Application load balancer"),
    ("hostname-without-public", "prod", {"hostname": "llm.example.com"}, "hostname", "only with an Application load balancer"),
    ("public-network", "prod", {**PUBLIC, "tls": {"certificateArn": ACM_ARN}, "loadBalancer": "network"}, "loadBalancer", "application (or unset) when exposure is public"),
    ("load-balancer-in-cluster-mode", "prod", {"loadBalancer": "application"}, "loadBalancer", "only with exposure internal or public"),
    ("unknown-load-balancer", "prod", {"exposure": "internal", "clientCidrs": ["10.0.0.0/8"], "loadBalancer": "alb"}, "loadBalancer", "network (L4"),
    ("internal-application-without-hostname", "prod", {**INTERNAL_APP, "tls": {"certificateArn": ACM_ARN}, "clientCidrs": ["10.0.0.0/8"]}, "hostname", "required with loadBalancer application"),
    ("internal-application-without-tls", "gcp-prod", {**INTERNAL_APP, "hostname": "llm.internal.example.com"}, "tls.secretName", "preSharedCert, secretName"),
    ("internal-application-cert-manager", "gcp-prod", {**INTERNAL_APP, "hostname": "llm.internal.example.com", "tls": {"certManagerIssuer": "letsencrypt"}}, "tls.certManagerIssuer", "HTTP-01"),
    ("internal-application-without-cidrs-aws", "prod", {**INTERNAL_APP, "hostname": "llm.internal.example.com", "tls": {"certificateArn": ACM_ARN}}, "clientCidrs", "inbound-cidrs"),
    ("internal-application-cidrs-gcp", "gcp-prod", {**INTERNAL_APP, "hostname": "llm.internal.example.com", "tls": {"secretName": "llm-tls"}, "clientCidrs": ["10.0.0.0/8"]}, "clientCidrs", "use loadBalancer network"),
    ("empty-client-namespaces", "prod", {"clientNamespaces": []}, "clientNamespaces", "selects no client"),
    ("bad-client-namespace", "prod", {"clientNamespaces": ["Apps"]}, "clientNamespaces[0]", "namespace name"),
    ("bad-label-value", "prod", {"clientPodLabels": {"app": "front end"}}, "clientPodLabels.app", "selects no pod"),
    ("bad-label-key", "prod", {"clientPodLabels": {"-app": "x"}}, "clientPodLabels", "selects no pod"),
    ("bad-cidr", "prod", {"exposure": "internal", "clientCidrs": ["10.0.0.1/8"]}, "clientCidrs[0]", "CIDR"),
    ("cidrs-in-cluster-mode", "prod", {"clientCidrs": ["10.0.0.0/8"]}, "clientCidrs", "only with exposure internal or public"),
    ("unknown-access-key", "prod", {"exposed": True}, "exposed", "pulumi config rm"),
    # gRPC through GKE's load balancer takes a Gateway, whose certificate cert-manager does not issue here: REST only
    # (the Ingress) or another certificate source
    ("grpc-with-cert-manager-on-gcp", "gcp-prod", {**PUBLIC, "tls": {"certManagerIssuer": "letsencrypt"}}, "loadBalancerGrpc", "GKE Gateway"),
    ("grpc-true-with-cert-manager-on-gcp", "gcp-prod", {**PUBLIC, "tls": {"certManagerIssuer": "letsencrypt"}, "loadBalancerGrpc": True}, "loadBalancerGrpc", "preSharedCert or secretName"),
    ("grpc-choice-without-application-lb", "prod", {"exposure": "internal", "clientCidrs": ["10.0.0.0/8"], "loadBalancerGrpc": False}, "loadBalancerGrpc", "only with an Application load balancer"),
]


def test_grpc_through_gke_loads_and_cert_manager_is_refused_with_the_rest_only_fix():
    gateway = load_stack_config(_with_access("gcp-prod", {**PUBLIC, "tls": {"secretName": "llm-tls"}}), "gcp-prod")
    assert gateway.triton_deployments[0].access.load_balancer_grpc is None
    internal = {**INTERNAL_APP, "hostname": "llm.internal.example.com", "tls": {"preSharedCert": "llm-regional"}, "loadBalancerGrpc": True}
    assert load_stack_config(_with_access("gcp-prod", internal), "gcp-prod").triton_deployments[0].access.load_balancer_grpc
    cert_manager = {**PUBLIC, "tls": {"certManagerIssuer": "letsencrypt"}}
    assert _problems("gcp-prod", cert_manager)["loadBalancerGrpc"][2] == (
        "pulumi config set --path 'tritonfleet:tritonDeployments[0].access.loadBalancerGrpc' false --stack gcp-prod"
    )
    config = load_stack_config(_with_access("gcp-prod", {**cert_manager, "loadBalancerGrpc": False}), "gcp-prod")
    assert config.triton_deployments[0].access.load_balancer_grpc is False
    # AWS's ALB carries gRPC: unset means REST and gRPC there.
    aws = load_stack_config(_with_access("prod", {**PUBLIC, "tls": {"certificateArn": ACM_ARN}}), "prod")
    assert aws.triton_deployments[0].access.load_balancer_grpc is None


@pytest.mark.parametrize(("case", "stack", "access", "key", "text"), BAD_ACCESS, ids=[c[0] for c in BAD_ACCESS])
def test_bad_access_is_a_clear_problem(case, stack, access, key, text):
    problems = _problems(stack, access)
    assert key in problems, problems
    value, allowed, fix = problems[key]
    assert text in allowed + fix
    assert fix.startswith(("pulumi config set --path", "pulumi config rm --path")) and f"--stack {stack}" in fix


def test_internal_application_without_hostname_and_tls_lists_both_fixes_at_once():
    problems = _problems("prod", {**INTERNAL_APP, "clientCidrs": ["10.0.0.0/8"]})
    assert {"hostname", "tls.certificateArn"} <= set(problems)
    assert problems["hostname"][2] == (
        "pulumi config set --path 'tritonfleet:tritonDeployments[0].access.hostname' llm.internal.example.com --stack prod"
    )
    assert "restrictInference" not in problems  # internal needs no inference key


def test_load_balancer_defaults_follow_the_exposure():
    from tests.access_helpers import deployment

    modes = {exposure: deployment({"exposure": exposure}).access.mode for exposure in ("cluster", "internal", "public")}
    assert modes == {"cluster": "cluster", "internal": "internal", "public": "public"}
    assert deployment({"exposure": "internal", "loadBalancer": "network"}).access.mode == "internal"
    assert deployment({"exposure": "internal", "loadBalancer": "application"}).access.mode == "internal-application"


def test_public_without_tls_or_auth_lists_both_fixes_at_once():
    problems = _problems("prod", {"exposure": "public", "hostname": "llm.example.com"})
    assert {"tls.certificateArn", "restrictInference"} <= set(problems)
    assert problems["restrictInference"][2] == (
        "pulumi config set --path 'tritonfleet:tritonDeployments[0].access.restrictInference' true --stack prod"
    )
    assert "certificateArn' 'arn:aws:acm:" in problems["tls.certificateArn"][2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    return tmp_path


def test_cli_refuses_public_without_tls_with_the_fix(project):
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    doc = copy.deepcopy(doc)
    doc["config"]["tritonfleet:tritonDeployments"][0]["access"] = {"exposure": "public", "hostname": "llm.example.com"}
    (project / "stacks" / "Pulumi.prod.yaml").write_text(yaml.safe_dump(doc))
    result = run_cli("plan", "--stack", "prod", "--project-dir", str(project))
    assert result.returncode == 1 and "Traceback" not in result.stderr + result.stdout
    message = one_line(result.stderr)  # wrapped to 80 columns
    assert "tritonfleet:tritonDeployments[0].access.tls.certificateArn = (missing)" in message
    assert "tritonfleet:tritonDeployments[0].access.restrictInference = false" in message
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].access.restrictInference' true --stack prod" in message
