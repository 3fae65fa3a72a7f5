"""Triton's Workload Identity on GKE, built from what identity.py decides: per deployment a Google service account
that only that deployment's Kubernetes ServiceAccount may impersonate, reading only its bucket. Builders are functions
whose resources are children of the GCP adapter."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.contract import IdentityRequest, TritonIdentity, after_grants
from components.gcp.identity import (
    TRITON_BUCKET_ROLES,
    WORKLOAD_IDENTITY_ANNOTATION,
    WORKLOAD_IDENTITY_USER,
    service_account_id,
    workload_identity_member,
)


@dataclass(frozen=True)
class TritonIdentityArgs:
    """One deployment's read access, and where it lives."""

    request: IdentityRequest
    """Which ServiceAccount reads which bucket (`contract.identity_requests`)."""
    bucket_name: pulumi.Input[str]
    """The GCS bucket's name."""
    stack: str
    """The stack's name, part of the Google service account's id."""
    project: str | None
    """The GCP project of the account and of the cluster's workload pool."""
    cluster: pulumi.Resource
    """The cluster: the <project>.svc.id.goog pool exists only once a cluster with Workload Identity does."""


def create_triton_identity(name: str, args: TritonIdentityArgs, opts: pulumi.ResourceOptions) -> TritonIdentity:
    """The account, its Workload Identity binding and its bucket roles; the annotation resolves once all exist."""
    request = args.request
    prefix = f"{name}-triton-{request.deployment}"
    account = gcp.serviceaccount.Account(
        prefix,
        account_id=service_account_id(args.stack, request.deployment),
        display_name=f"Triton {request.namespace}/{request.deployment}: reads {request.bucket}",
        project=args.project,
        opts=opts,
    )
    grants: list[pulumi.CustomResource] = [
        gcp.serviceaccount.IAMMember(
            f"{prefix}-wi",
            service_account_id=account.name,
            role=WORKLOAD_IDENTITY_USER,
            member=workload_identity_member(args.project or "", request.namespace, request.service_account),
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[args.cluster])),
        )
    ]
    google_member = account.email.apply(lambda email: f"serviceAccount:{email}")
    for role in TRITON_BUCKET_ROLES:
        grants.append(
            gcp.storage.BucketIAMMember(
                f"{prefix}-{role.rsplit('.', 1)[-1]}", bucket=args.bucket_name, role=role, member=google_member, opts=opts
            )
        )
    return TritonIdentity(
        annotations={WORKLOAD_IDENTITY_ANNOTATION: after_grants(account.email, grants)},
        export={
            "kubernetesServiceAccount": f"{request.namespace}/{request.service_account}",
            "googleServiceAccount": account.email,
            "bucket": args.bucket_name,
            "roles": list(TRITON_BUCKET_ROLES),
        },
    )
