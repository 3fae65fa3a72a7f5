"""Read Pulumi.yaml and a stack file and merge their config the way the Pulumi CLI does.

Stack values win over project defaults; `secure:` values stay secret placeholders and are never decrypted;
values become the strings the engine passes to a program (objects and arrays as JSON text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tritonfleet.core.conventions import SECRET_PLACEHOLDER  # where the offline plan puts secrets


class ProjectError(Exception):
    """Pulumi.yaml or a stack file is missing or malformed."""


@dataclass(frozen=True)
class Project:
    directory: Path
    name: str
    stack_dir: Path
    declared: dict[str, dict[str, Any]]  # project config declarations: key -> {type, description, default}

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.stack_dir.glob("Pulumi.*.yaml"))


def find_project(start: Path) -> Path:
    for directory in [start.resolve(), *start.resolve().parents]:
        if (directory / "Pulumi.yaml").is_file():
            return directory
    raise ProjectError(f"no Pulumi.yaml in {start} or above it; run from the tritonfleet checkout or pass --project-dir")


def read_yaml(path: Path) -> Any:
    """A YAML file's document; a syntax error names the file, line and column with the parser's whole message."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(f"cannot read {path}: {exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        raise ProjectError(_yaml_problem(path, exc)) from None
    except yaml.YAMLError as exc:
        raise ProjectError(f"{path} is not valid YAML: {exc}") from None


def _yaml_problem(path: Path, exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
    lines = [f"{where}: not valid YAML: {exc.problem or exc.context}"]
    if exc.context and exc.problem and exc.context_mark:
        lines.append(f"  {exc.context} at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}")
    snippet = mark.get_snippet() if mark else None
    if snippet:
        lines.append(snippet)
    return "\n".join(lines)


def _mapping(value: Any, what: str) -> dict[str, Any]:
    """`value` as a mapping (None is empty), or a ProjectError saying what `what` must be."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProjectError(f"{what} must be a mapping of keys to values, not {type(value).__name__} {json.dumps(value, default=str)[:200]}")
    return value


def load_project(directory: Path) -> Project:
    path = directory / "Pulumi.yaml"
    document = _mapping(read_yaml(path), f"{path}")
    if not isinstance(document.get("name"), str):
        raise ProjectError(f"{path} needs a project name (name: tritonfleet)")
    declared = {}
    for key, spec in _mapping(document.get("config"), f"{path}: config").items():
        declared[str(key)] = spec if isinstance(spec, dict) else {"default": spec}
    return Project(
        directory=directory,
        name=document["name"],
        stack_dir=directory / str(document.get("stackConfigDir", ".")),
        declared=declared,
    )


def engine_string(value: Any) -> str:
    """A config value as the engine hands it to the program."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, set)):
        return json.dumps(_json_ready(value), sort_keys=True)
    return _text(value)


def _json_ready(value: Any) -> Any:
    """`value` with what YAML gives but JSON lacks (dates, !!binary, !!set, keys that are not text) as text, the way a
    JSON encoder writes keys, so a user's odd value reaches validation instead of a traceback."""
    if isinstance(value, dict):
        return {_json_key(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, set):
        return sorted((_json_ready(item) for item in value), key=json.dumps)
    if isinstance(value, list):
        return [_json_ready(item) for item in value]
    if value is None or isinstance(value, (str, int, float)):
        return value
    return _text(value)


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    return json.dumps(key) if key is None or isinstance(key, (bool, int, float)) else _text(key)


def _text(value: Any) -> str:
    if isinstance(value, bytes):  # !!binary
        return value.decode("utf-8", errors="replace")
    return str(value)


def _has_secret(value: Any) -> bool:
    if isinstance(value, dict):
        return "secure" in value and len(value) == 1 or any(_has_secret(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_secret(v) for v in value)
    return False


def _hide_secrets(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER
        return {k: _hide_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hide_secrets(v) for v in value]
    return value


def stack_config(project: Project, stack: str) -> tuple[dict[str, str], list[str]]:
    """The merged config (full key -> engine string) and the keys that are secret."""
    path = project.stack_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise ProjectError(f"no stack '{stack}': {path} does not exist (stacks here: {known})")
    document = _mapping(read_yaml(path), f"{path}")
    merged: dict[str, Any] = {}
    for key, spec in project.declared.items():
        full = key if ":" in key else f"{project.name}:{key}"
        if "default" in spec:
            merged[full] = spec["default"]
        elif "value" in spec:
            merged[full] = spec["value"]
    secret_keys: list[str] = []
    for key, value in _mapping(document.get("config"), f"{path}: config").items():
        key = str(key)
        if ":" not in key:
            raise ProjectError(f"{path}: config key '{key}' needs a namespace, e.g. {project.name}:{key}")
        if _has_secret(value):
            secret_keys.append(key)
        merged[key] = _hide_secrets(value)
    return {k: engine_string(v) for k, v in sorted(merged.items())}, sorted(secret_keys)
