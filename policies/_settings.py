"""Policy config with the schema defaults applied: the Pulumi CLI fills them in, the SDK and direct calls do not."""

from __future__ import annotations

from typing import Any

from pulumi_policy import PolicyConfigSchema


def settings(args: Any, schema: PolicyConfigSchema) -> dict[str, Any]:
    """`args.get_config()` over the schema's defaults (numbers may arrive as floats: callers convert)."""
    merged = {key: spec["default"] for key, spec in schema.properties.items() if "default" in spec}
    merged.update(args.get_config() or {})
    return merged


def schema(**properties: dict[str, Any]) -> PolicyConfigSchema:
    return PolicyConfigSchema(properties=properties)
