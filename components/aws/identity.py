"""Keyless model reads for Triton: one IRSA role per deployment, allowed to read only its own bucket prefix.

IRSA rather than EKS Pod Identity: Triton's aws-sdk-cpp (1.11.60) predates Pod Identity support (needs >= 1.11.263),
see shared/reference/gpu-kubernetes-facts.md section 2.7 and trap 10.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.aws.cluster import IrsaRole
from components.aws.policies import model_read_policy
from tritonfleet.core.config import StackConfig, TritonDeployment

ROLE_ARN_ANNOTATION = "eks.amazonaws.com/role-arn"


def triton_service_account(deployment: TritonDeployment) -> tuple[str, str]:
    """(namespace, name) of the ServiceAccount a Triton deployment runs as: the deployment's name in its namespace."""
    return deployment.namespace, deployment.name


class TritonIdentity(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        config: StackConfig,
        deployment: TritonDeployment,
        bucket_arn: pulumi.Input[str],
        oidc_provider_arn: pulumi.Input[str],
        issuer_url: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:aws:TritonIdentity", name, None, opts)
        namespace, service_account = triton_service_account(deployment)
        self.role = IrsaRole(
            f"{name}-role",
            oidc_provider_arn=oidc_provider_arn,
            issuer_url=issuer_url,
            namespace=namespace,
            service_account=service_account,
            tags=config.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        kms_key = config.bucket_for(deployment).kms_key_id
        aws.iam.RolePolicy(
            f"{name}-read",
            role=self.role.role.id,
            policy=pulumi.Output.from_input(bucket_arn).apply(
                lambda arn: model_read_policy(arn, deployment.model_prefix, kms_key, config.region)
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.annotations = {ROLE_ARN_ANNOTATION: self.role.arn}
        self.register_outputs({"role_arn": self.role.arn})
