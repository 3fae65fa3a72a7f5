"""Model bucket rules: unique names, and a physical bucket name both S3 and GCS accept (the cloud checks its KMS key)."""

from __future__ import annotations

import re

from tritonfleet.core.config.rules.context import RuleContext, listed, validate_section
from tritonfleet.core.config.schema import ModelBucket
from tritonfleet.core.conventions import resource_name

BUCKET_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$"  # what both S3 and GCS accept (no dots)


def physical_bucket_name(bucket: ModelBucket, stack: str) -> str:
    """The bucket's name in the cloud: its bucketName, or the deterministic tf-<stack>-<name>."""
    return bucket.bucket_name or resource_name(stack, bucket.name)


def check_buckets(ctx: RuleContext) -> list[str]:
    """Check every bucket; return the names of those that parse, in order."""
    names: list[str] = []
    for i, raw_bucket in enumerate(listed(ctx.data, "modelBuckets")):
        bucket = validate_section(ModelBucket, raw_bucket)
        if bucket is None:
            continue
        at = f"modelBuckets[{i}]"
        if bucket.name in names:
            ctx.add(f"{at}.name", bucket.name, "a bucket name not used by another bucket", f"{bucket.name}-2")
        names.append(bucket.name)
        _check_physical_name(ctx, bucket, at)
        if ctx.rules:
            ctx.rules.check_bucket(ctx, bucket, at)
    return names


def _check_physical_name(ctx: RuleContext, bucket: ModelBucket, at: str) -> None:
    physical = physical_bucket_name(bucket, ctx.stack)
    if re.match(BUCKET_NAME_PATTERN, physical) and "google" not in physical:
        return
    if bucket.bucket_name:
        key, value, example = f"{at}.bucketName", bucket.bucket_name, "acme-ml-models"
    else:
        key, value, example = f"{at}.name", bucket.name, "models"
    ctx.add(
        key,
        value,
        f"a name that makes the bucket name '{physical}' valid on S3 and GCS: 3..63 lower-case letters, digits and '-',"
        " without 'google'" + ("" if bucket.bucket_name else " (the stack name is part of it)"),
        example,
    )
