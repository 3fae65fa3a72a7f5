"""The configuration reference, derived from the schema: Pulumi.yaml's `config:` block and the README table.

Tests check that both files match what these functions produce, so the schema stays the one source.
"""

from __future__ import annotations

import json
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from tritonfleet.core.config import StackConfig

_SIMPLE = {str: "string", int: "integer", bool: "boolean"}


def _simple_type(annotation: Any) -> str | None:
    options = [a for a in (get_args(annotation) or (annotation,)) if a is not type(None)]
    if get_origin(annotation) is not None and str(get_origin(annotation)) == "typing.Literal":
        return "string"
    if len(options) == 1 and options[0] in _SIMPLE:
        return _SIMPLE[options[0]]
    if all(get_origin(o) is not None and str(get_origin(o)) == "typing.Literal" for o in options):
        return "string"
    return None


def project_config_declarations() -> dict[str, dict[str, Any]]:
    """Pulumi.yaml `config:` entries. Primitive keys get a type (and their default); structured keys
    (objects and lists of objects) are declared with a description only, because the project file's type
    system has no object type we can rely on; the schema validates them."""
    declarations: dict[str, dict[str, Any]] = {}
    for name, field in StackConfig.model_fields.items():
        if field.exclude:  # filled in by the loader (stack, bucket_owner), not config keys
            continue
        entry: dict[str, Any] = {"description": field.description or ""}
        simple = _simple_type(field.annotation)
        # A typed key without a default is required by the CLI, so optional keys with no default stay untyped.
        if simple and (field.is_required() or field.default is not None):
            entry["type"] = simple
            if not field.is_required():
                entry["default"] = field.default
        declarations[field.alias or name] = entry
    return declarations


def _rows(model: type[BaseModel], prefix: str) -> list[tuple[str, str, str]]:
    rows = []
    for name, field in model.model_fields.items():
        if field.exclude:  # filled in by the loader (stack, bucket_owner), not config keys
            continue
        key = f"{prefix}{field.alias or name}"
        annotation = field.annotation
        nested = next((a for a in (annotation, *get_args(annotation)) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if field.is_required():
            default = "required"
        elif field.default_factory is not None:
            default = "see below" if nested else "empty"
        else:
            default = "unset" if field.default is None else f"`{json.dumps(field.default)}`"
        rows.append((key, default, field.description or ""))
        if nested:
            child_prefix = f"{key}[]." if get_origin(annotation) is list else f"{key}."
            rows.extend(_rows(nested, child_prefix))
    return rows


def markdown_reference() -> str:
    lines = ["| key (`tritonfleet:` namespace) | default | allowed |", "|---|---|---|"]
    lines += [f"| `{key}` | {default} | {allowed} |" for key, default, allowed in _rows(StackConfig, "")]
    return "\n".join(lines) + "\n"
