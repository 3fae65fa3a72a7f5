"""A stack's policy config file (`--policy-pack-config`), reconciled the way the Pulumi CLI does it.

Start from each policy's own enforcement level and its schema defaults, apply `all`, then the policy's entry (an
enforcement level string, or an object with an optional enforcementLevel and properties), then validate the
properties against the policy's JSON schema. The SDK applies none of this itself, so the offline runner must.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PackConfigError(Exception):
    """The policy config file is missing, unreadable or does not fit the pack (the message lists every problem)."""


@dataclass(frozen=True)
class PolicyMeta:
    name: str
    enforcement: str
    schema_properties: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class Configured:
    enforcement: str
    properties: dict[str, Any]


def load(path: Path) -> dict[str, Any]:
    from tritonfleet.core.strict_json import StrictJsonError, read_json

    if not path.exists():
        raise PackConfigError(
            f"policy config {path} does not exist; create it with `tritonfleet policy init --stack {path.stem}` "
            "(see docs/policies.md)"
        )
    try:
        data = read_json(path)  # strictly: no NaN, no key given twice
    except StrictJsonError as exc:
        raise PackConfigError(f"policy config: {exc}") from None
    if not isinstance(data, dict):
        raise PackConfigError(f"policy config {path} must be a JSON object keyed by policy name")
    return data


def reconcile(policies: list[PolicyMeta], config: dict[str, Any], source: str = "policy config") -> dict[str, Configured]:
    problems: list[str] = []
    known = {p.name for p in policies}
    for key in sorted(set(config) - known - {"all"}):
        problems.append(f"{key}: no such policy in the pack (policies: {', '.join(sorted(known))})")
    default_level = config.get("all")
    if default_level is not None and default_level not in LEVELS:
        problems.append(f"all: {json.dumps(default_level)} is not one of {', '.join(LEVELS)}")
        default_level = None
    result: dict[str, Configured] = {}
    for policy in policies:
        level = default_level or policy.enforcement
        properties = {k: spec["default"] for k, spec in policy.schema_properties.items() if "default" in spec}
        entry = config.get(policy.name)
        if isinstance(entry, str):
            level = entry
        elif isinstance(entry, dict):
            level = entry.get("enforcementLevel", level)
            properties.update({k: v for k, v in entry.items() if k != "enforcementLevel"})
        elif entry is not None:
            problems.append(f"{policy.name}: must be an enforcement level or an object, not {json.dumps(entry)}")
        if level not in LEVELS:
            problems.append(f"{policy.name}.enforcementLevel: {json.dumps(level)} is not one of {', '.join(LEVELS)}")
            continue
        schema = {"type": "object", "properties": policy.schema_properties, "required": list(policy.required)}
        if not policy.schema_properties:
            schema["additionalProperties"] = False
        for error in sorted(jsonschema.Draft7Validator(schema).iter_errors(properties), key=lambda e: list(e.path)):
            where = ".".join(str(p) for p in error.path)
            problems.append(f"{policy.name}{'.' + where if where else ''}: {error.message}")
        result[policy.name] = Configured(level, properties)
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise PackConfigError(f"{source} does not fit the policy pack:\n{lines}")
    return result
