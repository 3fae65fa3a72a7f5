"""From the engine's config mapping to a StackConfig, or one ConfigError listing every problem.

The Pulumi engine hands a program its config as strings keyed `<namespace>:<key>` (objects and arrays as JSON text).
`load_stack_config` decodes that mapping, validates it against the schema, runs the cross-field rules (rules/) and
the stack's cloud's rules (reached through the tritonfleet.clouds registry at call time), and reports all at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined

from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config.problems import (
    MISSING,
    ConfigError,
    Problem,
    choose_from,
    dedupe,
    nearest,
    rename_command,
    rm_command,
    set_command,
)
from tritonfleet.core.config.rules.buckets import check_buckets
from tritonfleet.core.config.rules.cluster import (
    check_control_plane,
    check_deploy_path,
    check_node_image,
    check_other_cloud_keys,
    check_region,
    check_system_nodes,
)
from tritonfleet.core.config.rules.context import RuleContext, validate_section
from tritonfleet.core.config.rules.deployments import check_deployments
from tritonfleet.core.config.rules.pools import check_pools
from tritonfleet.core.config.rules.receivers import check_receivers
from tritonfleet.core.config.rules.sizing import check_sizing
from tritonfleet.core.config.schema import CONFIG_KEYS, Cluster, StackConfig
from tritonfleet.core.conventions import CONFIG_NAMESPACE, MAX_CONFIG_NESTING, nesting


def load_stack_config(raw: Mapping[str, Any], stack: str, secret_keys: Collection[str] = ()) -> StackConfig:
    """Validate the engine's config mapping for one stack; raise ConfigError listing every problem.

    `secret_keys` are the full config keys the engine marks secret; values that must be secrets are checked against it.
    """
    data, problems = _decode(raw, stack)
    config: StackConfig | None = None
    schema_problems: list[Problem] = []
    try:
        config = StackConfig.model_validate(data)
    except ValidationError as exc:
        schema_problems = [_from_pydantic(e, data, stack) for e in exc.errors()]
    rule_problems = cross_field_problems(data, stack, secret_keys)
    problems.extend(_without_knock_on(schema_problems, problems + schema_problems, rule_problems))
    problems.extend(rule_problems)
    if problems:
        raise ConfigError(stack, dedupe(problems))
    assert config is not None
    from tritonfleet.core.cloud import cloud

    owner = getattr(config, cloud(config.cloud).rules.BUCKET_OWNER_FIELD) or ""
    return with_llm_defaults(config.model_copy(update={"stack": stack, "bucket_owner": owner}))


def with_llm_defaults(config: StackConfig) -> StackConfig:
    """An LLM deployment that leaves them unset gets its backend's pinned image and the smallest tensor-parallel size
    that fits its pool's GPUs (the rules refused the stack where none does)."""
    from tritonfleet.core import llm as llm_memory
    from tritonfleet.core import pins

    deployments = []
    for d in config.triton_deployments:
        if d.llm is not None and "image_tag" not in d.model_fields_set:
            d = d.model_copy(update={"image_tag": pins.TRITON_LLM_IMAGE_TAGS[d.llm.backend]})
        arch = llm_memory.architecture_of(d.llm) if d.llm is not None else None
        if arch is not None and "gpus_per_replica" not in d.model_fields_set:
            itype = config.instance_type(config.pool(d.pool))
            tp = llm_memory.smallest_fitting_tensor_parallel(d.llm, arch, itype.gpu, itype.gpu_count)
            d = d.model_copy(update={"gpus_per_replica": tp or d.gpus_per_replica})
        deployments.append(d)
    return config.model_copy(update={"triton_deployments": deployments})


def cross_field_problems(data: Mapping[str, Any], stack: str, secret_keys: Collection[str] = ()) -> list[Problem]:
    """Rules that span fields or need the catalog. They run on whatever parts of the config parse on their own."""
    from tritonfleet.core.cloud import cloud, cloud_names

    ctx = RuleContext(data, stack, load_catalog())
    if data.get("cloud") in cloud_names():
        ctx.cloud = data["cloud"]
        ctx.rules = cloud(ctx.cloud).rules
    region = data.get("region")
    ctx.region = region if isinstance(region, str) else None
    ctx.cluster = validate_section(Cluster, data.get("cluster", {}))
    if ctx.rules:
        check_region(ctx)
        ctx.rules.check_stack(ctx)
    if ctx.cluster is not None and ctx.rules:
        check_other_cloud_keys(ctx)
        check_node_image(ctx)
        check_control_plane(ctx)
        check_system_nodes(ctx)
        check_deploy_path(ctx)
        ctx.rules.check_cluster(ctx, ctx.cluster)
    if ctx.cluster is not None and ctx.region is not None:
        ctx.stack_zones = ctx.rules.stack_zones(ctx.region, ctx.cluster) if ctx.rules else list(ctx.cluster.zones)
    pools = check_pools(ctx)
    bucket_names = check_buckets(ctx)
    check_deployments(ctx, pools, bucket_names)
    check_receivers(ctx, secret_keys)
    check_sizing(ctx)
    return ctx.problems


