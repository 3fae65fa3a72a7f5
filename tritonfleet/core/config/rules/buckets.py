"""Model bucket rules: unique names, and a physical bucket name both S3 and GCS accept (the cloud checks its KMS key)."""

from __future__ import annotations

import re

from tritonfleet.core.config.problems import MISSING
from tritonfleet.core.config.rules.context import RuleContext, listed, validate_section
from tritonfleet.core.config.schema import ModelBucket, physical_bucket_name

BUCKET_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$"  # what both S3 and GCS accept (no dots)


def check_buckets(ctx: RuleContext) -> list[str]:
    """Check every bucket; return the names of those that parse, in order."""
    names: list[str] = []
    for i, raw_bucket in enumerate(listed(ctx.data, "modelBuckets")):
        bucket = validate_section(ModelBucket, raw_bucket)
        if bucket is None:
            continue
        at = f"modelBuckets[{i}]"
        ctx.new_name(bucket.name, names, at, "bucket")
        names.append(bucket.name)
        _check_physical_name(ctx, bucket, at)
        if ctx.rules:
            ctx.rules.check_bucket(ctx, bucket, at)
    return names


def _check_physical_name(ctx: RuleContext, bucket: ModelBucket, at: str) -> None:
    owner = str(ctx.data.get(ctx.rules.BUCKET_OWNER_KEY) or "") if ctx.rules else ""
    if ctx.rules and not bucket.bucket_name and not owner:
        key = ctx.rules.BUCKET_OWNER_KEY
        if not any(p.key == key for p in ctx.problems):  # once, whichever rule asked first (GCP: check_stack)
            allowed = (
                f"the account or project the stack deploys into: the default name of {at} is "
                f"tf-{ctx.stack}-{bucket.name}-<{key}>-<region> (or set its bucketName)"
            )
            ctx.add(key, MISSING, allowed, ctx.rules.BUCKET_OWNER_EXAMPLE)
        return
    if ctx.region is None and not bucket.bucket_name:  # the default name needs the region, reported on its own
        return
    physical = physical_bucket_name(bucket, ctx.stack, owner, ctx.region or "")
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
        " without 'google'" + ("" if bucket.bucket_name else " (the stack name, owner and region are part of it)"),
        example,
    )
