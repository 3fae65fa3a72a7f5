"""Every command's help renders (help text is rich markup: a stray [tag] crashes it); exit codes and --version."""

import pytest
from conftest import run_cli

COMMANDS = [
    [],
    ["plan"],
    ["preflight"],
    ["models"],
    ["models", "validate"],
    ["models", "sync"],
    ["policy"],
    ["policy", "check"],
    ["policy", "init"],
    ["diff"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) or "tritonfleet" for c in COMMANDS])
def test_help_renders_with_h(command):
    result = run_cli(*command, "-h")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout and "Traceback" not in result.stdout + result.stderr


def test_long_help_names_the_exit_codes():
    result = run_cli("--help")
    assert result.returncode == 0
    assert "64 a usage error" in " ".join(result.stdout.split())


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("tritonfleet ")


@pytest.mark.parametrize(
    "args",
    [
        ["plan"], ["plan", "--stak", "dev"], ["policy", "check"], ["policy"], ["diff", "--format", "yaml"], [], ["diff"],
        ["loadtest", "--url", "127.0.0.1:1", "--model", "m"],
        ["loadtest", "--url", "127.0.0.1:1", "--model", "m", "--rate", "5", "--concurrency", "2"],
        ["models", "sync", "."],
    ],
    ids=[
        "missing-stack", "unknown-option", "policy-check-missing-stack", "policy-missing-stack", "bad-choice", "no-command",
        "diff-without-plans", "loadtest-neither-mode", "loadtest-both-modes", "models-sync-without-target",
    ],
)  # fmt: skip
def test_usage_errors_exit_64_not_2(args):
    """2 is a policy violation; a usage error is EX_USAGE (64), with Click's message and no traceback."""
    result = run_cli(*args)
    assert result.returncode == 64, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
