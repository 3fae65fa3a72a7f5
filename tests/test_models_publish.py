"""Publishing a version without making it live (`models sync --no-live`), and a deployment's modelVersions pins
checked against what the bucket holds before anything is uploaded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, one_line, run_cli
from tests.test_models_sync import BUCKET, MODEL, Recording, add_version, served
from tests.test_models_sync import aws_env as aws_env  # noqa: F401 (fixtures)
from tests.test_models_sync import cli_env as cli_env  # noqa: F401
from tests.test_models_sync import moto_endpoint as moto_endpoint  # noqa: F401
from tests.test_models_sync import repo as repo  # noqa: F401
from tests.test_models_sync import s3 as s3  # noqa: F401
from tritonfleet.clouds.aws.storage import S3Store
from tritonfleet.core.object_store import RepositoryUri
from tritonfleet.models.sync import execute, plan_sync
from tritonfleet.models.validate import validate_repository

DEV_BUCKET = "tf-dev-models-123456789012-us-east-1"


def publish(repo: Path, store, live: bool = True):  # noqa: F811
    plan = plan_sync(validate_repository(repo), store, live=live)
    execute(plan, store)
    return plan


def test_no_live_uploads_the_new_version_and_keeps_the_served_one(s3, repo):  # noqa: F811
    store = Recording(S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models")))
    publish(repo, store)
    add_version(repo, 2)
    store.keys.clear()
    plan = publish(repo, store, live=False)
    assert store.sent == [f"models/{MODEL}/2/model.py"]  # no config.pbtxt: Triton's view is unchanged
    assert served(s3) == [1]
    [model] = plan.models
    assert (model.served_after, model.held_after, model.published_unserved) == ([1], [1, 2], [2])
    publish(repo, store)  # going live later is the ordinary sync: the config switch alone
    assert served(s3) == [2]


def test_no_live_on_an_unpublished_model_publishes_it(s3, repo):  # noqa: F811
    store = S3Store(RepositoryUri.parse(f"s3://{BUCKET}/fresh"))
    plan = publish(repo, store, live=False)
    assert plan.models[0].served_after == [1] and served(s3, "fresh/") == [1]  # nothing served before: nothing to keep


@pytest.fixture
def pinned_project(tmp_path: Path) -> Path:
    """The project with dev's resnet deployment pinning the sample model to version 7."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    doc["config"]["tritonfleet:tritonDeployments"][0]["modelVersions"] = {MODEL: 7}
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path


def test_sync_refuses_a_pin_the_bucket_will_not_hold(cli_env, repo, pinned_project):  # noqa: F811
    def keys() -> list[str]:
        found = cli_env.list_objects_v2(Bucket=DEV_BUCKET, Prefix="resnet/").get("Contents", [])
        return [o["Key"] for o in found]

    before = keys()
    args = ("models", "sync", str(repo), "--stack", "dev", "--deployment", "resnet", "--project-dir", str(pinned_project))
    result = run_cli(*args)
    message = one_line(result.stderr)
    assert result.returncode == 1 and keys() == before
    assert f"tritonfleet:tritonDeployments[0].modelVersions.{MODEL} = 7: the bucket holds versions [1]" in message
    assert f"'tritonfleet:tritonDeployments[0].modelVersions.{MODEL}' 1 --stack dev" in message
    assert "Nothing was published." in message and "Traceback" not in result.stderr
    add_version(repo, 7)  # the pinned version is in the repository: the bucket will hold it
    result = run_cli(*args, "--no-live")
    assert result.returncode == 0, result.stderr
    assert f"Published {MODEL}" in result.stdout


def test_models_pins_shows_each_deployments_pins_and_rollout(pinned_project):
    result = run_cli("models", "pins", "--stack", "dev", "--project-dir", str(pinned_project))
    assert result.returncode == 0, result.stderr
    text = one_line(result.stdout)
    assert f"resnet: {MODEL} v7 (--model-config-name=tfpin-" in text
    assert "a change replaces every replica at once (no rollout)" in text
    prod = run_cli("models", "pins", "--stack", "prod")
    assert "a change rolls out: 10%, 25%, 50%, then 100%, every 5m" in one_line(prod.stdout)
    assert all(len(line) <= 80 for line in prod.stdout.splitlines())
    assert run_cli("models", "pins", "--stack", "nosuch").returncode == 1
