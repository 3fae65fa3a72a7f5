"""Network exposure config: the control plane's CIDRs (EKS endpoint, GKE authorized networks), the load balancers'
sources, and the clients a deployment names. Good values load and reach the plan; bad ones fail with the key, the
value and the fix."""

from __future__ import annotations

import json

import pytest
from conftest import config_problems, engine_config

from tritonfleet.clouds.aws.exposure import eks_endpoint_access
from tritonfleet.clouds.gcp.exposure import gke_control_plane_access
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.exposure import ControlPlaneAccess, control_plane_access


def _config(stack: str, cluster: dict | None = None, access: dict | None = None) -> dict[str, str]:
    raw = dict(engine_config(stack))
    if cluster is not None:
        merged = {**json.loads(raw.get("tritonfleet:cluster", "{}")), **cluster}
        raw["tritonfleet:cluster"] = json.dumps(merged)
    if access is not None:
        deployments = json.loads(raw["tritonfleet:tritonDeployments"])
        deployments[0]["access"] = access
        raw["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    return raw


def _problems(stack: str, **changes) -> dict[str, tuple]:
    return config_problems(_config(stack, **changes), stack)


# ---- the control plane


def test_the_prod_default_is_private_and_other_defaults_are_open(stack_config):
    assert control_plane_access(None, "prod").private_only and control_plane_access(None, "dev").anywhere
    # prod on AWS says it is deployed from hosted runners, so it opens EKS's public endpoint (acknowledged).
    assert control_plane_access(stack_config("prod").cluster.control_plane_cidrs, "prod").anywhere
    assert control_plane_access(stack_config("gcp-prod").cluster.control_plane_cidrs, "prod").private_only
    assert control_plane_access(stack_config("dev").cluster.control_plane_cidrs, "dev").anywhere


def test_control_plane_access_becomes_cloud_arguments():
    private, narrow, anywhere = (ControlPlaneAccess(c) for c in ((), ("198.51.100.0/24",), ("0.0.0.0/0",)))
    assert eks_endpoint_access(private) == {"endpoint_private_access": True, "endpoint_public_access": False, "public_access_cidrs": None}
    assert eks_endpoint_access(narrow)["public_access_cidrs"] == ["198.51.100.0/24"]
    assert gke_control_plane_access(private) == {
        "enable_private_endpoint": True,
        "master_authorized_networks_config": {"cidr_blocks": [], "gcp_public_cidrs_access_enabled": False},
    }
    blocks = gke_control_plane_access(narrow)["master_authorized_networks_config"]["cidr_blocks"]
    assert [b["cidr_block"] for b in blocks] == ["198.51.100.0/24"]
    assert gke_control_plane_access(anywhere) == {"enable_private_endpoint": False, "master_authorized_networks_config": None}


@pytest.mark.parametrize("stack", ["prod", "gcp-prod"])
def test_prod_refuses_an_api_open_to_everyone_without_the_acknowledgement(stack):
    found = _problems(stack, cluster={"controlPlaneCidrs": ["0.0.0.0/0"], "acknowledgePublicControlPlane": False})
    value, allowed, fix = found["cluster.controlPlaneCidrs[0]"]
    assert value == "0.0.0.0/0" and "acknowledgePublicControlPlane" in allowed
    assert fix.startswith("pulumi config set --path 'tritonfleet:cluster.controlPlaneCidrs[0]'")
    config = load_stack_config(_config(stack, cluster={"controlPlaneCidrs": ["0.0.0.0/0"], "acknowledgePublicControlPlane": True}), stack)
    assert control_plane_access(config.cluster.control_plane_cidrs, "prod").anywhere


def test_a_malformed_control_plane_cidr_names_the_key_and_the_fix():
    found = _problems("dev", cluster={"controlPlaneCidrs": ["10.0.0.0/33", "10.0.0.1/16"]})
    assert "a CIDR such as" in found["cluster.controlPlaneCidrs[0]"][1]
    assert "a CIDR such as" in found["cluster.controlPlaneCidrs[1]"][1]  # host bits set: not a network
    assert found["cluster.controlPlaneCidrs[0]"][2].startswith("pulumi config set --path")


def test_the_datapath_acknowledgement_is_gke_only():
    found = _problems("prod", cluster={"acknowledgeDatapathReplacement": True})
    assert found["cluster.acknowledgeDatapathReplacement"][2].startswith("pulumi config rm --path")


# ---- load balancer sources and clients


def test_an_existing_vpc_names_its_load_balancer_subnets():
    subnets = {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"}
    found = _problems("dev", cluster={"existingVpcId": "vpc-0123456789abcdef0", "existingPrivateSubnets": subnets})
    assert "hold no node" in found["cluster.existingLoadBalancerCidrs"][1]
    cluster = {"existingVpcId": "vpc-0123456789abcdef0", "existingPrivateSubnets": subnets, "existingLoadBalancerCidrs": ["10.20.0.0/33"]}
    assert "a CIDR such as" in _problems("dev", cluster=cluster)["cluster.existingLoadBalancerCidrs[0]"][1]


@pytest.mark.parametrize("stack", ["prod", "gcp-prod"])
def test_internal_exposure_needs_the_networks_it_serves(stack):
    found = _problems(stack, access={"exposure": "internal"})
    value, allowed, fix = found["tritonDeployments[0].access.clientCidrs"]
    assert "internal load balancer" in allowed and "tritonDeployments[0].access.clientCidrs[0]" in fix


def test_gke_ingress_cannot_filter_client_networks():
    access = {"exposure": "public", "hostname": "a.example.com", "tls": {"preSharedCert": "a"}, "restrictInference": True, "clientCidrs": ["10.0.0.0/8"]}
    found = _problems("gcp-prod", access=access)
    assert "Cloud Armor" in found["tritonDeployments[0].access.clientCidrs"][1]


@pytest.mark.parametrize(
    ("access", "key", "fragment"),
    [
        ({"clientNamespaces": ["Apps"]}, "clientNamespaces[0]", "namespace name"),
        ({"clientNamespaces": []}, "clientNamespaces", "selects no client"),
        ({"exposure": "internal", "clientCidrs": ["10.1.0.0/300"]}, "clientCidrs[0]", "a CIDR such as"),
    ],
)
def test_bad_clients_name_the_key_and_the_fix(access, key, fragment):
    found = _problems("prod", access=access)
    value, allowed, fix = found[f"tritonDeployments[0].access.{key}"]
    assert fragment in allowed and fix.startswith("pulumi config set --path")


def test_client_networks_reach_the_load_balancer_filter_not_the_pod_on_aws():
    from tests.access_helpers import ACM_ARN, chart_values

    public = chart_values("aws", {"exposure": "public", "hostname": "a.example.com", "tls": {"certificateArn": ACM_ARN}, "restrictInference": True, "clientCidrs": ["10.0.0.0/8"]})
    assert public["ingress"]["annotations"]["alb.ingress.kubernetes.io/inbound-cidrs"] == "10.0.0.0/8"
    assert public["networkPolicy"]["clientCidrs"] == []  # the pod sees the ALB, never the client
    internal = chart_values("gcp", {"exposure": "internal", "clientCidrs": ["10.128.0.0/9"]})
    assert internal["service"]["loadBalancerSourceRanges"] == ["10.128.0.0/9"] == internal["networkPolicy"]["clientCidrs"]
