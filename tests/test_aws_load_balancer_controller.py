"""The AWS Load Balancer Controller: installed only for internal/public exposure, with AWS's published policy, its
values keys in the pinned chart, subnets tagged for discovery, and Triton releases waiting for it."""

from __future__ import annotations

import json

from components.aws.load_balancer_controller import controller_values, published_policy
from tests.conftest import ROOT, engine_config
from tests.serving_helpers import missing_keys, upstream_values
from tests.test_aws_program import run
from tritonfleet.core import pins

RELEASE = "kubernetes:helm.sh/v3:Release"
EXISTING_VPC = {
    "kubernetesVersion": "1.35",
    "existingVpcId": "vpc-0123456789abcdef0",
    "existingLoadBalancerCidrs": ["10.20.224.0/24", "10.20.225.0/24"],
    "existingPrivateSubnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
}


def exposed_dev(exposure: str = "internal") -> list[dict]:
    deployments = json.loads(engine_config("dev")["tritonfleet:tritonDeployments"])
    deployments[0]["access"] = (
        {"exposure": "internal", "clientNamespaces": ["apps"], "clientCidrs": ["10.30.0.0/16"]}
        if exposure == "internal"
        else {
            "exposure": "public",
            "hostname": "resnet.example.com",
            "restrictInference": True,
            "tls": {"certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/abc"},
        }
    )
    return deployments


def role_tags(by_type) -> list[object]:
    """Load-balancer role tags tritonfleet put on subnets (the only other aws.ec2.Tags are Karpenter's discovery tags)."""
    return [t for t in by_type.get("aws:ec2/tag:Tag", []) if str(t.inputs.get("key", "")).startswith("kubernetes.io/role/")]


def releases(by_type) -> dict[str, object]:
    return {r.inputs["name"]: r for r in by_type[RELEASE]}


def test_no_controller_without_internal_or_public_exposure():
    for stack in ("dev", "prod"):
        by_type, outputs = run(stack)
        assert "aws-load-balancer-controller" not in releases(by_type)
        assert "loadBalancerControllerRoleArn" not in outputs
        assert not role_tags(by_type)


def test_internal_exposure_installs_the_pinned_controller_before_triton():
    by_type, outputs = run("dev", tritonDeployments=exposed_dev())
    found = releases(by_type)
    controller = found["aws-load-balancer-controller"]
    chart = pins.AWS_LOAD_BALANCER_CONTROLLER_CHART
    assert (controller.inputs["chart"], controller.inputs["version"]) == (chart["chart"], chart["version"])
    assert controller.inputs["repositoryOpts"] == {"repo": chart["repo"]}
    values = controller.inputs["values"]
    assert values["region"] == "us-east-1" and values["vpcId"] == "tf-aws-net-vpc-id"  # no IMDS look-up
    assert values["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"] == outputs["loadBalancerControllerRoleArn"]
    assert values["nodeSelector"] == {"tritonfleet.io/role": "system"}
    # The Triton release waits for the controller: its webhook admits the annotated Service.
    assert controller.urn in found["triton-resnet"].depends_on


def test_the_controller_role_has_the_published_policy_and_trusts_its_service_account():
    by_type, _ = run("dev", tritonDeployments=exposed_dev("public"))
    (policy,) = [p for p in by_type["aws:iam/policy:Policy"] if p.name == "tf-aws-lb-controller-policy"]
    assert json.loads(policy.inputs["policy"]) == published_policy()
    (role,) = [r for r in by_type["aws:iam/role:Role"] if r.name == "tf-aws-lb-controller-role"]
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Condition"]["StringEquals"]
    assert "system:serviceaccount:kube-system:aws-load-balancer-controller" in trust.values()


def test_values_keys_exist_in_the_pinned_chart():
    values = controller_values("c", "us-east-1", "vpc-1", "arn:aws:iam::123456789012:role/r")
    assert (
        missing_keys(
            values, upstream_values(f"aws-load-balancer-controller-{pins.AWS_LOAD_BALANCER_CONTROLLER_CHART['version']}")
        )
        == []
    )


