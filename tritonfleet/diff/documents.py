"""Reading plan documents (the JSON `tritonfleet plan --json` writes) for a diff, with errors a user can act on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REQUIRED_KEYS = ("format", "stack", "resources", "cost")


class DiffInputError(Exception):
    """A plan document is missing, unreadable or not a plan document."""


def check_plan(document: Any, source: str) -> dict[str, Any]:
    """Return `document` if it looks like a plan document, else raise DiffInputError naming what is wrong."""
    if not isinstance(document, dict):
        raise DiffInputError(f"{source} is not a tritonfleet plan document: expected a JSON object, got {type(document).__name__}")
    missing = [key for key in REQUIRED_KEYS if key not in document]
    if missing:
        raise DiffInputError(
            f"{source} is not a tritonfleet plan document: missing {', '.join(missing)} "
            "(write one with `tritonfleet plan --stack STACK --json FILE`)"
        )
    if not isinstance(document["resources"], list) or not isinstance(document["cost"], dict):
        raise DiffInputError(f"{source} is not a tritonfleet plan document: 'resources' must be a list and 'cost' an object")
    bad = [i for i, r in enumerate(document["resources"]) if not isinstance(r, dict) or not isinstance(r.get("urn"), str)]
    if bad:
        raise DiffInputError(f"{source}: resources[{bad[0]}] has no 'urn' string")
    return document


def load_plan(path: Path) -> dict[str, Any]:
    return check_plan(read_document(path), str(path))


def read_document(path: Path) -> Any:
    """The JSON in `path`, or a DiffInputError saying why it cannot be read."""
    if not path.exists():
        raise DiffInputError(f"{path} does not exist")
    try:
        text = path.read_text()
    except OSError as exc:
        raise DiffInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DiffInputError(f"{path} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


def load_plans(path: Path) -> dict[str, dict[str, Any]]:
    """One plan document (a file) or every `*.json` plan document in a folder, keyed by stack name."""
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise DiffInputError(f"{path} holds no *.json plan documents")
    else:
        files = [path]
    plans: dict[str, dict[str, Any]] = {}
    for file in files:
        document = load_plan(file)
        stack = document["stack"]
        if stack in plans:
            raise DiffInputError(f"{path}: two plan documents for stack '{stack}'")
        plans[stack] = document
    return plans


def plans_from_paths(base: Path, head: Path, stacks: list[str] | None) -> tuple[dict[str, dict], dict[str, dict]]:
    """Base and head plans keyed by stack, from two files or two folders, limited to `stacks` if given."""
    base_plans, head_plans = load_plans(base), load_plans(head)
    if stacks:
        missing = sorted(set(stacks) - set(base_plans) - set(head_plans))
        if missing:
            raise DiffInputError(f"no plan for stack {', '.join(missing)} in {base} or {head}")
        return {s: p for s, p in base_plans.items() if s in stacks}, {s: p for s, p in head_plans.items() if s in stacks}
    if base.is_file() and head.is_file():
        # Two single documents are compared with each other, even when their stack names differ.
        (stack,) = head_plans
        return {stack: next(iter(base_plans.values()))}, head_plans
    return base_plans, head_plans


def relative_to_checkout(value: Any, root: str) -> Any:
    """Replace the checkout's absolute path in string values with `.`, so two checkouts of the same program compare equal.

    (An absolute path among a resource's inputs, such as a local Helm chart, differs between any two checkouts.)
    """
    if isinstance(value, dict):
        return {k: relative_to_checkout(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_to_checkout(v, root) for v in value]
    if isinstance(value, str) and (value == root or value.startswith(root + "/")):
        return "." + value[len(root):]
    return value