def _without_knock_on(
    schema_problems: list[Problem], key_problems: list[Problem], rule_problems: list[Problem]
) -> list[Problem]:
    """The schema's problems less those that only follow from another: a required key reported missing because the
    user misspelt it (the misspelling is reported with the right name), and the schema's generic text on a key a rule
    explains better (a rule that reads the raw value, such as the region's, reports that key itself)."""
    renamed = {p.renamed_to for p in key_problems if p.renamed_to}
    explained = {p.key for p in rule_problems}
    return [
        p for p in schema_problems if not (p.value is MISSING and p.key in renamed) and p.key not in explained
    ]


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
            problem = _unknown_key(key, value, sorted(known), "", stack)
            problems.append(problem)
            meant = problem.renamed_to
            if meant is None or f"{CONFIG_NAMESPACE}:{meant}" in raw or "." in meant or "[" in meant:
                continue
            key = meant  # checked as the key it was meant to be, so the typo hides none of its other problems
        if isinstance(value, str) and value[:1] in "[{":
            text = value
            try:
                value = json.loads(text)
                too_deep = nesting(value, MAX_CONFIG_NESTING) > MAX_CONFIG_NESTING
            except RecursionError:  # nested deeper than the JSON parser recurses
                too_deep = True
            except json.JSONDecodeError as exc:
                if _takes_text(key):  # "[/x]" given as a region is a bad region, not bad JSON
                    data[key] = value
                    continue
                allowed = f"valid YAML/JSON ({exc.msg} at character {exc.pos + 1})"
                problems.append(Problem(key, value, allowed, set_command(key, "<value>", stack)))
                continue
            except ValueError:  # an integer of more than 4,300 digits, which Python refuses to read
                allowed = "numbers of at most 4,300 digits (the bounds of each key are far below)"
                problems.append(Problem(key, text, allowed, set_command(key, "<value>", stack)))
                continue
            if too_deep:
                allowed = f"an object or list nested at most {MAX_CONFIG_NESTING} levels deep"
                problems.append(Problem(key, text, allowed, set_command(key, "<value>", stack)))
                continue
        data[key] = value
    return data, problems


def _takes_text(key: str) -> bool:
    """Whether a top-level key's value is text (so a value that looks like JSON but is not is taken as text)."""
    field = next((f for n, f in StackConfig.model_fields.items() if (f.alias or n) == key), None)
    return field is not None and field.annotation in (str, str | None)


def _from_pydantic(error: dict[str, Any], data: Mapping[str, Any], stack: str) -> Problem:
    """A schema error as a Problem: the field's description says what is allowed, its default is the suggested fix."""
    loc = tuple(error["loc"])
    key = _key(loc)
    value = _lookup(data, loc)
    if error["type"] == "extra_forbidden":
        return _unknown_key(key, value, _keys_at(loc[:-1]), _key(loc[:-1]), stack)
    info = _field_for(loc)
    allowed = info.description if info and info.description else error["msg"]
    if error["type"] not in ("missing",) and error["msg"] not in allowed:
        allowed = f"{allowed} ({error['msg'].lower()})"
    return Problem(key, value, allowed, set_command(key, _suggestion(error, info, value), stack))


def _suggestion(error: dict[str, Any], info: Any, value: Any) -> Any:
    """The value a schema problem's fix sets: the nearest valid value where one is known, else the key's default,
    else a placeholder naming the choices."""
    kind, limits = error["type"], error.get("ctx", {})
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(limits["expected"]))
        return nearest(value, choices) or choose_from(choices)
    if kind in ("greater_than_equal", "less_than_equal"):  # the bound itself is the nearest valid value
        return limits["ge" if kind == "greater_than_equal" else "le"]
    if kind == "string_pattern_mismatch":
        fitted = _fit_pattern(value, limits["pattern"])
        if fitted is not None:
            return fitted
    if info is not None and info.examples:  # a number where a duration is due gets its unit: 20 -> 20ms
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return f"{value}ms" if number and str(info.examples[0]).endswith("ms") else info.examples[0]
    if info is not None and not info.is_required() and info.default not in (None, PydanticUndefined) and not callable(info.default):
        return info.default
    return "<value>"


def _fit_pattern(value: Any, pattern: str) -> str | None:
    """`value` lower-cased with runs of other characters as '-', cut to fit `pattern` if that is all it takes."""
    if not isinstance(value, str):
        return None
    candidate = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
    for length in (len(candidate), 63, 40, 20):
        cut = candidate[:length].rstrip("-")
        if cut and re.fullmatch(pattern, cut):
            return cut
    return None


# Keys an earlier version read, with what replaced them and why: a stack written for it gets the way forward, not a
# "did you mean" guess that would move the old value into a key of another meaning.
RETIRED_KEYS = {
    "cluster.existingVpcCidr": (
        "cluster.existingLoadBalancerCidrs[0]",
        "replaced by cluster.existingLoadBalancerCidrs, the CIDRs of the VPC's load-balancer subnets (Triton's "
        "NetworkPolicies admit the load balancers from them; the VPC CIDR would admit every pod)",
        "<load-balancer subnet CIDR>",
    ),
}


def _unknown_key(key: str, value: Any, known: list[str], parent: str, stack: str) -> Problem:
    """A key the schema does not have: "did you mean" the closest known key, with the rename as the fix."""
    if key in RETIRED_KEYS:
        successor, why, placeholder = RETIRED_KEYS[key]
        return Problem(key, value, f"no such key any more: {why}", f"{rm_command(key, stack)} && {set_command(successor, placeholder, stack)}")
    name = key.rsplit(".", 1)[-1]
    match = nearest(name, known)
    where = f"in {parent}" if parent else "at the top level"
    if match is None:
        return Problem(key, value, f"no such key {where}; the keys are: " + ", ".join(known), rm_command(key, stack))
    right = f"{parent}.{match}" if parent else match
    allowed = f"no such key {where}; did you mean {match}?"
    return Problem(key, value, allowed, rename_command(key, right, value, stack), renamed_to=right)


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The config keys of the section a location points at ([] when it is not a section)."""
    model: Any = StackConfig
    for part in loc:
        if isinstance(part, int):
            continue
        info = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None) if model else None
        if info is None:
            return []
        args = getattr(info.annotation, "__args__", ())
        model = next((a for a in (info.annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
    if model is None:
        return []
    return sorted(f.alias or n for n, f in model.model_fields.items() if not f.exclude)


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
