"""The Karpenter controller, installed as AWS documents it
(https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/, and its CloudFormation for 1.14.1):
the node role with an EC2_LINUX access entry, the controller's role on EKS Pod Identity with the published
least-privilege policies, the interruption queue fed by EventBridge, and the pinned Helm release on the system nodes.

NodePools and EC2NodeClasses are not made here: they name `node_role` and wait for `release`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.k8s.values import pinned_chart
from tritonfleet.clouds.aws.iam_policies import service_trust_policy
from tritonfleet.clouds.aws.karpenter_iam import (
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
from tritonfleet.clouds.aws.karpenter_values import (
    CRD_RELEASE_NAME,
    NAMESPACE,
    RELEASE_NAME,
    SERVICE_ACCOUNT,
    karpenter_values,
)
from tritonfleet.core import pins


@dataclass(frozen=True)
class KarpenterControllerArgs:
    """The cluster Karpenter provisions nodes for, and where its controller runs."""

    cluster: aws.eks.Cluster
    """The EKS cluster; its ARN gives the partition, region and account the policies are scoped to."""
    cluster_name: str
    """The cluster's name (settings.clusterName; the interruption queue's name)."""
    region: str
    """The stack's AWS region (the controller's AWS_REGION)."""
    system_node_count: int
    """Nodes of the system node group the controller runs on (caps its replicas)."""
    cni_on_node_role: bool
    """The VPC CNI add-on runs on the node's identity, so the node role carries AmazonEKS_CNI_Policy."""
    provider: k8s.Provider
    """The cluster's Kubernetes provider, for the Helm release."""
    tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags, on every AWS resource that takes tags."""


class KarpenterController(pulumi.ComponentResource):
    """Karpenter's controller with its identities and interruption handling; GPU capacity comes from its NodePools."""

    node_role: aws.iam.Role
    """The role of the nodes Karpenter launches (an EC2NodeClass's spec.role is its name)."""
    controller_role: aws.iam.Role
    """The controller's role, assumed through EKS Pod Identity."""
    interruption_queue: aws.sqs.Queue
    """The SQS queue of interruption events (settings.interruptionQueue is its name)."""
    release: k8s.helm.v3.Release
    """The controller's Helm release (CRDs included): NodePools and EC2NodeClasses depend on it."""

    def __init__(
        self,
        name: str,
        args: KarpenterControllerArgs,
        opts: pulumi.ResourceOptions | None = None,
        depends_on: list[pulumi.Resource] | None = None,
    ):
        super().__init__("tritonfleet:aws:KarpenterController", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cluster, tags = args.cluster, args.tags
        scope = cluster.arn.apply(ClusterScope.from_cluster_arn)

        self.node_role = aws.iam.Role(
            f"{name}-node-role",
            description=f"Nodes Karpenter launches for EKS cluster {args.cluster_name}",
            assume_role_policy=service_trust_policy("ec2.amazonaws.com"),
            tags=tags,
            opts=child,
        )
        node_policies = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{policy}",
                role=self.node_role.name,
                policy_arn=scope.apply(lambda s, p=policy: managed_policy_arn(s.partition, p)),
                opts=child,
            )
            for policy in node_role_policies(args.cni_on_node_role)
        ]
        # EC2_LINUX: EKS maps the role to system:node:{{EC2PrivateDNSName}} in system:nodes, so its nodes can join.
        node_access = aws.eks.AccessEntry(
            f"{name}-node-access",
            cluster_name=cluster.name,
            principal_arn=self.node_role.arn,
            type="EC2_LINUX",
            tags=tags,
            opts=child,
        )

        self.interruption_queue = aws.sqs.Queue(
            f"{name}-interruption",
            name=interruption_queue_name(args.cluster_name),
            message_retention_seconds=MESSAGE_RETENTION_SECONDS,
            sqs_managed_sse_enabled=True,
            tags=tags,
            opts=child,
        )
        queue = self.interruption_queue
        queue_policy = aws.sqs.QueuePolicy(
            f"{name}-interruption",
            queue_url=queue.id,  # an SQS queue's id is its URL
            policy=queue.arn.apply(lambda arn: json.dumps(interruption_queue_policy(arn))),
            opts=child,
        )
        targets = []
        for slug, (_, pattern) in INTERRUPTION_RULES.items():
            rule = aws.cloudwatch.EventRule(
                f"{name}-{slug}",
                description=f"Karpenter interruption handling for {args.cluster_name}: {pattern['detail-type'][0]}",
                event_pattern=json.dumps(pattern),
                tags=tags,
                opts=child,
            )
            targets.append(
                aws.cloudwatch.EventTarget(f"{name}-{slug}", rule=rule.name, arn=queue.arn, target_id=TARGET_ID, opts=child)
            )

        self.controller_role = aws.iam.Role(
            f"{name}-controller",
            description=f"Karpenter controller of EKS cluster {args.cluster_name} (EKS Pod Identity)",
            assume_role_policy=json.dumps(pod_identity_trust_policy()),
            tags=tags,
            opts=child,
        )
        documents = pulumi.Output.all(scope, self.node_role.arn, queue.arn).apply(
            lambda resolved: {key: json.dumps(doc) for key, doc in controller_policies(*resolved).items()}
        )
        attachments = []
        for key in CONTROLLER_POLICIES:
            policy = aws.iam.Policy(
                f"{name}-{key}",
                description=f"Karpenter controller of {args.cluster_name}: {key} (AWS's Karpenter 1.14.1 CloudFormation)",
                policy=documents.apply(lambda docs, k=key: docs[k]),
                tags=tags,
                opts=child,
            )
            attachments.append(
                aws.iam.RolePolicyAttachment(f"{name}-{key}", role=self.controller_role.name, policy_arn=policy.arn, opts=child)
            )
        identity = aws.eks.PodIdentityAssociation(
            f"{name}-identity",
            cluster_name=cluster.name,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            role_arn=self.controller_role.arn,
            tags=tags,
            opts=child,
        )

        # The CRDs first, as their own release (pins.KARPENTER_CRD_CHART): Helm upgrades them with the version pin,
        # where the controller chart's crds/ folder is installed once and never upgraded.
        self.crd_release = k8s.helm.v3.Release(
            f"{name}-crd",
            name=CRD_RELEASE_NAME,
            **pinned_chart(pins.KARPENTER_CRD_CHART),
            namespace=NAMESPACE,
            values={},  # the chart has none to set
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(depends_on or [])),
        )
        self.release = k8s.helm.v3.Release(
            name,
            name=RELEASE_NAME,
            **pinned_chart(pins.KARPENTER_CHART),
            namespace=NAMESPACE,
            skip_crds=True,  # the karpenter-crd release owns them
            values=karpenter_values(
                args.cluster_name, interruption_queue_name(args.cluster_name), args.region, args.system_node_count
            ),
            # The controller starts with its permissions, its queue fed, and its nodes able to join.
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.provider,
                depends_on=[
                    *(depends_on or []),
                    self.crd_release,
                    identity,
                    *attachments,
                    *node_policies,
                    node_access,
                    queue_policy,
                    *targets,
                ],
            ),
        )
        self.register_outputs(
            {
                "node_role_name": self.node_role.name,
                "controller_role_arn": self.controller_role.arn,
                "interruption_queue": queue.name,
                "status": self.release.status,
            }
        )
