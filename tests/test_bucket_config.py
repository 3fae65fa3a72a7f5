"""Bad model bucket settings become Problems (key, value, allowed, fix), never tracebacks."""

from __future__ import annotations

import json

import pytest

from tests.conftest import engine_config
from tritonfleet.core.config import ConfigError, load_stack_config


def problems(stack: str, buckets, stack_name: str | None = None):
    config = engine_config(stack)
    config["tritonfleet:modelBuckets"] = json.dumps(buckets)
    with pytest.raises(ConfigError) as caught:
        load_stack_config(config, stack_name or stack)
    return {p.key: p for p in caught.value.problems}


def accepts(stack: str, buckets) -> None:
    config = engine_config(stack)
    config["tritonfleet:modelBuckets"] = json.dumps(buckets)
    load_stack_config(config, stack)


def test_kms_key_must_be_an_aws_key_arn_on_aws():
    found = problems("dev", [{"name": "models", "kmsKeyId": "my-key"}])
    problem = found["modelBuckets[0].kmsKeyId"]
    assert problem.value == "my-key"
    assert "a KMS key ARN such as" in problem.allowed
    assert problem.fix.startswith("pulumi config set --path 'tritonfleet:modelBuckets[0].kmsKeyId' arn:aws:kms:")
    assert problem.fix.endswith("--stack dev")


def test_kms_key_must_be_a_cloud_kms_name_on_gcp():
    aws_arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    problem = problems("gcp-prod", [{"name": "models", "kmsKeyId": aws_arn}])["modelBuckets[0].kmsKeyId"]
    assert "Cloud KMS key name" in problem.allowed and "projects/" in problem.fix


def test_valid_kms_keys_are_accepted():
    key_arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    accepts("dev", [{"name": "models", "kmsKeyId": key_arn}])
    accepts("gcp-prod", [{"name": "models", "kmsKeyId": "projects/acme-ml-prod/locations/us-central1/keyRings/r/cryptoKeys/k"}])


@pytest.mark.parametrize("alias", ["arn:aws:kms:us-east-1:123456789012:alias/models", "alias/models"])
def test_kms_alias_is_refused_with_the_command_that_finds_its_key(alias):
    """IAM never matches an alias ARN in the Triton roles' kms:Decrypt Resource, so only key ARNs pass."""
    problem = problems("dev", [{"name": "models", "kmsKeyId": alias}])["modelBuckets[0].kmsKeyId"]
    assert problem.value == alias
    assert "not an alias" in problem.allowed
    assert f"aws kms describe-key --key-id {alias} --query KeyMetadata.Arn" in problem.allowed
    assert "arn:aws:kms:us-east-1:123456789012:key/" in problem.fix


@pytest.mark.parametrize("days,fixed", [(0, 1), (4000, 3650), ("thirty", 30)])
def test_noncurrent_version_days_out_of_range(days, fixed):
    """Out of range: the nearest valid value; not a number: the default."""
    problem = problems("dev", [{"name": "models", "noncurrentVersionDays": days}])["modelBuckets[0].noncurrentVersionDays"]
    assert problem.value == days and "1..3650" in problem.allowed
    assert f"'tritonfleet:modelBuckets[0].noncurrentVersionDays' {fixed} " in problem.fix


def test_bucket_name_rules():
    found = problems("dev", [{"name": "Models"}, {"name": "models", "kmsKeyId": ""}, {"name": "models"}])
    assert "modelBuckets[0].name" in found  # upper case
    assert found["modelBuckets[2].name"].allowed == "a bucket name not used by another bucket"


def test_the_physical_bucket_name_must_be_valid_for_the_stack():
    long_stack = "a-very-long-stack-name-for-the-platform-team-west"
    problem = problems("dev", [{"name": "models-for-everyone"}], stack_name=long_stack)["modelBuckets[0].name"]
    assert f"tf-{long_stack}-models-for-everyone" in problem.allowed and "3..63" in problem.allowed
    assert problems("dev", [{"name": "google-models"}])["modelBuckets[0].name"].value == "google-models"


def test_unknown_bucket_keys_are_reported():
    problem = problems("dev", [{"name": "models", "versioning": False}])["modelBuckets[0].versioning"]
    assert problem.fix.startswith("pulumi config rm --path")
