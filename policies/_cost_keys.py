"""The cost-allocation check both clouds' rules run (aws-resource-require-cost-tags, gcp-resource-require-cost-labels).

A covered resource's own keys, over its provider's defaults where those reach it, must hold every required key with a
non-empty value. Each rule says what its cloud calls the keys and where a resource and its provider keep them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pulumi_policy import PolicyConfigSchema, ReportViolation, ResourceValidationArgs

from policies._match import string_map
from policies._settings import schema

REQUIRED_KEYS = ("team", "cost-center")


def cost_key_schema(noun: str, cloud: str, resource_types: Sequence[str], *, closed: bool = False) -> PolicyConfigSchema:
    """`required<Noun>s` (the keys, team and cost-center by default) and `resourceTypes` (the covered type tokens;
    `closed`: none but `resource_types`)."""
    item: dict[str, Any] = {"type": "string", "enum": list(resource_types)} if closed else {"type": "string"}
    return schema(
        **{
            f"required{noun.capitalize()}s": {
                "type": "array",
                "items": {"type": "string"},
                "default": list(REQUIRED_KEYS),
                "description": f"{noun} keys every covered resource carries",
            },
            "resourceTypes": {
                "type": "array",
                "items": item,
                "default": list(resource_types),
                "description": f"{cloud} resource type tokens that must carry the {noun}s",
            },
        }
    )


def provider_defaults(args: ResourceValidationArgs, provider_type: str, read: Callable[[Any], Any]) -> Any:
    """What `read` finds in the props of the resource's provider when that is a `provider_type` provider, else None."""
    if args.provider is None or args.provider.resource_type != provider_type:
        return None
    return read(args.provider.props)


def check_cost_keys(
    args: ResourceValidationArgs,
    report_violation: ReportViolation,
    noun: str,
    required: Sequence[str],
    own: Any,
    defaults: Any,
    *,
    where: str = "",
    fix: str = ".",
) -> None:
    """Report the `required` keys that `own` over `defaults` lacks; `where` and `fix` end the message's sentences."""
    keys = string_map(defaults) | string_map(own)
    missing = [key for key in required if not keys.get(key)]
    if missing:
        report_violation(
            f"'{args.name}' ({args.resource_type}) lacks cost-allocation {noun}(s) {', '.join(missing)}{where} "
            f"(has: {', '.join(sorted(keys)) or 'none'}). Set them in tritonfleet:tags{fix}",
            None,
        )
