"""Every command's --help renders (help text is rich markup: a stray [tag] crashes it)."""

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
    ["diff"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) or "tritonfleet" for c in COMMANDS])
def test_help_renders(command):
    result = run_cli(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout and "Traceback" not in result.stdout + result.stderr
