"""Model buckets under the Pulumi mock runtime: what the real program registers for each cloud and environment."""

from __future__ import annotations

import json

import pytest

from components.aws.bucket import encryption_default, tls_only_policy
from tests.conftest import ROOT, engine_config
from tests.plan_cache import stock_plan

KMS_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
GCP_KEY = "projects/acme-ml-prod/locations/us-central1/keyRings/models/cryptoKeys/models"

S3 = "aws:s3/"
BUCKET = "aws:s3/bucket:Bucket"


def run(stack: str, **overrides) -> list:
    """The resources the program registers for a stack, with top-level config keys replaced."""
    from tests.conftest import run_program
    from tritonfleet.plan.harness import Recorded

    if not overrides:  # a shipped stack as it is: the shared plan (tests/plan_cache.py)
        return [Recorded.from_document(r) for r in stock_plan(stack)["resources"]]

    config = engine_config(stack)
    for key, value in overrides.items():
        config[f"tritonfleet:{key}"] = value if isinstance(value, str) else json.dumps(value)
    return run_program(ROOT, "tritonfleet", stack, config, []).resources


def by_type(resources, prefix: str) -> dict[str, object]:
    found = {r.type: r for r in resources if r.type.startswith(prefix)}
    assert found, f"no {prefix} resources"
    return found


@pytest.fixture(scope="module")
def dev():
    return run("dev")


@pytest.fixture(scope="module")
def prod():
    return run("prod")


def test_aws_bucket_is_the_v7_resource_with_a_deterministic_name(dev):
    types = {r.type for r in dev}
    assert BUCKET in types and "aws:s3/bucketV2:BucketV2" not in types
    bucket = by_type(dev, BUCKET)[BUCKET]
    assert bucket.inputs["bucket"] == "tf-dev-models-123456789012-us-east-1"
    assert bucket.inputs["forceDestroy"] is False


def test_aws_versioning_is_enabled(dev):
    versioning = by_type(dev, S3)["aws:s3/bucketVersioning:BucketVersioning"]
    assert versioning.inputs["versioningConfiguration"] == {"status": "Enabled"}


def test_aws_encryption_defaults_to_aes256(dev):
    sse = by_type(dev, S3)["aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"]
    assert sse.inputs["rules"] == [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}, "bucketKeyEnabled": False}]


def test_aws_encryption_uses_the_configured_kms_key():
    resources = run("dev", modelBuckets=[{"name": "models", "noncurrentVersionDays": 7, "kmsKeyId": KMS_ARN}])
    sse = by_type(resources, S3)["aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"]
    rule = sse.inputs["rules"][0]
    assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KMS_ARN}
    assert rule["bucketKeyEnabled"] is True
    assert encryption_default(None) == {"sse_algorithm": "AES256"}


def test_aws_public_access_is_blocked_four_ways(dev):
    block = by_type(dev, S3)["aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"]
    flags = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    assert all(block.inputs[flag] is True for flag in flags)


def test_aws_ownership_is_bucket_owner_enforced(dev):
    ownership = by_type(dev, S3)["aws:s3/bucketOwnershipControls:BucketOwnershipControls"]
    assert ownership.inputs["rule"] == {"objectOwnership": "BucketOwnerEnforced"}


def test_aws_policy_denies_every_request_without_tls(dev):
    resources = by_type(dev, S3)
    policy = json.loads(resources["aws:s3/bucketPolicy:BucketPolicy"].inputs["policy"])
    [statement] = policy["Statement"]
    assert statement["Effect"] == "Deny" and statement["Principal"] == "*" and statement["Action"] == "s3:*"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert statement["Resource"] == ["arn:aws:s3:::tf-dev-models-123456789012-us-east-1", "arn:aws:s3:::tf-dev-models-123456789012-us-east-1/*"]
    # the policy waits for the public access block, so it is never applied to a bucket that is still open
    block = resources["aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"]
    assert block.urn in resources["aws:s3/bucketPolicy:BucketPolicy"].depends_on
    assert json.loads(tls_only_policy("arn:aws:s3:::b"))["Statement"][0]["Resource"][1] == "arn:aws:s3:::b/*"


def test_aws_lifecycle_expires_noncurrent_versions_after_the_configured_days(dev, prod):
    for resources, days in ((dev, 7), (prod, 90)):  # stacks/Pulumi.dev.yaml and Pulumi.prod.yaml
        lifecycle = by_type(resources, S3)["aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"]
        [rule] = lifecycle.inputs["rules"]
        assert rule["status"] == "Enabled"
        assert rule["noncurrentVersionExpiration"] == {"noncurrentDays": days}
        assert rule["abortIncompleteMultipartUpload"] == {"daysAfterInitiation": 7}
        versioning = by_type(resources, S3)["aws:s3/bucketVersioning:BucketVersioning"]
        assert versioning.urn in lifecycle.depends_on


