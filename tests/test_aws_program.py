"""What the real program registers on AWS, run under the Pulumi mock runtime through the offline plan harness."""

from __future__ import annotations

import json
from functools import cache

import pytest

from tests.conftest import ROOT, engine_config
from tests.plan_cache import stock_plan
from tritonfleet.plan.harness import ProgramRun, Recorded, run_program

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


@cache
def _run(stack: str, overrides: tuple[tuple[str, str], ...] = ()):
    if not overrides:  # a shipped stack as it is: the shared plan (tests/plan_cache.py)
        plan = stock_plan(stack)
        return ProgramRun(resources=[Recorded.from_document(r) for r in plan["resources"]], outputs=plan["outputs"])
    raw = {**engine_config(stack), **dict(overrides)}
    return run_program(ROOT, "tritonfleet", stack, raw, [])


def run(stack: str, **overrides):
    """Resources (by type) and outputs of one run; overrides are config keys without namespace, as Python values."""
    encoded = tuple(sorted((f"tritonfleet:{k}", v if isinstance(v, str) else json.dumps(v)) for k, v in overrides.items()))
    result = _run(stack, encoded)
    by_type: dict[str, list] = {}
    for r in result.resources:
        by_type.setdefault(r.type, []).append(r)
    return by_type, result.outputs


def gpu_groups(by_type):
    return {r.name: r for r in by_type[NODE_GROUP] if not r.name.endswith("_system")}


def pools_of(stack: str) -> list[dict]:
    return json.loads(engine_config(stack)["tritonfleet:gpuPools"])


def test_prod_gpu_node_groups():
    by_type, _ = run("prod")
    groups = gpu_groups(by_type)
    assert set(groups) == {"tf-aws-h200_on-demand", "tf-aws-h200_spot", "tf-aws-l40s_on-demand", "tf-aws-l40s_spot"}
    for name, group in groups.items():
        inputs = group.inputs
        assert inputs["amiType"] == "AL2023_x86_64_NVIDIA"
        assert inputs["releaseVersion"] == "1.35.7-20260903"
        assert inputs["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
        pool, option = name.removeprefix("tf-aws-").split("_")
        assert inputs["labels"]["tritonfleet.io/pool"] == pool
        assert inputs["labels"]["tritonfleet.io/capacity"] == option
        assert inputs["capacityType"] == {"on-demand": "ON_DEMAND", "spot": "SPOT"}[option]
        assert group.ignore_changes == ["scalingConfig.desiredSize"]
        assert group.protect is True
        assert inputs["launchTemplate"]["id"] == f"tf-aws-{pool}-id"
    assert len(groups["tf-aws-l40s_spot"].inputs["instanceTypes"]) > 1
    assert groups["tf-aws-l40s_on-demand"].inputs["instanceTypes"] == ["g6e.xlarge"]
    # h200 is limited to the zones that offer p5en
    assert groups["tf-aws-h200_spot"].inputs["subnetIds"] == [
        "tf-aws-net-private-us-east-1a-id",
        "tf-aws-net-private-us-east-1c-id",
    ]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_group_sizes_add_up_to_each_pool(stack):
    by_type, _ = run(stack)
    groups = gpu_groups(by_type)
    for pool in pools_of(stack):
        if pool.get("enabled") is False:
            assert not any(n.startswith(f"tf-aws-{pool['name']}_") for n in groups)
            continue
        mine = [g for n, g in groups.items() if n.startswith(f"tf-aws-{pool['name']}_")]
        assert sum(g.inputs["scalingConfig"]["minSize"] for g in mine) == pool.get("minNodes", 0)
        assert sum(g.inputs["scalingConfig"]["maxSize"] for g in mine) == pool["maxNodes"]


def test_launch_template_disk_and_imds():
    by_type, _ = run("prod")
    for template in by_type["aws:ec2/launchTemplate:LaunchTemplate"]:
        (mapping,) = template.inputs["blockDeviceMappings"]
        assert mapping["deviceName"] == "/dev/xvda"
        assert mapping["ebs"]["volumeSize"] >= 100
        assert mapping["ebs"]["encrypted"] == "true"
        assert template.inputs["metadataOptions"]["httpTokens"] == "required"
        assert "instanceMarketOptions" not in template.inputs


def test_capacity_block_pool_when_enabled():
    pools = pools_of("prod")
    for pool in pools:
        if pool["name"] == "b200":
            pool["enabled"] = True
    by_type, outputs = run("prod", gpuPools=pools, gpuLimit=64, budget={"monthlyUsd": 500000})
    group = gpu_groups(by_type)["tf-aws-b200_capacity-block"]
    assert group.inputs["capacityType"] == "CAPACITY_BLOCK"
    assert group.inputs["instanceTypes"] == ["p6-b200.48xlarge"]
    assert group.inputs["subnetIds"] == ["tf-aws-net-private-us-east-1c-id"]
    assert (group.inputs["scalingConfig"]["minSize"], group.inputs["scalingConfig"]["maxSize"]) == (0, 1)
    template = next(t for t in by_type["aws:ec2/launchTemplate:LaunchTemplate"] if t.name == "tf-aws-b200")
    assert template.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template.inputs["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0b200example0000"}
    }
    assert outputs["nodeGroups"]["b200"] == {"capacity-block": "tf-aws-b200_capacity-block-0000000"}


