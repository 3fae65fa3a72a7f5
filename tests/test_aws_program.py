"""What the real program registers on AWS, run under the Pulumi mock runtime through the offline plan harness."""

from __future__ import annotations

import json
from functools import cache

import pytest

from tests.conftest import ROOT, engine_config, run_program
from tests.plan_cache import stock_plan
from tritonfleet.plan.harness import ProgramRun, Recorded

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


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


def node_pools(by_type):
    return {r.inputs["metadata"]["name"]: r for r in by_type.get(NODE_POOL, [])}


def pools_of(stack: str) -> list[dict]:
    return json.loads(engine_config(stack)["tritonfleet:gpuPools"])


def test_prod_gpu_pools_are_karpenter_node_pools_with_no_gpu_node_group():
    by_type, outputs = run("prod")
    groups = [r.name for r in by_type[NODE_GROUP]]
    assert groups == ["tf-aws-eks-system"] or all(name.endswith("system") for name in groups)  # GPU groups are gone
    templates = [t.name for t in by_type.get("aws:ec2/launchTemplate:LaunchTemplate", [])]
    assert templates == ["tf-aws-eks-system"] and "aws:autoscaling/tag:Tag" not in by_type  # no GPU launch template
    pools = node_pools(by_type)
    assert set(pools) == {"h200-base", "h200-burst", "l40s-base", "l40s-burst"}
    assert outputs["nodePools"] == {"h200": ["h200-base", "h200-burst"], "l40s": ["l40s-base", "l40s-burst"]}
    (controller_dependency,) = {
        urn for r in pools.values() for urn in r.depends_on if urn.endswith("kubernetes:helm.sh/v3:Release::tf-aws-karpenter")
    }
    for name, resource in pools.items():
        spec = resource.inputs["spec"]
        pool, tier = name.split("-")
        assert spec["template"]["metadata"]["labels"]["tritonfleet.io/pool"] == pool
        assert spec["template"]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
        assert spec["template"]["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool}
        assert resource.protect is True
        assert controller_dependency in resource.depends_on  # created after the controller release
    zones = [r for r in pools["h200-burst"].inputs["spec"]["template"]["spec"]["requirements"]
             if r["key"] == "topology.kubernetes.io/zone"]
    assert zones[0]["values"] == ["us-east-1a", "us-east-1c"]  # h200 is limited to the zones that offer p5en


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_node_pool_limits_add_up_to_each_pool(stack):
    by_type, _ = run(stack)
    pools = node_pools(by_type)
    for pool in pools_of(stack):
        mine = [p for name, p in pools.items() if name.startswith(f"{pool['name']}-")]
        if pool.get("enabled") is False:
            assert not mine
            continue
        gpus = sum(int(p.inputs["spec"]["limits"]["nvidia.com/gpu"]) for p in mine)
        per_node = {"l40s": 1, "h200": 8}[pool["name"]]
        assert gpus == pool["maxNodes"] * per_node


def test_node_classes_imds_storage_discovery_and_node_role():
    by_type, outputs = run("prod")
    for node_class in by_type[NODE_CLASS]:
        spec = node_class.inputs["spec"]
        assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1 and spec["metadataOptions"]["httpTokens"] == "required"
        assert spec["instanceStorePolicy"] == "RAID0"
        assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260903"}]  # pins: 1.35 -> 1.35.7-20260903
        assert spec["role"] == outputs["karpenterNodeRoleName"]  # the role the controller's access entry admits
        assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "tf-prod"}}]
        assert "userData" not in spec  # SOCI parallel pull is opt-in per pool (parallelImagePull)
    (sg_tag,) = by_type["aws:ec2/tag:Tag"]
    assert (sg_tag.inputs["key"], sg_tag.inputs["value"]) == ("karpenter.sh/discovery", "tf-prod")
    private = [s for s in by_type["aws:ec2/subnet:Subnet"] if "-private-" in s.name]
    assert private and all(s.inputs["tags"]["karpenter.sh/discovery"] == "tf-prod" for s in private)


