"""The fork server the tests run the CLI through (tests/cli_forkserver.py) answers as a fresh `python -m tritonfleet`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, run_cli_fresh


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


def test_learning_loads_a_package_the_sdk_registered_for_first_use():
    """The server imports what a child loaded: a lazily registered SDK package must come out loaded (reading its
    __name__ alone does not load it), or every child pays the SDK's submodule imports again."""
    import sys
    import types

    import pulumi_aws  # noqa: F401 - registers its packages for loading on first use
    from cli_forkserver import _learn

    name = "pulumi_aws.glacier"  # one our program never loads: still lazy here, and small
    assert type(sys.modules[name]) is not types.ModuleType, f"{name} is already loaded: pick a package no test loads"
    _learn([name])
    assert type(sys.modules[name]) is types.ModuleType and "Vault" in vars(sys.modules[name])


def test_a_command_past_its_timeout_is_killed_and_the_server_serves_on():
    with pytest.raises(subprocess.TimeoutExpired):
        run_cli("plan", "--stack", "prod", timeout=0.05)
    assert run_cli("--version").returncode == 0


def test_the_server_ends_with_the_process_that_started_it(tmp_path: Path):
    """A test run killed midway leaves no server behind: the server watches its owner's pidfd."""
    owner = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path;"
        "from tests.cli_forkserver import ForkServer;"
        "server = ForkServer(Path(sys.argv[1])); print(server._process.pid, flush=True); os._exit(0)"
    )
    done = subprocess.run([sys.executable, "-c", owner, str(ROOT)], capture_output=True, text=True, timeout=60)
    server_pid = int(done.stdout)
    deadline = time.monotonic() + 60  # it notices once warmed up (a few seconds)
    while _alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive(server_pid)
    if alive:
        os.kill(server_pid, signal.SIGKILL)
    assert not alive, "the fork server outlived the process that started it"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
