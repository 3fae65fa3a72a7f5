"""Model commands that know the deployment: `models unload` refuses a model the deployment requires (unloading it
would fail readiness on every replica at once), and `models validate --stack --deployment` checks instance groups'
GPU ids against the replica's GPUs."""

from __future__ import annotations

import shutil

import yaml

from tests.conftest import ROOT, one_line, run_cli
from tests.test_models_validate import make_model

REPLICA = "a=http://127.0.0.1:1"


def _project(tmp_path, **llm_changes) -> str:
    """A project with prod's stack file, its `llm` deployment (explicit mode, 1 GPU per replica) changed."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    llm = next(d for d in doc["config"]["tritonfleet:tritonDeployments"] if d["name"] == "llm")
    llm.update(llm_changes)
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(tmp_path)


def test_unload_refuses_a_required_model_with_the_fix(tmp_path):
    project = _project(tmp_path, requiredModels=["tokenizer", "llama"])
    args = ["--stack", "prod", "--deployment", "llm", "--replica", REPLICA, "--project-dir", project]
    refused = run_cli("models", "unload", "llama", *args)
    assert refused.returncode == 1 and "'llama' is in tritonDeployments[0].requiredModels" in refused.stderr
    assert "pulumi config rm --path 'tritonfleet:tritonDeployments[0].requiredModels[1]' --stack prod" in one_line(refused.stderr)
    # a model the deployment does not require goes on to the replicas (here: stopped for the missing admin key)
    other = run_cli("models", "unload", "draft", *args, env={"TRITON_ADMIN_KEY": ""})
    assert other.returncode == 1 and "requiredModels" not in other.stderr and "TRITON_ADMIN_KEY" in other.stderr
    # loading a required model is what a recovery does: never refused for being required
    load = run_cli("models", "load", "llama", *args, env={"TRITON_ADMIN_KEY": ""})
    assert "requiredModels" not in load.stderr


def test_validate_checks_gpu_ids_against_the_deployments_replica(tmp_path):
    (tmp_path / "project").mkdir()
    project = _project(tmp_path / "project", gpusPerReplica=2)
    config = """name: "m"
backend: "python"
input [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_GPU, gpus: [ 1 ] }, { kind: KIND_GPU, gpus: [ 2 ] } ]
"""
    make_model(tmp_path / "repo", "m", config, {"1/model.py": ""})
    plain = run_cli("models", "validate", str(tmp_path / "repo"))
    assert plain.returncode == 0, plain.stderr  # no deployment: its GPUs are not known
    checked = run_cli("models", "validate", str(tmp_path / "repo"), "--stack", "prod", "--deployment", "llm",
                      "--project-dir", project)  # fmt: skip
    assert checked.returncode == 1
    assert "instance_group[1].gpus names GPU 2, but a replica has 2 GPU(s) (ids 0..1)" in one_line(checked.stderr)
    assert "instance_group[0]" not in checked.stderr


def test_validate_checks_tensorrt_engines_against_the_deployments_gpu(tmp_path):
    (tmp_path / "project").mkdir()
    project = _project(tmp_path / "project")  # llm runs on the h200 pool
    config = 'name: "m"\nplatform: "tensorrt_plan"\ncc_model_filenames { key: "8.9" value: "l40s.plan" }\n'
    make_model(tmp_path / "repo", "m", config, {"1/model.plan": "x", "1/l40s.plan": "x"})
    checked = run_cli("models", "validate", str(tmp_path / "repo"), "--stack", "prod", "--deployment", "llm",
                      "--project-dir", project)  # fmt: skip
    assert checked.returncode == 1 and "not for the deployment's H200 (compute capability 9.0)" in one_line(checked.stderr)