def test_cluster_addons_identity_and_logging():
    by_type, outputs = run("prod")
    (cluster,) = by_type["aws:eks/cluster:Cluster"]
    inputs = cluster.inputs
    assert inputs["version"] == "1.35"
    assert inputs["upgradePolicy"] == {"supportType": "EXTENDED"}  # prod: never upgraded by AWS at a time it picks
    assert cluster.protect is True and inputs["deletionProtection"] is True
    assert inputs["encryptionConfig"]["resources"] == ["secrets"]
    assert set(inputs["enabledClusterLogTypes"]) == {"api", "audit", "authenticator", "controllerManager", "scheduler"}
    assert inputs["accessConfig"]["authenticationMode"] == "API"
    assert inputs["bootstrapSelfManagedAddons"] is False
    assert len(inputs["vpcConfig"]["subnetIds"]) == 3
    addons = {a.inputs["addonName"]: a for a in by_type["aws:eks/addon:Addon"]}
    assert set(addons) == {"vpc-cni", "coredns", "kube-proxy", "aws-ebs-csi-driver", "amazon-cloudwatch-observability", "eks-pod-identity-agent"}
    assert addons["aws-ebs-csi-driver"].inputs["serviceAccountRoleArn"] == outputs["ebsCsiRoleArn"]
    # Container logs (Triton's model-load errors) reach CloudWatch through the add-on, with an IRSA role for its agent
    # only, into a log group created first with a retention.
    roles = {r.name: r for r in by_type["aws:iam/role:Role"]}
    cloudwatch_role = roles["tf-aws-eks-cloudwatch"]
    assert "system:serviceaccount:amazon-cloudwatch:cloudwatch-agent" in json.dumps(cloudwatch_role.inputs["assumeRolePolicy"])
    attached = {(a.name, a.inputs["policyArn"]) for a in by_type["aws:iam/rolePolicyAttachment:RolePolicyAttachment"]}
    assert ("tf-aws-eks-cloudwatch", "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy") in attached
    groups = {g.inputs["name"]: g for g in by_type["aws:cloudwatch/logGroup:LogGroup"]}
    assert groups["/aws/containerinsights/tf-prod/application"].inputs["retentionInDays"] > 0
    # The VPC CNI runs as its own IRSA role; the node role no longer carries its policy.
    assert addons["vpc-cni"].inputs["serviceAccountRoleArn"] == "arn:aws:iam::123456789012:role/tf-aws-eks-cni"
    attachments = {a.name: a.inputs["policyArn"] for a in by_type["aws:iam/rolePolicyAttachment:RolePolicyAttachment"]}
    assert attachments["tf-aws-eks-cni"] == "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
    assert [n for n, arn in attachments.items() if arn.endswith("AmazonEKS_CNI_Policy")] == ["tf-aws-eks-cni"]
    (oidc,) = by_type["aws:iam/openIdConnectProvider:OpenIdConnectProvider"]
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    assert oidc.inputs["url"] == outputs["oidcIssuer"]
    (system,) = [g for g in by_type[NODE_GROUP] if g.name.endswith("_system")]
    assert system.inputs["capacityType"] == "ON_DEMAND" and "taints" not in system.inputs
    (template,) = [t for t in by_type["aws:ec2/launchTemplate:LaunchTemplate"] if t.name == "tf-aws-eks-system"]
    assert system.inputs["launchTemplate"]["version"] == "1"  # the template's latest version
    # IMDSv2 with hop limit 1: pods outside the host network cannot reach the node role's credentials.
    assert template.inputs["metadataOptions"] == {"httpEndpoint": "enabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"}
    assert system.inputs["scalingConfig"]["minSize"] == 3
    (key,) = by_type["aws:kms/key:Key"]
    assert key.protect is True and key.inputs["enableKeyRotation"] is True
    (bucket,) = by_type["aws:s3/bucket:Bucket"]
    assert bucket.protect is True
    (vpc,) = by_type["aws:ec2/vpc:Vpc"]
    assert vpc.protect is True


