"""Every command at 80 columns (the README's promise): help, plans, config errors, usage errors and failures each print
no line longer than 80 characters outside a table, help is conventional (no `<bool>` on flags, no text cut with an
ellipsis), and usage errors exit 64."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cli
from test_diff import crafted_cases

WIDTH = 80
TABLE_EDGES = ("|", "│", "╭", "╰", "┃", "┏", "┗", "┡", "└", "┌")

HELP = [
    [], ["plan"], ["diff"], ["size"], ["loadtest"], ["preflight"], ["policy"], ["policy", "check"], ["policy", "init"],
    ["models"], ["models", "validate"], ["models", "sync"], ["models", "load"], ["models", "unload"],
]  # fmt: skip


def _too_long(text: str) -> list[str]:
    """Lines over WIDTH, but table rows and a single word longer than the width (a path is never broken)."""
    return [
        line for line in text.splitlines()
        if len(line) > WIDTH and not line.lstrip().startswith(TABLE_EDGES) and " " in line.strip()
    ]  # fmt: skip


def _run(*args: str, cwd: Path = ROOT):
    return run_cli(*args, env={"COLUMNS": str(WIDTH)}, cwd=cwd, timeout=300)


@pytest.mark.parametrize("command", HELP, ids=[" ".join(c) or "tritonfleet" for c in HELP])
def test_help_is_conventional_and_fits(command):
    result = _run(*command, "-h")
    assert result.returncode == 0, result.stderr
    assert "<bool>" not in result.stdout and "…" not in result.stdout
    cut = [line for line in result.stdout.splitlines() if line.rstrip().endswith("...") and "Usage:" not in line]
    assert cut == []  # Click cuts a long command summary with "..."
    assert _too_long(result.stdout) == []


def _broken_project(tmp_path: Path) -> Path:
    """A project whose dev stack has a misspelt key, a misspelt nested key and a bad value: all reported at once."""
    for item in ("__main__.py", "components", "tritonfleet", "policies", "charts"):
        (tmp_path / item).symlink_to(ROOT / item)
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    (tmp_path / "stacks").mkdir()
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    config = document["config"]
    config["tritonfleet:regoin"] = config.pop("tritonfleet:region")
    pool = config["tritonfleet:gpuPools"][0]
    pool["maxNode"] = pool.pop("maxNodes")
    pool["gpu"] = "L40SS"
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def test_config_problems_come_all_at_once_each_with_its_stack_file_edit(tmp_path):
    result = _run("plan", "--stack", "dev", "--project-dir", str(_broken_project(tmp_path)))
    assert result.returncode == 1 and _too_long(result.stderr) == []
    message = " ".join(result.stderr.split())
    assert "has 3 configuration problems" in message  # the typos hide neither the gpu nor each other
    assert "or: in stacks/Pulumi.dev.yaml, rename tritonfleet:regoin to tritonfleet:region (keep its value)" in message
    assert "or: in stacks/Pulumi.dev.yaml, rename tritonfleet:gpuPools[0].maxNode to tritonfleet:gpuPools[0].maxNodes" in message
    assert "tritonfleet:gpuPools[0].gpu = \"L40SS\"" in message
    assert "or: in stacks/Pulumi.dev.yaml, set tritonfleet:gpuPools[0].gpu to L40S" in message


def test_plans_failures_and_usage_errors_fit_80_columns(tmp_path):
    base, head = crafted_cases()["new-policy-violation"]
    long = "The stack can run 50 GPUs at its maximum, over the environment's ceiling of 40. " * 3
    head["policy"]["verdicts"][0]["message"] = long
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    repo = tmp_path / "repo" / "m"
    repo.mkdir(parents=True)
    (repo / "config.pbtxt").write_text('name: "m"\nmax_batch_size: lots\n')
    runs = {
        "plan": (["plan", "--stack", "dev"], 0),
        "diff with a long verdict": (["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "-o", str(tmp_path / "c.md")], 2),
        "preflight without credentials": (["preflight", "--stack", "dev"], 1),
        "models validate": (["models", "validate", str(tmp_path / "repo")], 1),
        "models validate --stack alone": (["models", "validate", str(tmp_path / "repo"), "--stack", "dev"], 64),
        "unknown stack": (["plan", "--stack", "nope"], 1),
        "policy init over an existing file": (["policy", "init", "--stack", "prod"], 1),
        "loadtest without a server": (["loadtest", "--url", "127.0.0.1:9", "--model", "m", "--rate", "5", "--duration", "1"], 1),
        "unknown option": (["plan", "--stak", "dev"], 64),
    }  # fmt: skip
    for name, (args, status) in runs.items():
        result = _run(*args)
        assert result.returncode == status, (name, result.stderr)
        assert _too_long(result.stdout + result.stderr) == [], name


def test_every_shipped_plan_fits_80_columns_resources_included(stock_plan):
    """The plan summary of each stack as the CLI lays it out (from the cached plans; the CLI run above covers the rest)."""
    from tritonfleet.plan.text import plan_lines

    for stack in ("dev", "staging", "prod", "gcp-dev", "gcp-prod"):
        lines = [line.text for line in plan_lines(stock_plan(stack), WIDTH, resources=True)]
        assert _too_long("\n".join(lines)) == [], stack
