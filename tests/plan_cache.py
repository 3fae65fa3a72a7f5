"""Plans of the shipped stacks, made once per state of the code and config and shared by every test.

A plan costs seconds (the program under the SDK's mocks), and many tests read the same five. Each stack is planned
once per test session at most, in a child of the run's fork server (conftest.build_plan), as `tritonfleet plan --json`
makes it (with the policy section), and kept on disk under .pytest_cache, keyed on the stack and the fingerprint of
its inputs (the same fingerprint `tritonfleet policy check` trusts: stack file, Pulumi.yaml, pyproject.toml,
tritonfleet/, components/, policies/, charts/, __main__.py). Any change to those re-plans. pytest-xdist workers share the folder: one plans a stack under
a file lock while the other waits, and entries are written by atomic rename, so a reader never sees half a file.
`pytest --cache-clear` empties it.

Every call returns a fresh copy: tests may edit what they get.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import build_plan
from tritonfleet.plan.document import dumps
from tritonfleet.plan.fingerprint import fingerprint_section, input_digests
from tritonfleet.plan.project import load_project

ROOT = Path(__file__).resolve().parents[1]
_folder: Path | None = None  # set by conftest from pytest's cache; None: this session only, in memory
_texts: dict[str, str] = {}  # stack -> plan document (JSON text), for this process


def use_folder(folder: Path | None) -> None:
    global _folder
    _folder = folder


def shared_folder() -> Path | None:
    """The folder the test processes of this run share (None: nothing shared), created on first use."""
    if _folder is not None:
        _folder.mkdir(parents=True, exist_ok=True)
    return _folder


def _fingerprint(stack: str) -> str:
    return fingerprint_section(input_digests(load_project(ROOT), stack))["digest"]


def _plan_text(stack: str) -> str:
    return dumps(build_plan(ROOT, stack, with_policy=True))


def _from_disk(stack: str, digest: str) -> str:
    return shared_text(stack, digest, lambda: _plan_text(stack))


def tool_stamp(executable: str) -> str:
    """What identifies a tool's install in a shared_text digest: its script's resolved path and mtime (pip rewrites
    the script when it installs another version)."""
    path = Path(executable).resolve()
    return f"{path} {path.stat().st_mtime_ns}"


def shared_text(name: str, digest: str, compute: Callable[[], str]) -> str:
    """The text `compute()` gives for `name` at `digest`, computed by one test process and read by the others (under
    the cache folder's lock for `name`); computed here only where no cache folder is set. Older digests of `name`
    are removed."""
    folder = shared_folder()
    if folder is None:
        return compute()
    entry = folder / f"{name}-{digest[:16]}.json"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits here while this one computes
        if entry.is_file():
            return entry.read_text()
        text = compute()
        fd, scratch = tempfile.mkstemp(dir=folder, prefix=f".{name}-", suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(scratch, entry)
        for old in folder.glob(f"{name}-*.json"):  # entries of earlier states are never read again
            if old != entry:
                old.unlink(missing_ok=True)
        return text


def stock_plan(stack: str) -> dict[str, Any]:
    """The plan document of stacks/Pulumi.<stack>.yaml, as `tritonfleet plan --stack <stack> --json` writes it."""
    if stack not in _texts:
        _texts[stack] = _from_disk(stack, _fingerprint(stack))
    return json.loads(_texts[stack])
