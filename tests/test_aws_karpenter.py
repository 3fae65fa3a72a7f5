"""The Karpenter controller against what AWS publishes for the pinned Karpenter 1.14.1: the getting-started
CloudFormation (controller policies, node role, interruption queue and rules) and the chart's values.yaml, both
vendored in tests/upstream/karpenter-1.14.1/; moto where it implements the calls; and the plan of the real program."""

from __future__ import annotations

import json
import re
from typing import Any

import boto3
import pytest
import yaml
from moto import mock_aws

from components.aws.cluster import NODE_POLICIES
from tests.conftest import UPSTREAM_CHARTS
from tests.serving_helpers import missing_keys
from tests.test_aws_program import run
from tritonfleet.clouds.aws.karpenter_iam import (
    CNI_POLICY,
    CONTROLLER_POLICIES,
    ClusterScope,
    controller_policies,
    managed_policy_arn,
    node_role_policies,
    pod_identity_trust_policy,
)
from tritonfleet.clouds.aws.karpenter_interruption import (
    INTERRUPTION_RULES,
    MESSAGE_RETENTION_SECONDS,
    TARGET_ID,
    interruption_queue_name,
    interruption_queue_policy,
)
from tritonfleet.clouds.aws.karpenter_values import NAMESPACE, SERVICE_ACCOUNT, controller_replicas, karpenter_values
from tritonfleet.clouds.aws.layout import SYSTEM_ROLE_LABEL
from tritonfleet.core import pins

KARPENTER = UPSTREAM_CHARTS / "karpenter-1.14.1"
SCOPE = ClusterScope(partition="aws", region="eu-west-1", account="123456789012", cluster_name="tf-prod")
NODE_ROLE_ARN = "arn:aws:iam::123456789012:role/tf-aws-karpenter-node-role"
QUEUE_ARN = "arn:aws:sqs:eu-west-1:123456789012:tf-prod"


class _CfnLoader(yaml.SafeLoader):
    """Reads CloudFormation's short-form intrinsics (!Sub, !GetAtt, !Ref) as {"Sub": value} and so on."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        return {suffix: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {suffix: loader.construct_sequence(node, deep=True)}
    return {suffix: loader.construct_mapping(node, deep=True)}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def cfn_resources() -> dict[str, dict]:
    return yaml.load((KARPENTER / "getting-started-cloudformation.yaml").read_text(), Loader=_CfnLoader)["Resources"]


def substitutions(scope: ClusterScope) -> dict[str, str]:
    return {
        "AWS::Partition": scope.partition,
        "AWS::Region": scope.region,
        "AWS::AccountId": scope.account,
        "AWS::URLSuffix": "amazonaws.com",
        "ClusterName": scope.cluster_name,
        "KarpenterNodeRole.Arn": NODE_ROLE_ARN,
        "KarpenterInterruptionQueue.Arn": QUEUE_ARN,
    }


def cfn_sub(text: str, scope: ClusterScope = SCOPE) -> str:
    """Fn::Sub with our values; a placeholder we do not know fails the test (the template grew a parameter)."""
    known = substitutions(scope)
    return re.sub(r"\$\{([^}!]+)\}", lambda m: known[m.group(1)], text)


def resolve(value: Any) -> Any:
    """The template's values with intrinsics resolved: !Sub substituted, !GetAtt/!Ref of the queue to its ARN."""
    if isinstance(value, dict):
        if set(value) == {"Sub"}:
            return cfn_sub(value["Sub"])
        if value in ({"GetAtt": "KarpenterInterruptionQueue.Arn"}, {"Ref": "KarpenterInterruptionQueue"}):
            return QUEUE_ARN
        return {key: resolve(item) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item) for item in value]
    if isinstance(value, bool):  # YAML booleans become IAM's string booleans
        return str(value).lower()
    return value


# --- IAM ------------------------------------------------------------------------------------------------------------


def test_the_cfn_loader_tolerates_intrinsics_and_every_placeholder_is_known():
    resources = cfn_resources()
    assert resources["KarpenterInterruptionQueue"]["Properties"]["QueueName"] == {"Sub": "${ClusterName}"}
    for logical_id in CONTROLLER_POLICIES:
        json.loads(cfn_sub(resources[logical_id]["Properties"]["PolicyDocument"]["Sub"]))


def test_controller_policies_are_the_published_statements():
    resources = cfn_resources()
    published = {k: r for k, r in resources.items() if r["Type"] == "AWS::IAM::ManagedPolicy"}
    ours = controller_policies(SCOPE, NODE_ROLE_ARN, QUEUE_ARN)
    assert set(published) == set(ours) == set(CONTROLLER_POLICIES), "the template's policy set changed: follow it"
    for logical_id, resource in published.items():
        document = json.loads(cfn_sub(resource["Properties"]["PolicyDocument"]["Sub"]))
        assert ours[logical_id] == document, logical_id


