"""Where the real `tritonserver` lives: the nvidia-pytriton wheel (installed with --no-deps by `make test`).

Found with importlib's spec, never by importing `pytriton`: its own dependencies are deliberately not installed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def pytriton_dir() -> Path:
    """The wheel's `pytriton` package folder; skips the test, saying why, when the binary or its stub is missing."""
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("nvidia-pytriton (the wheel that ships the tritonserver binary) is not installed; `make test` adds it")
    root = Path(list(spec.submodule_search_locations)[0])
    server = root / "tritonserver"
    stub = server / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}" / "triton_python_backend_stub"
    if not (server / "bin" / "tritonserver").is_file() or not stub.is_file():
        pytest.skip(f"the nvidia-pytriton wheel at {root} has no tritonserver binary or no Python backend stub for this Python")
    return root
