"""`tritonfleet diff --base-ref` in a throw-away git repository with two commits (local only, no network)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import yaml
from conftest import copy_project, run_cli

GIT_ENV = {
    "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV}, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = copy_project(tmp_path / "repo")
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "base")
    return repo


def edit_stack(repo, stack: str, edit, new_name: str | None = None) -> None:
    path = repo / "stacks" / f"Pulumi.{stack}.yaml"
    document = yaml.safe_load(path.read_text())
    edit(document["config"])
    (repo / "stacks" / f"Pulumi.{new_name or stack}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))


def test_base_ref_plans_both_commits_and_reports_added_stacks(repo, tmp_path):
    def more_nodes(config):
        config["tritonfleet:gpuPools"][0]["maxNodes"] = 4

    edit_stack(repo, "dev", more_nodes)
    edit_stack(repo, "dev", lambda config: None, new_name="qa")
    (repo / "policies" / "config" / "qa.json").write_text((repo / "policies" / "config" / "dev.json").read_text())
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "head: dev grows, qa appears")

    result = run_cli(
        "diff", "--base-ref", "HEAD~1", "--stack", "dev", "--stack", "qa", "--format", "json",
        "--comments-dir", str(tmp_path / "comments"), cwd=repo, timeout=300,
    )
    # 4 L40S nodes are over dev's $4,000 budget: the head adds a mandatory violation, so the check fails (exit 2)
    assert result.returncode == 2, result.stderr
    assert "mandatory: dev: cost-stack-enforce-monthly-budget" in result.stderr
    dev, qa = json.loads(result.stdout)["stacks"]
    assert dev["stack"] == "dev" and dev["status"] == "changed"
    assert dev["maxGpus"] == {"base": 2, "head": 4, "delta": 2}
    # the pool's NodePool, and the Platform's bill lines for the budget policies (billLines: the boot volumes of 4
    # nodes at the ceiling); the absolute chart path is not a change
    assert dev["counts"] == {"add": 0, "change": 2, "remove": 0, "ignored": 0}
    assert qa["status"] == "added" and qa["counts"]["add"] > 0
    # progress on stderr (stdout is the report): what is planned, then each plan as it finishes
    assert "planning 1 stack(s) at HEAD~1 and 2 in the working tree" in result.stderr
    assert "[3/3] " in result.stderr and "dev at HEAD~1: planned in " in result.stderr
    assert sorted(p.name for p in (tmp_path / "comments").iterdir()) == ["plan-diff.md"]  # one comment for the PR
    comment = (tmp_path / "comments" / "plan-diff.md").read_text()
    assert comment.startswith("<!-- tritonfleet-plan:plan-diff -->") and "### `dev`" in comment and "### `qa`" in comment
    assert len(git(repo, "worktree", "list").splitlines()) == 1  # the temporary worktree is gone


def test_base_ref_reports_a_stack_that_no_longer_plans(repo):
    def broken(config):
        config["tritonfleet:gpuPools"][0]["instanceType"] = "p9.mega"

    edit_stack(repo, "dev", broken)  # left uncommitted: the working tree is the head
    result = run_cli("diff", "--base-ref", "HEAD", "--stack", "dev", cwd=repo, timeout=300)
    assert result.returncode == 1
    assert "### `dev` — ⛔ blocked: could not be planned" in result.stdout
    assert "p9.mega" in result.stdout and "could not plan dev" in result.stderr


def test_unknown_ref_and_unknown_stack_exit_1(repo):
    bad_ref = run_cli("diff", "--base-ref", "no-such-ref", cwd=repo)
    assert bad_ref.returncode == 1 and "no-such-ref" in bad_ref.stderr and "Traceback" not in bad_ref.stderr
    bad_stack = run_cli("diff", "--base-ref", "HEAD", "--stack", "nope", cwd=repo)
    assert bad_stack.returncode == 1 and "no stack nope" in bad_stack.stderr
    assert len(git(repo, "worktree", "list").splitlines()) == 1
