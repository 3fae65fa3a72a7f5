"""A violation's fix given two ways, as configuration problems give it (tritonfleet/core/config/problems.py): the
`pulumi config set` line and the edit of the stack file, for those without the Pulumi CLI (the offline path)."""

from __future__ import annotations

from typing import Any

from tritonfleet.core.config.problems import both_ways, set_command


def stack_of(urn: str) -> str:
    """The stack a resource belongs to, read from its URN (urn:pulumi:<stack>::<project>::<type>::<name>)."""
    return urn.split("::", 1)[0].rsplit(":", 1)[-1]


def config_fix(urn: str, changes: dict[str, Any], where: str = "") -> str:
    """'Fix: <commands>, or in stacks/Pulumi.<stack>.yaml, set <key> to <value> ...' for the settings `changes`
    (keys below the namespace; `<i>` for an index the policy cannot see, which `where` then names)."""
    stack = stack_of(urn)
    return f"Fix{where}: {both_ways(' && '.join(set_command(key, value, stack) for key, value in changes.items()))}."
