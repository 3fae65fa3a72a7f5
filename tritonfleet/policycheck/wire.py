"""What the engine would send the analyzer for each resource of an offline plan document.

The plan records inputs in wire (camelCase) form with unknowns written as "<unknown>" and secrets as "[secret]";
unknowns go back to the engine's sentinel so policies meet them exactly as in a real preview.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

UNKNOWN_SENTINEL = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # what the engine sends for a value not known in preview


def wire_value(value: Any) -> Any:
    """`value` as the analyzer receives it: unknowns as the sentinel, and every number a float (a protobuf Struct has
    only doubles: chart version 5 reaches a policy as 5.0)."""
    if isinstance(value, dict):
        return {k: wire_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [wire_value(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return UNKNOWN_SENTINEL if value == "<unknown>" else value


@dataclass(frozen=True)
class PlanResource:
    urn: str
    type: str
    name: str
    props: dict[str, Any]
    protect: bool
    ignore_changes: tuple[str, ...]
    parent: str
    dependencies: tuple[str, ...]
    provider_urn: str
    delete_before_replace: bool


def plan_resources(plan: dict[str, Any]) -> list[PlanResource]:
    return [
        PlanResource(
            urn=r["urn"],
            type=r["type"],
            name=r["name"],
            props=wire_value(r.get("inputs") or {}),
            protect=bool(r.get("protect")),
            ignore_changes=tuple(r.get("ignoreChanges") or ()),
            parent=r.get("parent") or "",
            dependencies=tuple(r.get("dependsOn") or ()),
            provider_urn=r.get("provider") or "",
            delete_before_replace=bool(r.get("deleteBeforeReplace")),
        )
        for r in plan["resources"]
    ]
