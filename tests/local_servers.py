"""Servers the tests start on this machine: a free port on 127.0.0.1, and a stop by pid that never leaves one behind."""

from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(process: subprocess.Popen, grace_seconds: float = 15) -> None:
    """SIGTERM, then SIGKILL after `grace_seconds` (0: SIGKILL at once); returns once the process is gone."""
    if process.poll() is not None:
        return
    if grace_seconds > 0:
        process.terminate()
        try:
            process.wait(timeout=grace_seconds)
            return
        except subprocess.TimeoutExpired:
            pass
    process.kill()
    process.wait(timeout=30)
