"""Keyless model reads for Triton: one IRSA role per deployment, allowed to read only its own bucket prefix.

IRSA rather than EKS Pod Identity: Triton's aws-sdk-cpp (1.11.60) predates Pod Identity support (needs >= 1.11.263),
see shared/reference/gpu-kubernetes-facts.md section 2.7 and trap 10.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.aws.cluster import irsa_role
from components.contract import IdentityRequest, after_grants
from tritonfleet.clouds.aws.iam_policies import model_read_policy

ROLE_ARN_ANNOTATION = "eks.amazonaws.com/role-arn"


@dataclass(frozen=True)
class TritonIdentitiesArgs:
    """Who reads what: one request per Triton deployment, and the cluster's IRSA trust."""

    requests: list[IdentityRequest]
    """One per Triton deployment (`contract.identity_requests`)."""
    bucket_arns: dict[str, pulumi.Input[str]]
    """configured bucket name -> bucket ARN."""
    oidc_provider_arn: pulumi.Input[str]
    """The cluster's IAM OIDC provider, which every role trusts."""
    issuer_url: pulumi.Input[str]
    """The cluster's OIDC issuer."""
    region: str
    """The AWS region: reads through a KMS key are allowed only via S3 in this region."""
    tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags, on every role."""


class TritonIdentities(pulumi.ComponentResource):
    """A role and its read policy per deployment (two resources each: plans with many deployments stay fast)."""

    role_arns: dict[str, pulumi.Output[str]]
    """deployment name -> its role's ARN."""
    annotations: dict[str, dict[str, pulumi.Input[str]]]
    """deployment name -> its ServiceAccount's annotations (the role ARN, once the read policy is attached)."""

    def __init__(self, name: str, args: TritonIdentitiesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:TritonIdentities", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.role_arns = {}
        self.annotations = {}
        for request in args.requests:
            role = irsa_role(
                f"{name}-{request.deployment}",
                args.oidc_provider_arn,
                args.issuer_url,
                request.namespace,
                request.service_account,
                args.tags,
                child,
            )
            read = aws.iam.RolePolicy(
                f"{name}-{request.deployment}-read",
                role=role.id,
                policy=pulumi.Output.from_input(args.bucket_arns[request.bucket]).apply(
                    lambda arn, prefix=request.model_prefix, key=request.kms_key: model_read_policy(arn, prefix, key, args.region)
                ),
                opts=child,
            )
            self.role_arns[request.deployment] = role.arn
            self.annotations[request.deployment] = {ROLE_ARN_ANNOTATION: after_grants(role.arn, [read])}
        self.register_outputs({"role_arns": self.role_arns})
