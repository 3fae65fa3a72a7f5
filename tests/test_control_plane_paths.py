"""The control plane reaches what the stack serves it on the nodes (prometheus-adapter's custom metrics API on 6443,
the Prometheus Operator's webhook on 10250): a firewall rule on GKE, the cluster security group on EKS."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT, STACKS

from tests.serving_helpers import plan
from tritonfleet.clouds.gcp.facts import GKE_CONTROL_PLANE_OPEN_PORTS, control_plane_firewall_ports
from tritonfleet.core.conventions import CONTROL_PLANE_CALLED_PORTS

UPSTREAM = ROOT / "tests" / "upstream"


def _cloud(stack: str) -> str:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]["tritonfleet:cloud"]


def test_the_called_ports_are_the_upstream_charts_defaults():
    adapter = yaml.safe_load((UPSTREAM / "prometheus-adapter-5.3.0" / "values.yaml").read_text())
    kps = yaml.safe_load((UPSTREAM / "kube-prometheus-stack-88.5.3" / "values.yaml").read_text())
    assert CONTROL_PLANE_CALLED_PORTS["prometheus-adapter"] == adapter["listenPort"]
    assert CONTROL_PLANE_CALLED_PORTS["prometheus-operator-webhook"] == kps["prometheusOperator"]["tls"]["internalPort"]


def test_gke_needs_a_rule_for_the_adapter_port_only():
    assert control_plane_firewall_ports(CONTROL_PLANE_CALLED_PORTS) == [6443]
    assert control_plane_firewall_ports({"x": 443, "y": 10250}) == []
    assert set(GKE_CONTROL_PLANE_OPEN_PORTS) == {443, 10250}


@pytest.mark.parametrize("stack", [s for s in STACKS if _cloud(s) == "aws"])
def test_eks_node_groups_keep_the_cluster_security_group(stack):
    """EKS puts the cluster security group (all traffic from itself, the control plane's ENIs included) on a managed
    node group's nodes unless its launch template names security groups: ours name none."""
    resources = plan(stack)["resources"]
    templates = [r for r in resources if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert templates
    for template in templates:
        inputs = template["inputs"]
        assert not inputs.get("vpcSecurityGroupIds") and not inputs.get("securityGroupNames"), template["name"]
        assert not any(n.get("securityGroups") for n in inputs.get("networkInterfaces", [])), template["name"]
    for group in (r for r in resources if r["type"] == "aws:eks/nodeGroup:NodeGroup"):
        assert not group["inputs"].get("remoteAccess"), group["name"]


@pytest.mark.parametrize("stack", [s for s in STACKS if _cloud(s) == "gcp"])
def test_gke_plan_opens_the_adapter_port_from_the_control_plane(stack):
    from tritonfleet.clouds.gcp.layout import CONTROL_PLANE_CIDR

    rules = [r for r in plan(stack)["resources"] if r["type"] == "gcp:compute/firewall:Firewall"]
    webhooks = [r["inputs"] for r in rules if r["inputs"].get("sourceRanges") == [CONTROL_PLANE_CIDR]]
    assert len(webhooks) == 1, rules
    rule = webhooks[0]
    assert rule["direction"] == "INGRESS"
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["6443"]}]
