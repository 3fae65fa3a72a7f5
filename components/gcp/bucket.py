"""A GCS model bucket: uniform access, public access prevention, versioning, soft delete, noncurrent-version expiry."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.contract import BucketRequest

# GCS keeps deleted objects restorable this long (its default; allowed 7 to 90 days, or 0 to turn it off).
SOFT_DELETE_SECONDS = 7 * 24 * 3600
# GCS encrypts and decrypts with a customer-managed key as the project's Cloud Storage service agent: without this
# role on the key, creating the bucket with that default key fails.
KMS_AGENT_ROLE = "roles/cloudkms.cryptoKeyEncrypterDecrypter"


class ModelBucket(pulumi.ComponentResource):
    """The bucket, and with a customer-managed key the key grant GCS needs first. `location`: the GCS location (the
    stack's region, upper case); `kms_key`: a Cloud KMS key name, else Google-managed encryption; `labels`: the bucket's
    labels."""

    def __init__(self, name: str, args: BucketRequest, location: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:gcp:ModelBucket", name, None, opts)
        key_grants: list[pulumi.Resource] = []
        if args.kms_key:
            agent = gcp.storage.get_project_service_account_output(opts=pulumi.InvokeOutputOptions(parent=self))
            key_grants.append(
                gcp.kms.CryptoKeyIAMMember(
                    f"{name}-kms-agent",
                    crypto_key_id=args.kms_key,
                    role=KMS_AGENT_ROLE,
                    member=agent.member,
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        bucket = gcp.storage.Bucket(
            name,
            name=args.physical_name,
            location=location,
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
            encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=args.kms_key) if args.kms_key else None,
            labels=args.labels,
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protected, retain_on_delete=args.protected, depends_on=key_grants
            ),
        )
        self.name = bucket.name
        self.uri = bucket.name.apply(lambda b: f"gs://{b}")
        self.grant_target = self.name  # what an IAM binding on the bucket names
        self.register_outputs({"name": self.name, "uri": self.uri})
