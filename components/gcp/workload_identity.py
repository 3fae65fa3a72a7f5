"""Triton's Workload Identity on GKE, built from what identity.py decides: per deployment, its Kubernetes
ServiceAccount's own principal reads only its bucket. Builders are functions whose resources are children of the GCP
adapter."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.contract import IdentityRequest, TritonIdentity, after_grants
from tritonfleet.clouds.gcp.identity import PRINCIPAL_ANNOTATION, TRITON_BUCKET_ROLES, workload_identity_principal


@dataclass(frozen=True)
class TritonIdentityArgs:
    """One deployment's read access, and where it lives."""

    request: IdentityRequest
    """Which ServiceAccount reads which bucket (`contract.identity_requests`)."""
    bucket_name: pulumi.Input[str]
    """The GCS bucket's name."""
    project: str | None
    """The GCP project of the cluster's workload pool."""
    project_number: pulumi.Input[str]
    """That project's number (principal identifiers name it)."""
    cluster: pulumi.Resource
    """The cluster: the <project>.svc.id.goog pool exists only once a cluster with Workload Identity does."""


def create_triton_identity(name: str, args: TritonIdentityArgs, opts: pulumi.ResourceOptions) -> TritonIdentity:
    """The bucket roles of the ServiceAccount's principal; the annotation resolves once they exist."""
    request = args.request
    prefix = f"{name}-triton-{request.deployment}"
    principal = pulumi.Output.from_input(args.project_number).apply(
        lambda number: workload_identity_principal(number, args.project or "", request.namespace, request.service_account)
    )
    after_cluster = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[args.cluster]))
    grants: list[pulumi.CustomResource] = [
        gcp.storage.BucketIAMMember(
            f"{prefix}-{role.rsplit('.', 1)[-1]}", bucket=args.bucket_name, role=role, member=principal, opts=after_cluster
        )
        for role in TRITON_BUCKET_ROLES
    ]
    return TritonIdentity(
        annotations={PRINCIPAL_ANNOTATION: after_grants(principal, grants)},
        export={
            "kubernetesServiceAccount": f"{request.namespace}/{request.service_account}",
            "principal": principal,
            "bucket": args.bucket_name,
            "roles": list(TRITON_BUCKET_ROLES),
        },
    )
