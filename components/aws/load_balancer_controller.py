"""The AWS Load Balancer Controller: what turns a Triton Service of exposure `internal` into an internal NLB and a
`public` Ingress into an ALB (the annotations it reads come from tritonfleet/clouds/aws/exposure.py). Installed only when a
deployment asks for either; its IRSA role carries AWS's published policy for the pinned version, unmodified.

It runs on the system nodes, whose IMDS (hop limit 1) pods cannot reach, so the region and VPC id are chart values
rather than something the controller looks up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.cluster import irsa_role
from components.k8s.values import pinned_chart
from tritonfleet.clouds.aws.layout import SYSTEM_ROLE_LABEL
from tritonfleet.core import pins
from tritonfleet.core.config import StackConfig

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "aws-load-balancer-controller"
EXPOSURES = ("internal", "public")
# Subnet tags the controller discovers subnets by: internal load balancers in private subnets, internet-facing ones in
# public subnets (https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/subnet_discovery/).
INTERNAL_SUBNET_TAG = {"kubernetes.io/role/internal-elb": "1"}
PUBLIC_SUBNET_TAG = {"kubernetes.io/role/elb": "1"}


def needs_load_balancer_controller(config: StackConfig) -> bool:
    """Only a deployment exposed `internal` or `public` needs AWS load balancers."""
    return any(d.access.exposure in EXPOSURES for d in config.triton_deployments)


def published_policy() -> dict[str, Any]:
    """The controller's IAM policy as AWS publishes it for the pinned version (docs/install/iam_policy.json)."""
    name = f"aws-load-balancer-controller-v{pins.AWS_LOAD_BALANCER_CONTROLLER_CHART['version']}-iam-policy.json"
    return json.loads(resources.files("tritonfleet.clouds.aws").joinpath("data", name).read_text())


def controller_values(cluster_name: str, region: str, vpc_id: Any, role_arn: Any) -> dict[str, Any]:
    """Chart values: IRSA, the cluster, and the region and VPC given explicitly (no IMDS look-up), on the system nodes.

    `vpc_id` and `role_arn` are placed as given (strings, or the program's not-yet-known outputs)."""
    return {
        "clusterName": cluster_name,
        "region": region,
        "vpcId": vpc_id,
        "serviceAccount": {
            "create": True,
            "name": SERVICE_ACCOUNT,
            "annotations": {"eks.amazonaws.com/role-arn": role_arn},
        },
        "nodeSelector": SYSTEM_ROLE_LABEL,
    }


@dataclass(frozen=True)
class LoadBalancerControllerArgs:
    """The cluster the controller serves and how its role is trusted."""

    cluster_name: str
    """The EKS cluster's name."""
    region: str
    """The AWS region (a chart value: the controller cannot read it from IMDS)."""
    vpc_id: pulumi.Input[str]
    """The cluster's VPC (a chart value, for the same reason)."""
    oidc_provider_arn: pulumi.Input[str]
    """The cluster's IAM OIDC provider, which the role trusts."""
    issuer_url: pulumi.Input[str]
    """The cluster's OIDC issuer."""
    provider: k8s.Provider
    """The cluster's Kubernetes provider, for the Helm release."""
    tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags, on the role and policy."""


class LoadBalancerController(pulumi.ComponentResource):
    """The controller's IRSA role with AWS's published policy, and its pinned Helm release."""

    role: aws.iam.Role
    """The controller's IRSA role."""
    release: k8s.helm.v3.Release
    """The controller's Helm release: Triton releases wait for it (its webhook admits their Services)."""

    def __init__(
        self,
        name: str,
        args: LoadBalancerControllerArgs,
        opts: pulumi.ResourceOptions | None = None,
        depends_on: list[pulumi.Resource] | None = None,
    ):
        super().__init__("tritonfleet:aws:LoadBalancerController", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        chart = pins.AWS_LOAD_BALANCER_CONTROLLER_CHART
        self.role = irsa_role(
            f"{name}-role",
            oidc_provider_arn=args.oidc_provider_arn,
            issuer_url=args.issuer_url,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            tags=args.tags,
            opts=child,
        )
        policy = aws.iam.Policy(
            f"{name}-policy",
            description=f"AWS Load Balancer Controller {chart['version']}: the policy its project publishes",
            policy=json.dumps(published_policy()),
            tags=args.tags,
            opts=child,
        )
        attachment = aws.iam.RolePolicyAttachment(f"{name}-policy", role=self.role.name, policy_arn=policy.arn, opts=child)
        self.release = k8s.helm.v3.Release(
            name,
            name="aws-load-balancer-controller",
            **pinned_chart(chart),
            namespace=NAMESPACE,
            # The role ARN resolves only once the policy is attached: the controller never starts without it.
            values=controller_values(
                args.cluster_name,
                args.region,
                args.vpc_id,
                pulumi.Output.all(self.role.arn, attachment.id).apply(lambda ids: ids[0]),
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=depends_on or []),
        )
        self.register_outputs({"role_arn": self.role.arn, "status": self.release.status})