def test_vendored_policy_is_the_pinned_versions_and_grants_what_the_controller_calls():
    version = pins.AWS_LOAD_BALANCER_CONTROLLER_CHART["version"]
    (data,) = (ROOT / "tritonfleet" / "clouds" / "aws" / "data").glob("aws-load-balancer-controller-*-iam-policy.json")
    assert data.name == f"aws-load-balancer-controller-v{version}-iam-policy.json"
    actions = {
        a for s in published_policy()["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert {"elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateTargetGroup", "ec2:DescribeSubnets"} <= actions


def test_load_balancers_go_to_subnets_without_nodes():
    """Internal and public load balancers live in the public subnets (no node, so no pod address there), which
    Triton's NetworkPolicy admits; the node subnets carry no load-balancer role tag. An existing VPC's subnets are the
    user's to tag (docs/aws.md): tritonfleet tags nothing there."""
    by_type, _ = run("dev", tritonDeployments=exposed_dev())
    subnets = {s.name: s.inputs.get("tags", {}) for s in by_type["aws:ec2/subnet:Subnet"]}
    public = {n: t for n, t in subnets.items() if "-public-" in n}
    private = {n: t for n, t in subnets.items() if "-private-" in n}
    assert public and private
    assert all(t.get("kubernetes.io/role/elb") == "1" and t.get("kubernetes.io/role/internal-elb") == "1" for t in public.values())
    assert not any(k.startswith("kubernetes.io/role/") for t in private.values() for k in t)
    by_type, _ = run("dev", cluster=EXISTING_VPC, tritonDeployments=exposed_dev())
    assert not role_tags(by_type)


def test_a_new_vpc_has_an_s3_gateway_endpoint_on_its_private_route_tables():
    by_type, _ = run("prod")
    endpoints = {e.inputs["vpcEndpointType"]: e for e in by_type["aws:ec2/vpcEndpoint:VpcEndpoint"]}
    endpoint = endpoints["Gateway"]
    assert endpoint.inputs["serviceName"] == "com.amazonaws.us-east-1.s3"
    private_tables = {f"tf-aws-net-private-{zone}-id" for zone in ("us-east-1a", "us-east-1b", "us-east-1c")}
    assert set(endpoint.inputs["routeTableIds"]) == private_tables
    by_type, _ = run("dev", cluster=EXISTING_VPC)
    assert "aws:ec2/vpcEndpoint:VpcEndpoint" not in by_type  # someone else's VPC: the plan prices NAT instead


def test_a_new_vpc_answers_sts_in_its_load_balancer_subnets_where_tritons_egress_goes():
    """Triton's IRSA token exchange needs STS, which has no address range: an interface endpoint with private DNS in
    the public (load balancer) subnets, which hold no pod, is where Triton's NetworkPolicy lets HTTPS go."""
    by_type, _ = run("prod")
    endpoints = {e.inputs["vpcEndpointType"]: e for e in by_type["aws:ec2/vpcEndpoint:VpcEndpoint"]}
    sts = endpoints["Interface"]
    assert sts.inputs["serviceName"] == "com.amazonaws.us-east-1.sts" and sts.inputs["privateDnsEnabled"] is True
    assert set(sts.inputs["subnetIds"]) == {f"tf-aws-net-public-{zone}-id" for zone in ("us-east-1a", "us-east-1b", "us-east-1c")}
    (group,) = [g for g in by_type["aws:ec2/securityGroup:SecurityGroup"] if g.name == "tf-aws-sts-https"]
    assert group.inputs["ingress"] == [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.0.0.0/16"]}]
    by_type, _ = run("dev", cluster=EXISTING_VPC)
    assert "aws:ec2/vpcEndpoint:VpcEndpoint" not in by_type  # someone else's VPC brings its own (docs/aws.md)


def test_both_alb_modes_are_one_ingress_shape_apart_from_the_scheme():
    """internal-application and public differ only in the ALB scheme; every mode's sources are the load balancers'
    subnets (internal ALBs live there too)."""
    from components.k8s.access_matrix import cloud_facts

    facts = cloud_facts("aws")
    assert facts.ingress_classes == {"internal-application": "alb", "public": "alb"} and not facts.ingress_class_annotation
    internal, public = facts.ingress_annotations["internal-application"], facts.ingress_annotations["public"]
    scheme = "alb.ingress.kubernetes.io/scheme"
    assert (internal[scheme], public[scheme]) == ("internal", "internet-facing")
    assert {k: v for k, v in internal.items() if k != scheme} == {k: v for k, v in public.items() if k != scheme}
    assert set(facts.load_balancer_sources) == {"internal", "internal-application", "public"}
    assert set(facts.load_balancer_sources.values()) == {("10.0.224.0/24", "10.0.225.0/24")}
    assert not facts.keeps_client_address
