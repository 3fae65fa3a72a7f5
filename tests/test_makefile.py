"""The README's two commands as make runs them on a fresh clone (`make -n`: printed, not run): `make plan` installs
only the runtime and shows its progress; the test tools come with `make test`, behind a stamp of their own."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def dry_run(tmp_path, target: str, *variables: str) -> list[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    fresh = tmp_path / "fresh-venv"  # no stamps: what a fresh clone runs
    # Under `make test` the suite itself runs inside make: drop the parent's MAKELEVEL/MAKEFLAGS so this make
    # prints only its recipes, as on a user's shell.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    result = subprocess.run(
        [make, "--no-print-directory", "-n", target, f"VENV={fresh}", f"PYTHON={tmp_path}/python3", *variables],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.replace(str(fresh), "VENV").splitlines()


def test_make_plan_installs_only_the_runtime_and_shows_progress(tmp_path):
    lines = dry_run(tmp_path, "plan", "STACK=prod")
    assert lines[0].startswith('echo "==> installing runtime packages') and "first run only" in lines[0]
    assert "VENV/bin/pip install -c constraints.txt -e ." in lines
    assert not any("[test]" in line or "pytriton" in line or "checkov" in line for line in lines)
    assert not any("--quiet" in line or " -q " in line for line in lines), "pip's progress stays visible"
    assert lines[-1] == "VENV/bin/tritonfleet plan --stack prod --json plans/prod.json"


def test_make_test_adds_the_test_tools_behind_their_own_stamp(tmp_path):
    lines = dry_run(tmp_path, "test")
    assert "VENV/bin/pip install -c constraints.txt -e '.[test]'" in lines
    assert "VENV/bin/pip install --no-deps nvidia-pytriton==0.7.0" in lines
    # focus-validator (tests/test_focus_validator.py) in a virtualenv of its own, pinned, where it is not yet made
    if not (ROOT / "venv-focus" / ".installed").exists():
        assert any(line.startswith("venv-focus/bin/pip install focus-validator==1.0.0 multimethod==1.10") for line in lines)
    assert lines.index("touch VENV/.installed") < lines.index("VENV/bin/pip install -c constraints.txt -e '.[test]'") < lines.index("touch VENV/.installed-test")
    assert lines[-1] == "env -u PYTHONDONTWRITEBYTECODE VENV/bin/python -m pytest -n 5 --dist loadscope --no-loadscope-reorder -q"



def test_installs_resolve_from_the_constraints_file():
    """constraints.txt holds every version pyproject's pins resolve to (scripts/constraints.py writes it), each pin
    as pyproject says; requirements.txt (the Pulumi CLI's install) includes it; the license is an SPDX expression,
    which needs setuptools >= 77 to build."""
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert project["build-system"]["requires"] == ["setuptools>=77"]
    lines = [line for line in (ROOT / "constraints.txt").read_text().splitlines() if line and not line.startswith("#")]
    pinned = dict(line.split("==") for line in lines)
    assert len(pinned) == len(lines) and all(re.fullmatch(r"[a-z0-9-]+", name) for name in pinned)
    assert "setuptools" not in pinned and "nvidia-pytriton" not in pinned and "tritonfleet" not in pinned
    for requirement in project["project"]["dependencies"] + project["project"]["optional-dependencies"]["test"]:
        name, version = re.sub(r"\[.*\]", "", requirement).split("==")
        assert pinned[re.sub(r"[-_.]+", "-", name.lower())] == version, requirement
    assert "-c constraints.txt" in (ROOT / "requirements.txt").read_text().splitlines()
