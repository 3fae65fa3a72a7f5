"""cluster-autoscaler for the managed node groups: its IRSA role and a pinned Helm release with the priority expander."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.cluster import irsa_role
from components.aws.layout import cluster_autoscaler_values
from components.aws.policies import cluster_autoscaler_policy
from tritonfleet.core import pins

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"


@dataclass(frozen=True)
class ClusterAutoscalerArgs:
    """The cluster the autoscaler scales, and how its role is trusted."""

    region: str
    """The AWS region (the autoscaler's API endpoint)."""
    cluster_name: str
    """The EKS cluster's name, which auto-discovery matches node groups by."""
    kubernetes_version: str
    """The cluster's Kubernetes minor version: the autoscaler image follows it (`pins.CLUSTER_AUTOSCALER_IMAGE`)."""
    cluster: aws.eks.Cluster
    """The EKS cluster; its name and ARN scope the role's policy."""
    oidc_provider_arn: pulumi.Input[str]
    """The cluster's IAM OIDC provider, which the role trusts."""
    issuer_url: pulumi.Input[str]
    """The cluster's OIDC issuer."""
    provider: k8s.Provider
    """The cluster's Kubernetes provider, for the Helm release."""
    tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags, on the role."""


class ClusterAutoscaler(pulumi.ComponentResource):
    """cluster-autoscaler with the permissions to resize this cluster's node groups and nothing else."""

    role: aws.iam.Role
    """The autoscaler's IRSA role."""
    release: k8s.helm.v3.Release
    """The cluster-autoscaler Helm release."""

    def __init__(
        self,
        name: str,
        args: ClusterAutoscalerArgs,
        opts: pulumi.ResourceOptions | None = None,
        depends_on: list[pulumi.Resource] | None = None,
    ):
        super().__init__("tritonfleet:aws:ClusterAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cluster = args.cluster
        self.role = irsa_role(
            f"{name}-role",
            oidc_provider_arn=args.oidc_provider_arn,
            issuer_url=args.issuer_url,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            tags=args.tags,
            opts=child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=pulumi.Output.all(cluster.name, cluster.arn).apply(
                lambda names: cluster_autoscaler_policy(names[0], names[1])
            ),
            opts=child,
        )
        chart = pins.CLUSTER_AUTOSCALER_CHART
        self.release = k8s.helm.v3.Release(
            name,
            name="cluster-autoscaler",
            chart=chart["chart"],
            version=chart["version"],
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart["repo"]),
            namespace=NAMESPACE,
            # The role ARN is the values' only output (the rest stays known in a first preview), and it resolves only
            # once the role's policy is attached, so the autoscaler never starts without its permissions.
            values=cluster_autoscaler_values(
                args.region,
                args.cluster_name,
                args.kubernetes_version,
                pulumi.Output.all(self.role.arn, policy.id).apply(lambda ids: ids[0]),
                SERVICE_ACCOUNT,
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=depends_on or []),
        )
        self.register_outputs({"role_arn": self.role.arn, "status": self.release.status})
