"""The fork server the tests run the CLI through (tests/cli_forkserver.py) answers as a fresh `python -m tritonfleet`."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli, run_cli_fresh


@pytest.mark.parametrize(
    "args,env",
    [
        (("--version",), {}),
        (("plan", "--stack", "dev"), {"COLUMNS": "72"}),  # the consoles take $COLUMNS at import, in the child
        (("plan", "--stack", "nope"), {}),  # a user error: exit 1
        (("plan",), {}),  # a usage error: exit 64
        (("size", "--stack", "dev", "--deployment", "[/nope]"), {}),  # an unknown deployment, with markup characters
        (("size", "--stack", "dev", "--gpus"), {}),  # an unknown option: exit 64
    ],
    ids=["version", "plan-72-columns", "unknown-stack", "usage", "unknown-deployment", "unknown-option"],
)
def test_answers_like_a_fresh_interpreter(args, env):
    forked, fresh = run_cli(*args, env=env), run_cli_fresh(*args, env=env)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_a_folder_with_its_own_tritonfleet_gets_a_fresh_interpreter(tmp_path: Path):
    """As with `python -m`, the working folder comes first on the path: a folder's own package shadows the checkout's,
    which the warm server has already imported, so run_cli runs such a folder in a fresh interpreter."""
    (tmp_path / "tritonfleet").mkdir()
    (tmp_path / "tritonfleet" / "__init__.py").write_text("")
    (tmp_path / "tritonfleet" / "__main__.py").write_text("print(\"the folder's own CLI\")\nraise SystemExit(3)\n")
    forked, fresh = run_cli("--version", cwd=tmp_path), run_cli_fresh("--version", cwd=tmp_path)
    assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout) == (3, "the folder's own CLI\n")