def test_nothing_is_protected_in_dev():
    by_type, _ = run("dev")
    protected = [r.name for rs in by_type.values() for r in rs if r.protect]
    assert protected == []
    (cluster,) = by_type["aws:eks/cluster:Cluster"]
    assert cluster.inputs["deletionProtection"] is False
    assert len(by_type["aws:ec2/natGateway:NatGateway"]) == 1


def test_triton_irsa_roles_trust_one_service_account_and_read_one_prefix():
    by_type, outputs = run("prod")
    roles = {r.name: r for r in by_type["aws:iam/role:Role"]}
    policies = {r.name: r for r in by_type["aws:iam/rolePolicy:RolePolicy"]}
    issuer = outputs["oidcIssuer"].removeprefix("https://")
    for deployment, prefix in (("llm", "llm/"), ("vision", "vision/")):
        trust = json.loads(roles[f"tf-aws-triton-{deployment}"].inputs["assumeRolePolicy"])
        (statement,) = trust["Statement"]
        assert statement["Condition"]["StringEquals"][f"{issuer}:sub"] == f"system:serviceaccount:triton:triton-{deployment}"
        policy = json.loads(policies[f"tf-aws-triton-{deployment}-read"].inputs["policy"])
        resources = {s["Resource"] for s in policy["Statement"]}
        assert resources == {"arn:aws:s3:::tf-prod-models", f"arn:aws:s3:::tf-prod-models/{prefix}*"}
        assert {s["Action"] for s in policy["Statement"]} == {"s3:ListBucket", "s3:GetObject"}
        assert outputs["tritonRoleArns"][deployment] == f"arn:aws:iam::123456789012:role/tf-aws-triton-{deployment}"


def test_scale_from_zero_tags():
    by_type, _ = run("prod")
    tags = {r.inputs["tag"]["key"]: r for r in by_type["aws:autoscaling/tag:Tag"] if r.name.startswith("tf-aws-h200_spot")}
    gpu = tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"]
    assert gpu.inputs["tag"]["value"] == "8"
    assert gpu.inputs["autoscalingGroupName"].startswith("eks-tf-aws-h200_spot-")


