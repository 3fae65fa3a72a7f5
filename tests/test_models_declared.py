"""A deployment's declared models (requiredModels, loadModels) must exist in the repository: `models validate` and
`models sync` with --stack/--deployment refuse a missing one, naming the config key, and publish nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, one_line, run_cli
from tests.test_models_sync import aws_env as aws_env  # noqa: F401 (fixtures)
from tests.test_models_sync import cli_env as cli_env  # noqa: F401
from tests.test_models_sync import moto_endpoint as moto_endpoint  # noqa: F401
from tests.test_models_sync import repo as repo  # noqa: F401

SAMPLE_MODEL = "add_version"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project with dev's deployment requiring the sample model and one the repository lacks."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    doc["config"]["tritonfleet:tritonDeployments"][0]["requiredModels"] = [SAMPLE_MODEL, "bert"]
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path


def test_validate_names_the_missing_required_model(project):
    sample = ROOT / "tests" / "fixtures" / "model_repository"
    result = run_cli("models", "validate", str(sample), "--stack", "dev", "--deployment", "resnet", "--project-dir", str(project))
    assert result.returncode == 1
    message = one_line(result.stderr)  # wrapped to 80 columns
    assert "tritonfleet:tritonDeployments[0].requiredModels[1] = 'bert' is not a model of the repository" in message
    assert f"(it has: {SAMPLE_MODEL})" in message
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].requiredModels[1]' '<model>' --stack dev" in message
    assert "or in stacks/Pulumi.dev.yaml, set tritonfleet:tritonDeployments[0].requiredModels[1] to <model>" in message
    assert "requiredModels[0]" not in result.stderr


def test_validate_passes_when_every_declared_model_is_there():
    sample = ROOT / "tests" / "fixtures" / "model_repository"
    result = run_cli("models", "validate", str(sample), "--stack", "dev", "--deployment", "resnet")
    assert result.returncode == 0, result.stderr


def test_sync_publishes_nothing_when_a_required_model_is_missing(cli_env, repo, project):  # noqa: F811
    def keys() -> list[str]:
        return [o["Key"] for o in cli_env.list_objects_v2(Bucket="tf-dev-models-123456789012-us-east-1", Prefix="resnet/").get("Contents", [])]

    before = keys()  # the module's other tests may have published there already
    result = run_cli("models", "sync", str(repo), "--stack", "dev", "--deployment", "resnet", "--project-dir", str(project))
    assert result.returncode == 1
    assert "requiredModels[1] = 'bert'" in result.stderr and "nothing was published" in result.stderr
    assert keys() == before


def test_a_misspelt_model_is_fixed_to_the_model_meant_both_ways():
    from tritonfleet.models.stack import missing_models

    (message,) = missing_models({"tritonDeployments[1].requiredModels[0]": "Resnet50"}, {"resnet50", "bert"}, "prod")
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[1].requiredModels[0]' resnet50 --stack prod" in message
    assert message.endswith("or in stacks/Pulumi.prod.yaml, set tritonfleet:tritonDeployments[1].requiredModels[0] to resnet50")