def test_controller_policies_follow_the_cluster_they_are_given():
    other = ClusterScope.from_cluster_arn("arn:aws-us-gov:eks:us-gov-west-1:210987654321:cluster/edge-1")
    assert (other.partition, other.region, other.account, other.cluster_name) == (
        "aws-us-gov",
        "us-gov-west-1",
        "210987654321",
        "edge-1",
    )
    text = json.dumps(
        controller_policies(other, "arn:aws-us-gov:iam::210987654321:role/n", "arn:aws-us-gov:sqs:us-gov-west-1:210987654321:q")
    )
    assert "kubernetes.io/cluster/edge-1" in text and "arn:aws-us-gov:eks:us-gov-west-1:210987654321:cluster/edge-1" in text
    assert "tf-prod" not in text and "123456789012:instance-profile" not in text


@pytest.mark.parametrize("arn", ["", "arn:aws:iam::123456789012:role/x", "arn:aws:eks:us-east-1:123456789012:nodegroup/a/b"])
def test_a_non_cluster_arn_is_refused(arn):
    with pytest.raises(ValueError, match="not an EKS cluster ARN"):
        ClusterScope.from_cluster_arn(arn)


def test_node_role_has_the_published_policies_and_the_cni_only_without_its_own_identity():
    role = cfn_resources()["KarpenterNodeRole"]["Properties"]
    published = {cfn_sub(arn["Sub"]) for arn in role["ManagedPolicyArns"]}
    assert {managed_policy_arn("aws", name) for name in node_role_policies(cni_on_node_role=True)} == published
    without_cni = {managed_policy_arn("aws", name) for name in node_role_policies(cni_on_node_role=False)}
    assert without_cni == published - {managed_policy_arn("aws", CNI_POLICY)}
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert cfn_sub(trust["Principal"]["Service"]["Sub"]) == "ec2.amazonaws.com"  # our node role's trust


def test_the_controller_is_trusted_through_pod_identity_only():
    (statement,) = pod_identity_trust_policy()["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]


# --- interruption queue -----------------------------------------------------------------------------------------------


def test_queue_is_the_published_one():
    queue = cfn_resources()["KarpenterInterruptionQueue"]["Properties"]
    assert queue["MessageRetentionPeriod"] == MESSAGE_RETENTION_SECONDS == 300
    assert queue["SqsManagedSseEnabled"] is True
    assert interruption_queue_name("tf-prod") == cfn_sub(queue["QueueName"]["Sub"])
    published = resolve(cfn_resources()["KarpenterInterruptionQueuePolicy"]["Properties"]["PolicyDocument"])
    ours = interruption_queue_policy(QUEUE_ARN)
    assert ours["Id"] == published["Id"] and ours["Statement"] == published["Statement"]


def test_rules_are_the_published_event_patterns_targeting_the_queue():
    published = {k: r["Properties"] for k, r in cfn_resources().items() if r["Type"] == "AWS::Events::Rule"}
    ours = {logical_id: pattern for logical_id, pattern in INTERRUPTION_RULES.values()}
    assert set(ours) == set(published)
    for logical_id, rule in published.items():
        assert ours[logical_id] == rule["EventPattern"], logical_id
        (target,) = rule["Targets"]
        assert target["Id"] == TARGET_ID
        assert resolve(target["Arn"]) == QUEUE_ARN


@mock_aws
def test_moto_creates_the_queue_rules_targets_and_policies():
    region = "us-east-1"
    sqs = boto3.client("sqs", region_name=region)
    url = sqs.create_queue(
        QueueName=interruption_queue_name("tf-prod"),
        Attributes={"MessageRetentionPeriod": str(MESSAGE_RETENTION_SECONDS), "SqsManagedSseEnabled": "true"},
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(interruption_queue_policy(arn))})
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["MessageRetentionPeriod"] == "300" and attributes["SqsManagedSseEnabled"] == "true"
    assert json.loads(attributes["Policy"])["Statement"][0]["Resource"] == arn

    events = boto3.client("events", region_name=region)
    for slug, (_, pattern) in INTERRUPTION_RULES.items():
        events.put_rule(Name=f"tf-prod-{slug}", EventPattern=json.dumps(pattern))
        events.put_targets(Rule=f"tf-prod-{slug}", Targets=[{"Id": TARGET_ID, "Arn": arn}])
        (target,) = events.list_targets_by_rule(Rule=f"tf-prod-{slug}")["Targets"]
        assert target["Arn"] == arn
    # moto delivers matching events to SQS targets (it has no TestEventPattern): each published kind arrives once,
    # an event of another kind not at all
    sent = [(pattern["source"][0], pattern["detail-type"][0]) for _, pattern in INTERRUPTION_RULES.values()]
    entries = [
        {"Source": source, "DetailType": kind, "Detail": "{}"} for source, kind in [*sent, ("aws.ec2", "EC2 AMI State Change")]
    ]
    events.put_events(Entries=entries)
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert sorted((m["source"], m["detail-type"]) for m in map(lambda m: json.loads(m["Body"]), received)) == sorted(sent)

    iam = boto3.client("iam", region_name=region)
    role = iam.create_role(RoleName="karpenter", AssumeRolePolicyDocument=json.dumps(pod_identity_trust_policy()))["Role"]
    scope = ClusterScope.from_cluster_arn("arn:aws:eks:us-east-1:123456789012:cluster/tf-prod")
    for name, document in controller_policies(scope, role["Arn"], arn).items():
        policy = iam.create_policy(PolicyName=name, PolicyDocument=json.dumps(document))["Policy"]
        iam.attach_role_policy(RoleName="karpenter", PolicyArn=policy["Arn"])
    assert len(iam.list_attached_role_policies(RoleName="karpenter")["AttachedPolicies"]) == len(CONTROLLER_POLICIES)