def test_existing_vpc_bottlerocket_and_admins():
    cluster = {
        "existingVpcId": "vpc-0123456789abcdef0",
        "existingLoadBalancerCidrs": ["10.20.240.0/24", "10.20.241.0/24"],
        "existingPrivateSubnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
        "gpuNodeImage": "bottlerocket",
        "amiReleaseVersion": "1.42.0-a1b2c3d4",
        "adminPrincipals": ["arn:aws:iam::123456789012:role/platform-admin"],
    }
    by_type, _ = run("dev", cluster=cluster)
    assert "aws:ec2/vpc:Vpc" not in by_type and "aws:ec2/natGateway:NatGateway" not in by_type
    (group,) = gpu_groups(by_type).values()
    assert group.inputs["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    assert group.inputs["releaseVersion"] == "1.42.0-a1b2c3d4"
    assert group.inputs["subnetIds"] == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    for template in by_type["aws:ec2/launchTemplate:LaunchTemplate"]:  # the GPU pool's and the system nodes'
        assert template.inputs["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"  # Bottlerocket's image volume
    (entry,) = [e for e in by_type["aws:eks/accessEntry:AccessEntry"] if e.inputs["type"] == "STANDARD"]
    assert entry.inputs["principalArn"] == "arn:aws:iam::123456789012:role/platform-admin"
    (association,) = by_type["aws:eks/accessPolicyAssociation:AccessPolicyAssociation"]
    assert association.inputs["policyArn"].endswith("AmazonEKSClusterAdminPolicy")


def test_the_creator_gets_no_second_access_entry():
    """The offline plan deploys as assumed-role/deployer: EKS makes that role's entry at creation (bootstrap), so the
    listed copy and a listed duplicate get none, and the cluster records its creator for later runs."""
    deployer, ops = "arn:aws:iam::123456789012:role/deployer", "arn:aws:iam::123456789012:role/ops"
    by_type, _ = run("dev", cluster={"kubernetesVersion": "1.35", "adminPrincipals": [deployer, ops, ops]})
    entries = {e.name: e.inputs["principalArn"] for e in by_type["aws:eks/accessEntry:AccessEntry"] if e.inputs["type"] == "STANDARD"}
    assert entries == {"tf-aws-eks-admin-1": ops}  # named by its place in the list, as before the creator was known
    (cluster,) = by_type["aws:eks/cluster:Cluster"]
    assert cluster.inputs["tags"]["tritonfleet.io/created-by"] == deployer
    assert cluster.inputs["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is True
    assert cluster.inputs["upgradePolicy"] == {"supportType": "STANDARD"}  # dev: no extended-support fee


def test_cluster_facts_for_the_kubernetes_layer(stack_config):
    """The facts the AWS floor hands up: IRSA annotations per deployment and the operator values per node image."""
    import pulumi

    from components.aws.cloud import AwsCloud
    from tritonfleet.plan.harness import _Mocks

    pulumi.runtime.set_mocks(_Mocks(), project="tritonfleet", stack="prod", preview=False)
    config = stack_config("prod")
    seen = {}

    @pulumi.runtime.test
    def check():
        cloud = AwsCloud("t", config)
        facts = cloud.facts
        assert facts.gpu_operator_values == {"driver": {"enabled": False}, "toolkit": {"enabled": False}}
        assert set(facts.service_account_annotations) == {"llm", "vision"}

        def record(arn):
            seen["arn"] = arn

        return facts.service_account_annotations["llm"]["eks.amazonaws.com/role-arn"].apply(record)

    check()
    assert seen["arn"] == "arn:aws:iam::123456789012:role/t-triton-llm"


def test_an_existing_vpcs_load_balancer_subnets_are_the_internal_load_balancer_source():
    cluster = {
        "existingVpcId": "vpc-0123456789abcdef0",
        "existingLoadBalancerCidrs": ["10.20.240.0/24", "10.20.241.0/24"],
        "existingPrivateSubnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    }
    deployments = json.loads(engine_config("dev")["tritonfleet:tritonDeployments"])
    deployments[0]["access"] = {"exposure": "internal", "clientNamespaces": ["apps"], "clientCidrs": ["172.20.0.0/16"]}
    by_type, _ = run("dev", cluster=cluster, tritonDeployments=deployments)
    (release,) = [r for r in by_type["kubernetes:helm.sh/v3:Release"] if r.inputs["name"] == "triton-resnet"]
    values = release.inputs["values"]
    assert values["networkPolicy"]["loadBalancerCidrs"] == ["10.20.240.0/24", "10.20.241.0/24"]
    assert values["networkPolicy"]["clientCidrs"] == []  # the pod sees the NLB, which filters the clients
    assert values["service"]["loadBalancerSourceRanges"] == ["172.20.0.0/16"]


def test_the_cluster_has_one_encrypted_default_storage_class_for_unnamed_claims():
    """EKS >= 1.30 creates no default StorageClass: without one the Prometheus volume (monitoring.storageClass unset
    in the shipped stacks) would stay Pending and monitoring and the Triton HPAs would never work."""
    by_type, _ = run("prod")
    (storage,) = by_type["kubernetes:storage.k8s.io/v1:StorageClass"]
    assert storage.inputs["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    assert storage.inputs["provisioner"] == "ebs.csi.aws.com"
    assert storage.inputs["parameters"] == {"type": "gp3", "encrypted": "true"}
    (ebs_csi,) = [r for r in by_type["aws:eks/addon:Addon"] if r.inputs["addonName"] == "aws-ebs-csi-driver"]
    assert ebs_csi.urn in storage.depends_on
    (kps,) = [r for r in by_type["kubernetes:helm.sh/v3:Release"] if r.inputs["name"] == "kube-prometheus-stack"]
    claim = kps.inputs["values"]["prometheus"]["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert "storageClassName" not in claim  # so it is the default class above that provisions it
