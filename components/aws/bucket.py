"""An S3 model bucket that is private, encrypted, versioned and TLS-only by construction."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from components.contract import BucketRequest

# Multipart uploads that never completed (an interrupted `tritonfleet models sync`) are invisible but billed.
ABORT_INCOMPLETE_UPLOADS_DAYS = 7


def tls_only_policy(bucket_arn: str) -> str:
    """A bucket policy denying every request that does not use TLS (aws:SecureTransport false)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyInsecureTransport",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [bucket_arn, f"{bucket_arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )


def encryption_default(kms_key_id: str | None) -> dict[str, str]:
    """Server-side encryption: SSE-KMS with the given key, else SSE-S3 (AES256)."""
    if kms_key_id:
        return {"sse_algorithm": "aws:kms", "kms_master_key_id": kms_key_id}
    return {"sse_algorithm": "AES256"}


class ModelBucket(pulumi.ComponentResource):
    """The bucket plus its versioning, encryption, public access block, ownership, TLS-only policy and lifecycle
    (`kms_key`: a KMS key ARN for SSE-KMS, else SSE-S3; `labels`: the bucket's tags)."""

    def __init__(self, name: str, args: BucketRequest, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:ModelBucket", name, None, opts)
        keep = pulumi.ResourceOptions(parent=self, protect=args.protected, retain_on_delete=args.protected)

        bucket = aws.s3.Bucket(name, bucket=args.physical_name, force_destroy=False, tags=args.labels, opts=keep)
        # The settings below name the bucket by `bucket.bucket` (its id on AWS), which the offline plan also knows.
        versioning = aws.s3.BucketVersioning(
            f"{name}-versioning",
            bucket=bucket.bucket,
            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
            opts=keep,
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption",
            bucket=bucket.bucket,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=(
                        aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                            **encryption_default(args.kms_key)
                        )
                    ),
                    bucket_key_enabled=bool(args.kms_key),
                )
            ],
            opts=keep,
        )
        public_access_block = aws.s3.BucketPublicAccessBlock(
            f"{name}-public-access-block",
            bucket=bucket.bucket,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=keep,
        )
        ownership = aws.s3.BucketOwnershipControls(
            f"{name}-ownership",
            bucket=bucket.bucket,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=keep,
        )
        aws.s3.BucketPolicy(
            f"{name}-tls-only",
            bucket=bucket.bucket,
            policy=bucket.arn.apply(tls_only_policy),
            opts=pulumi.ResourceOptions.merge(keep, pulumi.ResourceOptions(depends_on=[public_access_block, ownership])),
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle",
            bucket=bucket.bucket,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-noncurrent-versions",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                        noncurrent_days=args.noncurrent_version_days
                    ),
                    abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=ABORT_INCOMPLETE_UPLOADS_DAYS
                    ),
                )
            ],
            # S3 wants versioning in place before rules about noncurrent versions.
            opts=pulumi.ResourceOptions.merge(keep, pulumi.ResourceOptions(depends_on=[versioning])),
        )

        self.name = bucket.bucket
        self.arn = bucket.arn
        self.uri = bucket.bucket.apply(lambda b: f"s3://{b}")
        self.grant_target = self.arn  # what an IAM grant on the bucket names
        self.register_outputs({"name": self.name, "arn": self.arn, "uri": self.uri})
