"""From the engine's config mapping to a StackConfig, or one ConfigError listing every problem.

The Pulumi engine hands a program its config as strings keyed `<namespace>:<key>` (objects and arrays as JSON text).
`load_stack_config` decodes that mapping, validates it against the schema, runs the cross-field rules (rules/) and
the stack's cloud's rules (reached through the tritonfleet.clouds registry at call time), and reports all at once.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined

from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config.problems import MISSING, ConfigError, Problem, dedupe, rm_command, set_command
from tritonfleet.core.config.rules.buckets import check_buckets
from tritonfleet.core.config.rules.cluster import check_node_image, check_other_cloud_keys
from tritonfleet.core.config.rules.context import RuleContext, validate_section
from tritonfleet.core.config.rules.deployments import check_deployments
from tritonfleet.core.config.rules.pools import check_pools
from tritonfleet.core.config.rules.receivers import check_receivers
from tritonfleet.core.config.schema import CONFIG_KEYS, Cluster, StackConfig
from tritonfleet.core.conventions import CONFIG_NAMESPACE


def load_stack_config(raw: Mapping[str, Any], stack: str, secret_keys: Collection[str] = ()) -> StackConfig:
    """Validate the engine's config mapping for one stack; raise ConfigError listing every problem.

    `secret_keys` are the full config keys the engine marks secret; values that must be secrets are checked against it.
    """
    data, problems = _decode(raw, stack)
    config: StackConfig | None = None
    try:
        config = StackConfig.model_validate(data)
    except ValidationError as exc:
        problems.extend(_from_pydantic(e, data, stack) for e in exc.errors())
    problems.extend(cross_field_problems(data, stack, secret_keys))
    if problems:
        raise ConfigError(stack, dedupe(problems))
    assert config is not None
    return config.model_copy(update={"stack": stack})


def cross_field_problems(data: Mapping[str, Any], stack: str, secret_keys: Collection[str] = ()) -> list[Problem]:
    """Rules that span fields or need the catalog. They run on whatever parts of the config parse on their own."""
    from tritonfleet.clouds import CLOUDS, cloud_rules

    ctx = RuleContext(data, stack, load_catalog())
    if data.get("cloud") in CLOUDS:
        ctx.cloud = data["cloud"]
        ctx.rules = cloud_rules(ctx.cloud)
    region = data.get("region")
    ctx.region = region if isinstance(region, str) else None
    ctx.cluster = validate_section(Cluster, data.get("cluster", {}))
    if ctx.rules:
        ctx.rules.check_stack(ctx)
    if ctx.cluster is not None and ctx.rules:
        check_other_cloud_keys(ctx)
        check_node_image(ctx)
        ctx.rules.check_cluster(ctx, ctx.cluster)
    if ctx.cluster is not None and ctx.region is not None:
        ctx.stack_zones = ctx.rules.stack_zones(ctx.region, ctx.cluster) if ctx.rules else list(ctx.cluster.zones)
    pools = check_pools(ctx)
    bucket_names = check_buckets(ctx)
    check_deployments(ctx, pools, bucket_names)
    check_receivers(ctx, secret_keys)
    return ctx.problems


def _decode(raw: Mapping[str, Any], stack: str) -> tuple[dict[str, Any], list[Problem]]:
    """Pick this project's keys out of the engine's config and decode JSON text."""
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    known = set(CONFIG_KEYS)
    for full_key, value in sorted(raw.items()):
        namespace, _, key = full_key.partition(":")
        if namespace != CONFIG_NAMESPACE:
            continue
        if key not in known:
            problems.append(Problem(key, value, "one of " + ", ".join(sorted(known)), rm_command(key, stack)))
            continue
        if isinstance(value, str) and value[:1] in "[{":
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                problems.append(Problem(key, value, f"valid YAML/JSON ({exc.msg})", set_command(key, "<value>", stack)))
                continue
        data[key] = value
    return data, problems


def _from_pydantic(error: dict[str, Any], data: Mapping[str, Any], stack: str) -> Problem:
    """A schema error as a Problem: the field's description says what is allowed, its default is the suggested fix."""
    loc = tuple(error["loc"])
    key = _key(loc)
    value = _lookup(data, loc)
    if error["type"] == "extra_forbidden":
        return Problem(key, value, "no such key here; see the configuration reference in the README", rm_command(key, stack))
    info = _field_for(loc)
    allowed = info.description if info and info.description else error["msg"]
    if error["type"] not in ("missing",) and error["msg"] not in allowed:
        allowed = f"{allowed} ({error['msg'].lower()})"
    suggestion: Any = "<value>"
    if info is not None and error["type"] == "literal_error":
        suggestion = str(error["ctx"]["expected"]).split(" or ")[0].split(",")[0].strip("' ")
    elif info is not None and info.examples:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        suggestion = f"{value}ms" if number and str(info.examples[0]).endswith("ms") else info.examples[0]
    elif info is not None and not info.is_required() and info.default not in (None, PydanticUndefined) and not callable(info.default):
        suggestion = info.default
    return Problem(key, value, allowed, set_command(key, suggestion, stack))


def _key(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a config key path: gpuPools[0].gpu."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _field_for(loc: tuple[Any, ...]):
    """The pydantic FieldInfo a location points at, or None."""
    model: Any = StackConfig
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None or not hasattr(model, "model_fields"):
            return None
        info = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if info is None:
            return None
        annotation = info.annotation
        args = getattr(annotation, "__args__", ())
        model = next((a for a in (annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return info


def _lookup(data: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return MISSING
    return data