def test_aws_bucket_resources_are_children_of_the_component_on_the_stack_provider(dev):
    [component] = [r for r in dev if r.type == "tritonfleet:aws:ModelBucket"]
    assert component.parent.endswith("::tf-aws")
    for resource in by_type(dev, S3).values():
        assert resource.parent == component.urn
        assert resource.provider.endswith("pulumi:providers:aws::tf-aws-aws")
        assert resource.inputs["bucket"] == "tf-dev-models-123456789012-us-east-1"  # every setting names the bucket it configures


def test_prod_buckets_are_protected_and_retained_and_dev_ones_are_not(dev, prod):
    for resource in by_type(prod, S3).values():
        assert resource.protect and resource.retain_on_delete, resource.urn
    for resource in by_type(dev, S3).values():
        assert not resource.protect and not resource.retain_on_delete, resource.urn
    unprotected_prod = run("prod", protect=False)
    assert not any(r.protect or r.retain_on_delete for r in by_type(unprotected_prod, S3).values())


@pytest.fixture(scope="module")
def gcp_prod():
    return run("gcp-prod")


def gcs_bucket(resources):
    return by_type(resources, "gcp:storage/bucket:Bucket")["gcp:storage/bucket:Bucket"]


def test_gcp_bucket_is_private_with_uniform_access(gcp_prod):
    bucket = gcs_bucket(gcp_prod)
    assert bucket.inputs["name"] == "tf-gcp-prod-models-acme-ml-prod-us-central1"
    assert bucket.inputs["uniformBucketLevelAccess"] is True
    assert bucket.inputs["publicAccessPrevention"] == "enforced"
    assert bucket.inputs["forceDestroy"] is False


def test_gcp_bucket_versioning_soft_delete_and_noncurrent_expiry(gcp_prod):
    bucket = gcs_bucket(gcp_prod)
    assert bucket.inputs["versioning"] == {"enabled": True}
    assert bucket.inputs["softDeletePolicy"] == {"retentionDurationSeconds": 7 * 24 * 3600}
    assert bucket.inputs["lifecycleRules"] == [
        {"action": {"type": "Delete"}, "condition": {"daysSinceNoncurrentTime": 90, "withState": "ARCHIVED"}}
    ]
    assert "encryption" not in bucket.inputs


def test_gcp_bucket_uses_the_configured_kms_key():
    resources = run("gcp-prod", modelBuckets=[{"name": "models", "noncurrentVersionDays": 30, "kmsKeyId": GCP_KEY}])
    bucket = gcs_bucket(resources)
    assert bucket.inputs["encryption"] == {"defaultKmsKeyName": GCP_KEY}
    assert bucket.inputs["lifecycleRules"][0]["condition"]["daysSinceNoncurrentTime"] == 30
    # GCS uses the key as the project's Cloud Storage service agent: it gets the key role before the bucket exists.
    (grant,) = [r for r in resources if r.type == "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"]
    assert grant.inputs["cryptoKeyId"] == GCP_KEY
    assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    assert grant.inputs["member"].endswith("@gs-project-accounts.iam.gserviceaccount.com")
    assert grant.urn in bucket.depends_on


def test_gcp_bucket_without_a_kms_key_grants_nothing_on_keys(gcp_prod):
    assert not [r for r in gcp_prod if r.type.startswith("gcp:kms/")]


def test_gcp_bucket_protect_and_retain_follow_the_environment(gcp_prod):
    [component] = [r for r in gcp_prod if r.type == "tritonfleet:gcp:ModelBucket"]
    bucket = gcs_bucket(gcp_prod)
    assert bucket.parent == component.urn and bucket.provider.endswith("pulumi:providers:gcp::tf-gcp-gcp")
    assert bucket.protect and bucket.retain_on_delete
    relaxed = gcs_bucket(run("gcp-prod", protect=False))
    assert not relaxed.protect and not relaxed.retain_on_delete


def test_a_gcp_plan_never_registers_aws_resources(gcp_prod):
    assert not [r.type for r in gcp_prod if r.type.startswith("aws:")]


def test_a_bucket_can_take_its_own_globally_unique_name(tmp_path):
    """S3 and GCS names are global: bucketName replaces tf-<stack>-<name>, in the program and for `models sync`."""
    import shutil

    import yaml

    from tests.conftest import ROOT, build_plan
    from tritonfleet.models.stack import stack_repository

    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    shutil.copy(ROOT / "__main__.py", tmp_path)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    stack = tmp_path / "stacks" / "Pulumi.dev.yaml"
    doc = yaml.safe_load(stack.read_text())
    doc["config"]["tritonfleet:modelBuckets"][0]["bucketName"] = "acme-ml-dev-models"
    stack.write_text(yaml.safe_dump(doc))
    plan = build_plan(tmp_path, "dev")
    (bucket,) = [r for r in plan["resources"] if r["type"] == "aws:s3/bucket:Bucket"]
    assert bucket["inputs"]["bucket"] == "acme-ml-dev-models"
    assert str(stack_repository(tmp_path, "dev", deployment="resnet")) == "s3://acme-ml-dev-models/resnet/"
