"""Workload Identity for Triton: names and IAM members (plain data, no Pulumi;
components/gcp/workload_identity.py creates the bindings).

Each Triton deployment's Kubernetes ServiceAccount `<namespace>/triton-<deployment>` is itself the IAM principal that
reads its one bucket (roles on that bucket only): Workload Identity Federation for GKE's direct principal, with no
Google service account to impersonate and no annotation for GKE to act on. No keys: Triton's GCS client takes the
ServiceAccount's federated token from the GKE metadata server (GKE_METADATA mode). Source:
https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity ("Configure authorization and principals":
principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/PROJECT_ID.svc.id.goog/
subject/ns/NAMESPACE/sa/KSA_NAME, the direct way; linking a Google service account is the alternative), read
2026-12-05.
"""

from __future__ import annotations

# objectViewer: storage.objects.get + list. Triton also calls GetBucketMetadata before it lists a folder
# (triton-inference-server/core src/filesystem/implementations/gcs.h, IsDirectory), which needs storage.buckets.get:
# legacyBucketReader grants exactly buckets.get + objects.list, still read-only and still this one bucket.
TRITON_BUCKET_ROLES = ("roles/storage.objectViewer", "roles/storage.legacyBucketReader")
# An annotation on Triton's ServiceAccount naming its principal: nothing acts on it (the direct principal needs
# none); it tells people who reads what, and it resolves only after the bucket grants exist, so the release waits.
PRINCIPAL_ANNOTATION = "tritonfleet.io/workload-identity-principal"


def workload_identity_principal(project_number: str, project: str, namespace: str, service_account: str) -> str:
    """The IAM principal of a Kubernetes ServiceAccount of this project's GKE workload pool."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/workloadIdentityPools/"
        f"{project}.svc.id.goog/subject/ns/{namespace}/sa/{service_account}"
    )
