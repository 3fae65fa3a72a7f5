"""tests/conftest.py's forked(): a function run in a child of the run's fork server returns what it returned, raises
what it raised, and a child that dies or an exception that cannot travel back becomes a RuntimeError with its text.

The targets live in this module (the child imports it by name: tests.test_forked_calls)."""

from __future__ import annotations

import os
import threading

import pytest

from tests.conftest import forked
from tritonfleet.core.config import ConfigError

HERE = "tests.test_forked_calls"


class _Unpicklable(Exception):
    def __init__(self):
        super().__init__("held a lock")
        self.lock = threading.Lock()  # locks do not pickle


def echo(*args, **kwargs):
    return args, kwargs, os.getpid()


def raise_unpicklable():
    raise _Unpicklable()


def exit_at_once(status: int):
    os._exit(status)


def test_a_call_returns_its_value_from_another_process():
    args, kwargs, pid = forked(f"{HERE}:echo", 1, "[/x]", unicode="ü…", nested={"a": [1.5, None]})
    assert (args, kwargs) == ((1, "[/x]"), {"unicode": "ü…", "nested": {"a": [1.5, None]}})
    assert pid != os.getpid()


def test_a_user_error_comes_back_as_itself(tmp_path):
    """What a test of a bad config expects from an in-process plan: the ConfigError, listing the problem."""
    from tests.conftest import ROOT

    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    dev = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(dev.replace("gpu: L40S", "gpu: L40X", 1))
    with pytest.raises(ConfigError) as caught:
        forked("tritonfleet.plan.document:build_plan", tmp_path, "dev")
    assert "L40X" in str(caught.value) and "L40S" in str(caught.value)


def test_an_exception_that_cannot_be_pickled_comes_back_as_its_traceback():
    with pytest.raises(RuntimeError, match="_Unpicklable: held a lock"):
        forked(f"{HERE}:raise_unpicklable")


def test_a_child_that_dies_is_reported_with_its_exit_status():
    with pytest.raises(RuntimeError, match=r"exit status 3"):
        forked(f"{HERE}:exit_at_once", 3)


def test_a_call_past_its_timeout_is_killed():
    import subprocess

    with pytest.raises(subprocess.TimeoutExpired):
        forked("time:sleep", 30, timeout=0.5)
