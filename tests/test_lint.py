"""The code passes the project's linter (ruff, configured in pyproject.toml)."""

import subprocess
import sys

from conftest import ROOT


def test_ruff_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
