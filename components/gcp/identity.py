"""Workload Identity for Triton: names and IAM members (plain data, no Pulumi; workload_identity.py creates the bindings).

Each Triton deployment's Kubernetes ServiceAccount `<namespace>/triton-<deployment>` may impersonate one Google
service account (roles/iam.workloadIdentityUser on that account only), which may read one bucket (roles on that
bucket only). No keys: Triton's GCS client takes the token from the GKE metadata server (GKE_METADATA mode).
"""

from __future__ import annotations

import hashlib

from tritonfleet.core.conventions import resource_name

WORKLOAD_IDENTITY_ANNOTATION = "iam.gke.io/gcp-service-account"
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
# objectViewer: storage.objects.get + list. Triton also calls GetBucketMetadata before it lists a folder
# (triton-inference-server/core src/filesystem/implementations/gcs.h, IsDirectory), which needs storage.buckets.get:
# legacyBucketReader grants exactly buckets.get + objects.list, still read-only and still this one bucket.
TRITON_BUCKET_ROLES = ("roles/storage.objectViewer", "roles/storage.legacyBucketReader")

_ACCOUNT_ID_MAX = 30


def service_account_id(stack: str, deployment: str) -> str:
    """A Google service account id (6-30 characters) for a deployment, stable and unique per stack.

    Named tf-<stack>-triton-<deployment>, so no deployment name can collide with the stack's other accounts (nodes).
    """
    wanted = resource_name(stack, "triton", deployment)
    if len(wanted) <= _ACCOUNT_ID_MAX:
        return wanted
    digest = hashlib.sha256(wanted.encode()).hexdigest()[:6]
    return f"{wanted[: _ACCOUNT_ID_MAX - 7].rstrip('-')}-{digest}"


def workload_identity_member(project: str, namespace: str, service_account: str) -> str:
    """The IAM member that stands for a Kubernetes ServiceAccount of this project's GKE workload pool."""
    return f"serviceAccount:{project}.svc.id.goog[{namespace}/{service_account}]"