def test_warm_capacity_placeholders_in_the_plan():
    """Prod's minimum replicas keep minNodes up on their own: no placeholder. minNodes 3 on h200 keeps one more node
    warm: one placeholder, and each NodePool carries its share of the floor."""
    by_type, _ = run("prod")
    assert "kubernetes:scheduling.k8s.io/v1:PriorityClass" not in by_type
    pools = pools_of("prod")
    pools[0]["minNodes"] = 3
    by_type, _ = run("prod", gpuPools=pools)
    warm = {d.name: d for d in by_type["kubernetes:apps/v1:Deployment"] if d.name.startswith("tf-aws-gpu-warm-")}
    assert {name: d.inputs["spec"]["replicas"] for name, d in warm.items()} == {"tf-aws-gpu-warm-h200": 1}
    (priority,) = by_type["kubernetes:scheduling.k8s.io/v1:PriorityClass"]
    assert priority.inputs["value"] < 0
    floors = {name: p.inputs["metadata"]["annotations"]["tritonfleet.io/floor-nodes"] for name, p in node_pools(by_type).items()}
    assert floors == {"h200-base": "1", "h200-burst": "2", "l40s-base": "2", "l40s-burst": "0"}


def test_capacity_block_pool_when_enabled():
    """The b200 capacity-block pool enabled; in the same run h200 turns on SOCI parallel pull (parallelImagePull)."""
    pools = pools_of("prod")
    for pool in pools:
        if pool["name"] == "b200":
            pool["enabled"] = True
        if pool["name"] == "h200":
            pool["parallelImagePull"] = True
    by_type, outputs = run("prod", gpuPools=pools, gpuLimit=64, budget={"monthlyUsd": 500000})
    reserved = node_pools(by_type)["b200-reserved"].inputs["spec"]
    requirements = {r["key"]: r["values"] for r in reserved["template"]["spec"]["requirements"]}
    assert requirements["karpenter.sh/capacity-type"] == ["reserved"]
    assert requirements["node.kubernetes.io/instance-type"] == ["p6-b200.48xlarge"]
    assert requirements["topology.kubernetes.io/zone"] == ["us-east-1c"]
    assert reserved["limits"]["nvidia.com/gpu"] == "8"
    (node_class,) = [c for c in by_type[NODE_CLASS] if c.inputs["metadata"]["name"] == "b200"]
    assert node_class.inputs["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0b200example0000"}]
    assert outputs["nodePools"]["b200"] == ["b200-reserved"]
    user_data = {c.inputs["metadata"]["name"]: c.inputs["spec"].get("userData") for c in by_type[NODE_CLASS]}
    assert json.loads(user_data["h200"])["spec"]["featureGates"] == {"FastImagePull": True}
    assert user_data["l40s"] is None and user_data["b200"] is None


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
    assert set(addons) == {
        "vpc-cni", "coredns", "kube-proxy", "aws-ebs-csi-driver", "amazon-cloudwatch-observability",
        "eks-pod-identity-agent", "eks-node-monitoring-agent",
    }
    # One dcgm-exporter per GPU node (the GPU Operator's): the CloudWatch add-on collects no NVIDIA GPU metrics.
    cloudwatch = json.loads(addons["amazon-cloudwatch-observability"].inputs["configurationValues"])
    kubernetes = cloudwatch["agent"]["config"]["logs"]["metrics_collected"]["kubernetes"]
    assert kubernetes["accelerated_compute_metrics"] is False and cloudwatch["containerLogs"] == {"enabled": True}
    assert "configurationValues" not in addons["eks-node-monitoring-agent"].inputs  # its defaults: every node
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
    for kind in ("dataplane", "host", "performance"):  # every group the add-on writes expires (cloud review 2026-12-05)
        assert groups[f"/aws/containerinsights/tf-prod/{kind}"].inputs["retentionInDays"] > 0
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
        assert resources == {"arn:aws:s3:::tf-prod-models-123456789012-us-east-1", f"arn:aws:s3:::tf-prod-models-123456789012-us-east-1/{prefix}*"}
        assert {s["Action"] for s in policy["Statement"]} == {"s3:ListBucket", "s3:GetObject"}
        assert outputs["tritonRoleArns"][deployment] == f"arn:aws:iam::123456789012:role/tf-aws-triton-{deployment}"




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
    (node_class,) = by_type[NODE_CLASS]
    assert node_class.inputs["spec"]["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.42.0"}]
    assert node_class.inputs["spec"]["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"  # Bottlerocket's data volume
    # The existing private subnets get the discovery tag Karpenter selects them by (and nothing else of theirs changes).
    tags = {t.inputs["resourceId"]: t.inputs["key"] for t in by_type["aws:ec2/tag:Tag"] if str(t.inputs.get("resourceId", "")).startswith("subnet-")}
    assert tags == {"subnet-0123456789abcdef0": "karpenter.sh/discovery", "subnet-0123456789abcdef1": "karpenter.sh/discovery"}
    for template in by_type["aws:ec2/launchTemplate:LaunchTemplate"]:  # the system nodes'
        assert template.inputs["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"  # Bottlerocket's image volume
    entries = {e.name: e.inputs["principalArn"] for e in by_type["aws:eks/accessEntry:AccessEntry"] if e.inputs["type"] == "STANDARD"}
    assert entries == {"tf-aws-eks-admin-0": "arn:aws:iam::123456789012:role/platform-admin", "tf-aws-eks-deployer": DEPLOYER}
    associations = by_type["aws:eks/accessPolicyAssociation:AccessPolicyAssociation"]
    assert len(associations) == 2 and all(a.inputs["policyArn"].endswith("AmazonEKSClusterAdminPolicy") for a in associations)


DEPLOYER = "arn:aws:iam::123456789012:role/deployer"  # the offline plan deploys as assumed-role/deployer


def test_no_admin_outside_the_stack_the_deployer_gets_the_stacks_own_entry():
    """EKS makes no admin of its own (bootstrap off): the deployer's cluster-admin is the stack's `deployer` entry,
    a listed copy and a listed duplicate get no second one, the cluster records its creator for later runs, and the
    Kubernetes provider (which authenticates as the deployer) waits for that entry."""
    ops = "arn:aws:iam::123456789012:role/ops"
    by_type, outputs = run("dev", cluster={"kubernetesVersion": "1.35", "adminPrincipals": [DEPLOYER, ops, ops]})
    entries = {e.name: e.inputs["principalArn"] for e in by_type["aws:eks/accessEntry:AccessEntry"] if e.inputs["type"] == "STANDARD"}
    assert entries == {"tf-aws-eks-admin-1": ops, "tf-aws-eks-deployer": DEPLOYER}  # named by place, as before
    associations = {a.name: a.inputs["policyArn"] for a in by_type["aws:eks/accessPolicyAssociation:AccessPolicyAssociation"]}
    assert set(associations) == set(entries) and all(p.endswith("/AmazonEKSClusterAdminPolicy") for p in associations.values())
    (cluster,) = by_type["aws:eks/cluster:Cluster"]
    assert cluster.inputs["tags"]["tritonfleet.io/created-by"] == DEPLOYER
    assert cluster.inputs["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}
    assert cluster.inputs["upgradePolicy"] == {"supportType": "STANDARD"}  # dev: no extended-support fee
    assert outputs["clusterAdmins"] == sorted([ops, DEPLOYER]) and "eksBootstrapAdmin" not in outputs


def test_the_kubernetes_provider_and_the_cluster_flag_in_the_plan(stock_plan):
    """Nothing reaches the Kubernetes API before the deployer's entry; a cluster created with EKS's bootstrap admin is
    not replaced by the flag's new value (ignoreChanges), and its kubeconfig is a secret, as on GCP."""
    resources = stock_plan("prod")["resources"]
    (provider,) = [r for r in resources if r["type"] == "pulumi:providers:kubernetes"]
    assert any(urn.endswith("AccessPolicyAssociation::tf-aws-eks-deployer") for urn in provider["dependsOn"])
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    (cluster,) = [r for r in resources if r["type"] == "aws:eks/cluster:Cluster"]
    assert cluster["ignoreChanges"] == ["accessConfig.bootstrapClusterCreatorAdminPermissions"]


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


def test_triton_releases_wait_for_the_gpu_node_pools():
    by_type, _ = run("prod")
    node_pools = {r.urn for r in by_type[NODE_POOL]}
    tritons = [r for r in by_type["kubernetes:helm.sh/v3:Release"] if r.name.startswith("tf-triton-")]
    assert tritons and all(node_pools <= set(r.depends_on) for r in tritons)
