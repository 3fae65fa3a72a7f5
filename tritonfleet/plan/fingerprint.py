"""The fingerprint of what a plan is made from, so a saved plan can be reused only while it is still true.

A plan depends on the stack's config file, Pulumi.yaml, the program (`__main__.py`, `components/`, the charts it
installs), the policy pack and its configs (`policies/`), tritonfleet itself, the pinned SDK versions
(pyproject.toml), and the loadtest results the stack's deployments size from (`loadtestResult.path`). Each part is digested by relative path and content, so a clone in another folder has the same
fingerprint, and a stale plan can say which part changed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

from tritonfleet.plan.project import Project, ProjectError, read_yaml, stack_file

PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "pyproject.toml")
PROJECT_FOLDERS = ("policies", "charts")
PACKAGES = ("tritonfleet", "components")  # the code that runs: the project's copy, else the installed one
SKIPPED_FOLDERS = {"__pycache__", "venv", ".venv", "node_modules"}
SKIPPED_SUFFIXES = (".pyc", ".pyo")


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _folder_digest(folder: Path) -> str:
    """One digest over every file below `folder` (relative path and content), caches and virtualenvs left out."""
    digest = hashlib.sha256()
    for current, folders, files in os.walk(folder, followlinks=True):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS and not f.startswith("."))
        for name in sorted(files):
            if name.endswith(SKIPPED_SUFFIXES):  # hidden files count (a chart's .helmignore)
                continue
            path = Path(current) / name
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(_file_digest(path).encode() + b"\n")
    return digest.hexdigest()


def _package_folder(project_dir: Path, name: str) -> Path | None:
    """The folder of the package a plan of this project runs: the project's own, else the importable one."""
    if (project_dir / name / "__init__.py").is_file():
        return project_dir / name
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _loadtest_results(stack_file: Path) -> list[str]:
    """The `tritonDeployments[].loadtestResult.path` values of a stack file (none when it does not parse: the plan
    then fails on the config and is never reused)."""
    try:
        document = read_yaml(stack_file)
        deployments = document["config"]["tritonfleet:tritonDeployments"]
        return sorted({d["loadtestResult"]["path"] for d in deployments if isinstance(d.get("loadtestResult"), dict)})
    except (ProjectError, KeyError, TypeError, AttributeError):
        return []


def input_digests(project: Project, stack: str) -> dict[str, str]:
    """Digest of each input of a plan of `stack`, by a name users recognise (a path relative to the project)."""
    directory = project.directory
    file = stack_file(project, stack)
    shown_stack = file.relative_to(directory).as_posix() if file.is_relative_to(directory) else file.name
    parts = {shown_stack: _file_digest(file) if file.is_file() else "missing"}
    for name in PROJECT_FILES:
        path = directory / name
        parts[name] = _file_digest(path) if path.is_file() else "missing"
    for name in PROJECT_FOLDERS:
        parts[f"{name}/"] = _folder_digest(directory / name) if (directory / name).is_dir() else "missing"
    for name in PACKAGES:
        folder = _package_folder(directory, name)
        parts[f"{name}/"] = _folder_digest(folder) if folder else "missing"
    for relative in _loadtest_results(file):
        path = directory / str(relative)
        parts[str(relative)] = _file_digest(path) if path.is_file() else "missing"
    return dict(sorted(parts.items()))


def fingerprint_section(parts: dict[str, str]) -> dict[str, object]:
    """The plan document's `fingerprint` section: one digest over all parts, and each part's digest."""
    combined = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return {"digest": combined, "parts": parts}


def changed_parts(saved: object, current: dict[str, str]) -> list[str]:
    """Which inputs differ between a saved plan's `fingerprint` section and the current ones (sorted names)."""
    old = saved.get("parts") if isinstance(saved, dict) else None
    if not isinstance(old, dict):
        return sorted(current)
    return sorted(name for name in set(old) | set(current) if old.get(name) != current.get(name))