# --- Helm values ------------------------------------------------------------------------------------------------------


def chart_values() -> dict:
    return yaml.safe_load((KARPENTER / "values.yaml").read_text())


def test_every_value_we_set_exists_in_the_pinned_chart():
    values = karpenter_values("tf-prod", "tf-prod", "us-east-1", 3)
    assert missing_keys(values, chart_values()) == []
    assert values["settings"] == {
        "clusterName": "tf-prod", "interruptionQueue": "tf-prod", "featureGates": {"nodeRepair": False}
    }
    assert values["serviceAccount"]["name"] == SERVICE_ACCOUNT
    assert {"name": "AWS_REGION", "value": "us-east-1"} in values["controller"]["env"]


def test_a_misspelt_key_would_be_caught():
    assert missing_keys({"settings": {"interruptionQueueName": "q"}}, chart_values()) == ["settings.interruptionQueueName"]


def test_the_pin_is_the_vendored_chart():
    chart = yaml.safe_load((KARPENTER / "Chart.yaml").read_text())
    assert pins.KARPENTER_CHART["version"] == chart["version"] == chart["appVersion"]
    assert pins.KARPENTER_CHART["chart"] == f"oci://public.ecr.aws/karpenter/{chart['name']}"


def test_the_controller_runs_only_on_system_nodes_never_on_karpenter_nodes():
    values = karpenter_values("c", "c", "us-east-1", 2)
    (term,) = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    expressions = {e["key"]: e for e in term["matchExpressions"]}
    assert expressions["karpenter.sh/nodepool"]["operator"] == "DoesNotExist"
    ((key, value),) = SYSTEM_ROLE_LABEL.items()
    assert expressions[key] == {"key": key, "operator": "In", "values": [value]}
    # our affinity replaces the chart's, so it must keep the chart's own rule and its one-replica-per-node spread
    default = chart_values()["affinity"]
    (default_term,) = default["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert all(e in term["matchExpressions"] for e in default_term["matchExpressions"])
    assert values["affinity"]["podAntiAffinity"] == default["podAntiAffinity"]


@pytest.mark.parametrize(("system_nodes", "replicas"), [(1, 1), (2, 2), (3, 2), (20, 2)])
def test_replicas_fit_the_system_nodes(system_nodes, replicas):
    assert controller_replicas(system_nodes) == replicas


# --- the program's plan ---------------------------------------------------------------------------------------------


def _one(by_type: dict, typ: str, name: str):
    (resource,) = [r for r in by_type[typ] if r.name == name]
    return resource


def test_the_plan_installs_the_controller_after_its_identity_queue_and_node_access():
    by_type, outputs = run("prod")
    (release,) = [r for r in by_type["kubernetes:helm.sh/v3:Release"] if r.inputs["name"] == "karpenter"]
    assert (release.inputs["chart"], release.inputs["version"]) == (pins.KARPENTER_CHART["chart"], "1.14.1")
    assert release.inputs["namespace"] == NAMESPACE
    values = release.inputs["values"]
    assert missing_keys(values, chart_values()) == []
    assert values["settings"] == {
        "clusterName": "tf-prod", "interruptionQueue": "tf-prod", "featureGates": {"nodeRepair": False}
    }
    assert chart_values()["settings"]["featureGates"]["nodeRepair"] is False  # ALPHA in 1.14.1, and forceful
    assert values["replicas"] == 2
    # The CRDs are a release of their own, first, at the controller's version: Helm upgrades them with the pin.
    assert release.inputs["skipCrds"] is True
    (crds,) = [r for r in by_type["kubernetes:helm.sh/v3:Release"] if r.inputs["name"] == "karpenter-crd"]
    assert (crds.inputs["chart"], crds.inputs["version"]) == ("oci://public.ecr.aws/karpenter/karpenter-crd", "1.14.1")
    assert crds.inputs["namespace"] == NAMESPACE and crds.urn in release.depends_on

    (association,) = by_type["aws:eks/podIdentityAssociation:PodIdentityAssociation"]
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == (NAMESPACE, SERVICE_ACCOUNT)
    assert association.inputs["roleArn"] == outputs["karpenterRoleArn"]
    (node_access,) = [e for e in by_type["aws:eks/accessEntry:AccessEntry"] if e.inputs["type"] == "EC2_LINUX"]
    assert node_access.inputs["principalArn"] == "arn:aws:iam::123456789012:role/tf-aws-karpenter-node-role"
    assert outputs["karpenterNodeRoleName"] == "tf-aws-karpenter-node-role"
    queue = _one(by_type, "aws:sqs/queue:Queue", "tf-aws-karpenter-interruption")
    assert queue.inputs["messageRetentionSeconds"] == 300 and queue.inputs["sqsManagedSseEnabled"] is True
    assert outputs["interruptionQueue"] == queue.inputs["name"] == "tf-prod"

    waits_for = set(release.depends_on)
    required = [association, node_access, _one(by_type, "aws:sqs/queuePolicy:QueuePolicy", "tf-aws-karpenter-interruption")]
    required += [
        a for a in by_type["aws:iam/rolePolicyAttachment:RolePolicyAttachment"] if a.name.startswith("tf-aws-karpenter-")
    ]
    required += by_type["aws:cloudwatch/eventTarget:EventTarget"]
    required += by_type["aws:eks/addon:Addon"]  # coredns and the Pod Identity agent among them
    missing = [r.name for r in required if r.urn not in waits_for]
    assert missing == []
    assert "cluster-autoscaler" not in {r.inputs["name"] for r in by_type["kubernetes:helm.sh/v3:Release"]}
    assert "autoscalerRoleArn" not in outputs


def test_the_plans_controller_policies_are_the_published_ones_for_this_cluster():
    by_type, outputs = run("prod")
    (cluster,) = by_type["aws:eks/cluster:Cluster"]
    scope = ClusterScope.from_cluster_arn(f"arn:aws:eks:us-east-1:123456789012:cluster/{cluster.inputs['name']}")
    policies = {
        p.name.removeprefix("tf-aws-karpenter-"): json.loads(p.inputs["policy"]) for p in by_type["aws:iam/policy:Policy"]
    }
    assert set(policies) == set(CONTROLLER_POLICIES)
    (queue_statement,) = policies["InterruptionPolicy"]["Statement"]
    node_role_arn = policies["IAMIntegrationPolicy"]["Statement"][0]["Resource"]
    assert node_role_arn.endswith(":role/tf-aws-karpenter-node-role")
    assert policies == controller_policies(scope, node_role_arn, queue_statement["Resource"])
    assert queue_statement["Resource"].endswith(":tf-aws-karpenter-interruption")
    controller = _one(by_type, "aws:iam/role:Role", "tf-aws-karpenter-controller")
    assert json.loads(controller.inputs["assumeRolePolicy"]) == pod_identity_trust_policy()
    attached = {
        a.inputs["policyArn"]
        for a in by_type["aws:iam/rolePolicyAttachment:RolePolicyAttachment"]
        if a.name.startswith("tf-aws-karpenter-node-")
    }
    # Karpenter's nodes carry the CNI's policy exactly when the cluster's node role does (a CNI without its own identity)
    cni_on_node_role = CNI_POLICY in NODE_POLICIES
    assert attached == {managed_policy_arn("aws", name) for name in node_role_policies(cni_on_node_role)}
    rules = {
        r.name.removeprefix("tf-aws-karpenter-"): json.loads(r.inputs["eventPattern"])
        for r in by_type["aws:cloudwatch/eventRule:EventRule"]
    }
    assert rules == {slug: pattern for slug, (_, pattern) in INTERRUPTION_RULES.items()}


def test_a_kubernetes_version_other_than_1_33_no_longer_crashes_the_program():
    """The cluster-autoscaler image was pinned per Kubernetes minor (a KeyError for any other); Karpenter's is not."""
    by_type, _ = run("dev", cluster={"kubernetesVersion": "1.34", "amiReleaseVersion": "1.34.2-20251201"})
    (cluster,) = by_type["aws:eks/cluster:Cluster"]
    assert cluster.inputs["version"] == "1.34"
    assert [r.inputs["name"] for r in by_type["kubernetes:helm.sh/v3:Release"] if r.inputs["name"] == "karpenter"] == [
        "karpenter"
    ]
