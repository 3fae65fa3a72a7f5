"""cluster-autoscaler for the managed node groups: its IRSA role and a pinned Helm release with the priority expander."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.cluster import irsa_role
from components.aws.layout import cluster_autoscaler_values
from components.aws.policies import cluster_autoscaler_policy
from tritonfleet.core import pins
from tritonfleet.core.config import StackConfig

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"


class ClusterAutoscaler(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        config: StackConfig,
        cluster: aws.eks.Cluster,
        oidc_provider_arn: pulumi.Input[str],
        issuer_url: pulumi.Input[str],
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
        depends_on: list[pulumi.Resource] | None = None,
    ):
        super().__init__("tritonfleet:aws:ClusterAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.role = irsa_role(
            f"{name}-role",
            oidc_provider_arn=oidc_provider_arn,
            issuer_url=issuer_url,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            tags=config.tags,
            opts=child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=pulumi.Output.all(cluster.name, cluster.arn).apply(lambda args: cluster_autoscaler_policy(args[0], args[1])),
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
                config, pulumi.Output.all(self.role.arn, policy.id).apply(lambda args: args[0]), SERVICE_ACCOUNT
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=depends_on or []),
        )
        self.register_outputs({"role_arn": self.role.arn})
