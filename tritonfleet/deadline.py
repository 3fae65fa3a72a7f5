"""An overall deadline for a call that talks to a server: per-read timeouts do not bound a server that accepts and
never answers, or trickles its answer a byte at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """The call did not return within its deadline."""


def call_within(seconds: float, call: Callable[[], T]) -> T:
    """`call()`'s result (or its exception), or DeadlineExceeded when it has not returned within `seconds`. The call runs
    on in a daemon thread, which the process's exit ends: use it where the process then reports and exits."""
    outcome: list[tuple[bool, object]] = []

    def target() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as error:  # handed back to the caller as it was
            outcome.append((False, error))

    thread = threading.Thread(target=target, name="deadline", daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise DeadlineExceeded(f"no answer within {seconds:g} s")
    ok, value = outcome[0]
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]
