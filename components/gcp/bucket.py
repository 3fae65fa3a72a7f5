"""A GCS model bucket: uniform access, public access prevention, versioning, soft delete, noncurrent-version expiry."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

# GCS keeps deleted objects restorable this long (its default; allowed 7 to 90 days, or 0 to turn it off).
SOFT_DELETE_SECONDS = 7 * 24 * 3600
# GCS encrypts and decrypts with a customer-managed key as the project's Cloud Storage service agent: without this
# role on the key, creating the bucket with that default key fails.
KMS_AGENT_ROLE = "roles/cloudkms.cryptoKeyEncrypterDecrypter"


@dataclass(frozen=True)
class ModelBucketArgs:
    """One GCS model bucket."""

    bucket_name: str
    """The physical (globally unique) name, deterministic per stack."""
    location: str
    """The GCS location (the stack's region, upper case)."""
    noncurrent_version_days: int
    """Days a replaced or deleted object version is kept."""
    kms_key_name: str | None = None
    """Default Cloud KMS key, projects/P/locations/L/keyRings/R/cryptoKeys/K; None: Google-managed encryption."""
    protected: bool = False
    """Protect and retain on delete (prod)."""
    labels: dict[str, str] = field(default_factory=dict)
    """The stack's tags, as bucket labels."""


class ModelBucket(pulumi.ComponentResource):
    """The bucket, and with a customer-managed key the key grant GCS needs first."""

    def __init__(self, name: str, args: ModelBucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:gcp:ModelBucket", name, None, opts)
        key_grants: list[pulumi.Resource] = []
        if args.kms_key_name:
            agent = gcp.storage.get_project_service_account_output(opts=pulumi.InvokeOutputOptions(parent=self))
            key_grants.append(
                gcp.kms.CryptoKeyIAMMember(
                    f"{name}-kms-agent",
                    crypto_key_id=args.kms_key_name,
                    role=KMS_AGENT_ROLE,
                    member=agent.member,
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        bucket = gcp.storage.Bucket(
            name,
            name=args.bucket_name,
            location=args.location,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=False,
            versioning=gcp.storage.BucketVersioningArgs(enabled=True),
            soft_delete_policy=gcp.storage.BucketSoftDeletePolicyArgs(retention_duration_seconds=SOFT_DELETE_SECONDS),
            lifecycle_rules=[
                gcp.storage.BucketLifecycleRuleArgs(
                    action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                    condition=gcp.storage.BucketLifecycleRuleConditionArgs(
                        days_since_noncurrent_time=args.noncurrent_version_days, with_state="ARCHIVED"
                    ),
                )
            ],
            encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=args.kms_key_name) if args.kms_key_name else None,
            labels=args.labels,
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protected, retain_on_delete=args.protected, depends_on=key_grants
            ),
        )
        self.name = bucket.name
        self.uri = bucket.name.apply(lambda b: f"gs://{b}")
        self.grant_target = self.name  # what an IAM binding on the bucket names
        self.register_outputs({"name": self.name, "uri": self.uri})
