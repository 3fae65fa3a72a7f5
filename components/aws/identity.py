"""Keyless model reads for Triton: one IRSA role per deployment, allowed to read only its own bucket prefix.

IRSA rather than EKS Pod Identity: Triton's aws-sdk-cpp (1.11.60) predates Pod Identity support (needs >= 1.11.263),
see shared/reference/gpu-kubernetes-facts.md section 2.7 and trap 10.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.aws.cluster import irsa_role
from components.aws.policies import model_read_policy
from tritonfleet.core import conventions
from tritonfleet.core.config import StackConfig, TritonDeployment

ROLE_ARN_ANNOTATION = "eks.amazonaws.com/role-arn"


def triton_service_account(deployment: TritonDeployment) -> tuple[str, str]:
    """(namespace, name) of the ServiceAccount a Triton deployment runs as (the chart names it after the release)."""
    return deployment.namespace, conventions.triton_service_account(deployment.name)


class TritonIdentities(pulumi.ComponentResource):
    """A role and its read policy per deployment (two resources each: plans with many deployments stay fast)."""

    def __init__(
        self,
        name: str,
        config: StackConfig,
        bucket_arns: dict[str, pulumi.Input[str]],
        oidc_provider_arn: pulumi.Input[str],
        issuer_url: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:aws:TritonIdentities", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.role_arns: dict[str, pulumi.Output[str]] = {}
        self.annotations: dict[str, dict[str, pulumi.Input[str]]] = {}
        for deployment in config.triton_deployments:
            namespace, service_account = triton_service_account(deployment)
            role = irsa_role(
                f"{name}-{deployment.name}", oidc_provider_arn, issuer_url, namespace, service_account, config.tags, child
            )
            bucket = config.bucket_for(deployment)
            read = aws.iam.RolePolicy(
                f"{name}-{deployment.name}-read",
                role=role.id,
                policy=pulumi.Output.from_input(bucket_arns[bucket.name]).apply(
                    lambda arn, prefix=deployment.model_prefix, key=bucket.kms_key_id: model_read_policy(
                        arn, prefix, key, config.region
                    )
                ),
                opts=child,
            )
            self.role_arns[deployment.name] = role.arn
            # The annotation resolves only once the read policy is attached, so Triton (which takes it) never starts
            # with a role that cannot read its bucket yet.
            self.annotations[deployment.name] = {
                ROLE_ARN_ANNOTATION: pulumi.Output.all(role.arn, read.id).apply(lambda args: args[0])
            }
        self.register_outputs({"role_arns": self.role_arns})
