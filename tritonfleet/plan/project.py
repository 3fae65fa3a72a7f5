"""Read Pulumi.yaml and a stack file and merge their config the way the Pulumi CLI does.

Stack values win over project defaults; `secure:` values stay secret placeholders and are never decrypted;
values become the strings the engine passes to a program (objects and arrays as JSON text).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tritonfleet.core.conventions import MAX_CONFIG_NESTING, SECRET_PLACEHOLDER  # where the offline plan puts secrets


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


# Bounds on a YAML document, checked on the parser's events before any value is built. PyYAML builds an alias as a
# shared reference, which the engine's JSON text then writes out in full: ten nested aliases of ten make 10^10 values
# (a "billion laughs" hung the tool at 3 GB). Go's yaml.v3, which the Pulumi CLI reads stack files with, likewise
# refuses "excessive aliasing" (decode.go, allowedAliasRatio). A stack file holds a few hundred values; nesting deeper
# than a few levels is a mistake, and PyYAML's composer recurses once per level (a RecursionError past ~1,000).
MAX_YAML_VALUES = 20_000  # values after expanding aliases (a stack of 100 deployments has about 1,500)
# PyYAML reads about 0.4 MB/s of plain text here (a 5 MB value took 14 s to read twice): past 1 MiB a stack file (the
# shipped ones take 1-3 KB) is a mistake that would read like a hang.
MAX_YAML_BYTES = 1 << 20
MAX_YAML_DEPTH = MAX_CONFIG_NESTING  # nested mappings and sequences


class _NoDuplicateKeysLoader(yaml.SafeLoader):
    """PyYAML's safe loader, noting each key given twice in one mapping (YAML 1.2 requires keys to be unique; PyYAML
    keeps the last silently). A merge (<<) is not a duplicate: the mapping's own keys override merged ones."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.duplicates: list[tuple[Any, int, int]] = []  # (key, line first given, line given again)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():  # the base refuses other nodes
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in first_line:
                self.duplicates.append((key, first_line[key], line))
            else:
                first_line[key] = line
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """A value, or a YAML error at its place where PyYAML's constructor fails on it with a Python error: a date
        that is no date (2026-13-45), `!!float abc`, `!!bool maybe`, an integer of more than 4,300 digits."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as error:
            kind = node.tag.rsplit(":", 1)[-1]
            digits = kind == "int" and isinstance(node.value, str) and len(node.value) > 4300
            why = f"a number of {len(node.value):,} digits: none this long is a value" if digits else f"not a valid {kind} ({error})"
            raise yaml.constructor.ConstructorError(None, None, why, node.start_mark) from None


def read_yaml(path: Path) -> Any:
    """A YAML file's document; a syntax error names the file, line and column with the parser's whole message.

    Text that is not UTF-8, aliases that expand past MAX_YAML_VALUES, nesting deeper than MAX_YAML_DEPTH and a key
    given twice in one mapping are ProjectErrors too (every duplicate key in one message)."""
    text = _utf8_text(path)
    if len(text) > MAX_YAML_BYTES:
        raise ProjectError(f"{path}:\n  {len(text):,} characters: a stack file takes a few thousand (at most {MAX_YAML_BYTES:,})")
    try:
        _check_size(text, path)
        loader = _NoDuplicateKeysLoader(text)
        try:
            document = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        raise ProjectError(_yaml_problem(path, exc)) from None
    except yaml.YAMLError as exc:
        raise ProjectError(f"{path} is not valid YAML: {exc}") from None
    if loader.duplicates:
        lines = [f"  {json.dumps(key, default=str)} on line {first} and again on line {again}" for key, first, again in sorted(loader.duplicates, key=lambda d: d[2])]
        raise ProjectError(
            f"{path}: {len(lines)} key(s) given twice in one mapping\n" + "\n".join(lines)
            + "\n  (YAML would keep the last silently: keep the one you mean, delete the other)"
        )
    return document


def _utf8_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProjectError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ProjectError(
            f"{path}, line {line}, column {column}:\n  not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8"
        ) from None


def _check_size(text: str, path: Path) -> None:
    """Refuse a document whose aliases expand past MAX_YAML_VALUES values or that nests deeper than MAX_YAML_DEPTH,
    counting on the parser's events (iterative, nothing built)."""
    expanded: dict[str, int] = {}  # anchor -> values in its node, aliases expanded
    open_nodes: list[list[Any]] = []  # [anchor, values so far] of each open mapping or sequence
    total, aliased = 0, False
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        where = f"{path}, line {event.start_mark.line + 1}"
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            open_nodes.append([event.anchor, 1])
            if len(open_nodes) > MAX_YAML_DEPTH:
                raise ProjectError(f"{where}:\n  nested more than {MAX_YAML_DEPTH} levels deep; a stack file needs a few")
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = open_nodes.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, size, aliased = None, expanded.get(event.anchor, 1), True
        else:
            continue
        if anchor is not None:
            expanded[anchor] = size
        if open_nodes:
            open_nodes[-1][1] += size
            count = open_nodes[-1][1]
        else:
            total += size
            count = total
        if count > MAX_YAML_VALUES:
            how = " through its aliases (*name)" if aliased else ""
            fix = "\n  (write the values out, or alias fewer times)" if aliased else ""
            raise ProjectError(f"{where}:\n  more than {MAX_YAML_VALUES:,} values{how}; a stack file holds a few hundred{fix}")


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


# A stack name as Pulumi takes it: letters, digits, '-', '_' and '.' (https://www.pulumi.com/docs/iac/concepts/stacks/,
# read 2026-12-05); it becomes part of file paths (stacks/Pulumi.<stack>.yaml, plans/<stack>.json,
# policies/config/<stack>.json), so a '/' would reach files outside them.
STACK_NAME_PATTERN = r"[A-Za-z0-9_.-]{1,100}"


def stack_file(project: Project, stack: str) -> Path:
    """The stack's file, once the name is one Pulumi takes (a ProjectError otherwise)."""
    if not re.fullmatch(STACK_NAME_PATTERN, stack):
        shown = json.dumps(stack[:100])[1:-1]  # control characters escaped
        raise ProjectError(f"no stack '{shown}': a stack name has letters, digits, '-', '_' and '.' only (at most 100)")
    return project.stack_dir / f"Pulumi.{stack}.yaml"


def stack_config(project: Project, stack: str) -> tuple[dict[str, str], list[str]]:
    """The merged config (full key -> engine string) and the keys that are secret."""
    path = stack_file(project, stack)
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
