"""GPU pool rules: unique names and sane sizes, a GPU and instance type from the catalog, a purchase option the type
is sold as (with only the keys that option uses), node labels outside the reserved domains, zones of the cluster."""

from __future__ import annotations

import re

from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.cloud import cloud as registered_cloud
from tritonfleet.core.config.problems import MISSING, choose_from, nearest
from tritonfleet.core.config.rules.context import RuleContext, listed, validate_section
from tritonfleet.core.config.schema import GpuPool, is_label_key
from tritonfleet.core.conventions import LABEL_VALUE_PATTERN, RESERVED_LABEL_DOMAINS, is_reserved_label

# Pools that draw every node from a reservation the user names.
RESERVED_CAPACITY = ("capacity-block", "reservation")

ValidPools = dict[str, tuple[GpuPool, InstanceType | None]]


def check_pools(ctx: RuleContext) -> ValidPools:
    """Check every pool; return the pools that parse, by name, with their instance type when it resolves."""
    pools: ValidPools = {}
    where: dict[str, str] = {}  # pool name -> its config path
    for i, raw_pool in enumerate(listed(ctx.data, "gpuPools")):
        at = f"gpuPools[{i}]"
        _check_catalog_keys_that_are_not_text(ctx, raw_pool, at)
        _check_node_limit(ctx, raw_pool, at)
        pool = validate_section(GpuPool, raw_pool)
        if pool is None:
            continue
        if not ctx.new_name(pool.name, pools, at, "pool"):
            continue
        _check_sizes(ctx, pool, at)
        itype = _check_type_and_capacity(ctx, pool, at) if ctx.rules else None
        _check_labels(ctx, pool, at)
        _check_zones(ctx, pool, at)
        _check_image_pull(ctx, pool, at)
        pools[pool.name] = (pool, itype)
        where[pool.name] = at
    for name, (pool, _) in pools.items():
        if pool.fallback_pool is not None:
            _check_fallback(ctx, pools, pool, where[name])
    _check_cluster_nodes(ctx, pools, where)
    return pools


def _check_cluster_nodes(ctx: RuleContext, pools: ValidPools, where: dict[str, str]) -> None:
    """All enabled pools at their ceiling, with the system nodes, within the cloud's nodes per cluster."""
    if ctx.rules is None or any(p.key.endswith(".maxNodes") for p in ctx.problems):
        return  # a pool's own maxNodes is wrong: fixing it comes first
    limit, why = ctx.rules.cluster_node_limit()
    system = ctx.cluster.system_nodes.count if ctx.cluster is not None else 0
    enabled = [pool for pool, _ in pools.values() if pool.enabled]
    total = sum(pool.max_nodes for pool in enabled) + system
    if total > limit and enabled:
        largest = max(enabled, key=lambda pool: pool.max_nodes)
        room = max(1, largest.max_nodes - (total - limit))
        allowed = f"pools' maxNodes adding up to at most {limit:,} with the {system} system nodes ({total:,} now): {why}"
        ctx.add(f"{where[largest.name]}.maxNodes", largest.max_nodes, allowed, room)


def _check_catalog_keys_that_are_not_text(ctx: RuleContext, raw_pool: object, at: str) -> None:
    """A gpu or instanceType that is not text at all (a number, a list, a mapping): the schema can only say "a valid
    string"; the catalog knows the choices on this cloud."""
    if ctx.rules is None or not isinstance(raw_pool, dict):
        return
    cloud, gpu, instance_type = str(ctx.cloud), raw_pool.get("gpu"), raw_pool.get("instanceType")
    offered = ctx.catalog.gpus_on(cloud)
    if "gpu" in raw_pool and not isinstance(gpu, str):
        ctx.add(f"{at}.gpu", gpu, _gpus_allowed(cloud, offered), choose_from(offered))
    elif "instanceType" in raw_pool and not isinstance(instance_type, str) and gpu in offered:
        allowed, _, default = _types_carrying(ctx, cloud, gpu)
        ctx.add(f"{at}.instanceType", instance_type, allowed, default)


def _gpus_allowed(cloud: str, offered: list[str]) -> str:
    return f"a GPU offered on {cloud}, spelt as here: " + ", ".join(offered)


def _types_carrying(ctx: RuleContext, cloud: str, gpu: str, carries: str = "") -> tuple[str, list[str], str]:
    """What a pool's instanceType may be for `gpu`: the allowed text, the type names, and the catalog's default."""
    names = [t.name for t in ctx.catalog.types_for(cloud, gpu)]
    default = ctx.catalog.default_type(cloud, gpu)
    allowed = f"an instance type on {cloud} that carries {gpu}{carries}: " + ", ".join(names)
    return allowed, names, default.name if default else names[0]


def _check_fallback(ctx: RuleContext, pools: ValidPools, pool: GpuPool, at: str) -> None:
    """A fallback pool: another pool of this stack, same instance type, enabled with it, one level, one taker."""
    key, wanted = f"{at}.fallbackPool", pool.fallback_pool
    if ctx.rules is not None and not ctx.rules.POOL_FALLBACK:
        ctx.remove(
            key,
            wanted,
            f"unset: {ctx.rules.SERVICE_NAME} has no fallback between pools; give the pool an on-demand base and a "
            "spot share (onDemandBase, spotShare) instead",
        )
        return
    others = [name for name in pools if name != pool.name]
    if wanted not in others:
        allowed = "the name of another pool of this stack" + (f": {', '.join(others)}" if others else " (there is none)")
        if others:
            ctx.add(key, wanted, allowed, nearest(str(wanted), others) or others[0])
        else:
            ctx.remove(key, wanted, allowed)
        return
    fallback, fallback_type = pools[wanted]
    own_type = pools[pool.name][1]
    if own_type is not None and fallback_type is not None and own_type.name != fallback_type.name:
        ctx.add(
            key,
            wanted,
            f"a pool of the same instanceType as this one ({own_type.name}; {wanted} is {fallback_type.name}): "
            "replicas are sized for one machine shape",
            "<a pool of the same instanceType>",
        )
    if fallback.fallback_pool is not None:
        ctx.remove(
            key, wanted, f"a pool without a fallbackPool of its own ({wanted} falls back to {fallback.fallback_pool})"
        )
    takers = [p.name for p, _ in pools.values() if p.fallback_pool == wanted]
    if takers[0] != pool.name:
        ctx.remove(key, wanted, f"a pool that is no other pool's fallback ({wanted} is already {takers[0]}'s)")
    if pool.enabled and not fallback.enabled:
        ctx.add(key, wanted, f"an enabled pool ({wanted} has enabled: false)", "<an enabled pool>")


def _check_node_limit(ctx: RuleContext, raw_pool: object, at: str) -> None:
    """maxNodes within the cloud's nodes per pool, read from the raw value: past int32 the schema could only say so."""
    max_nodes = raw_pool.get("maxNodes") if isinstance(raw_pool, dict) else None
    if ctx.rules is None or not isinstance(max_nodes, (int, float)) or isinstance(max_nodes, bool):
        return
    zones = raw_pool.get("zones") if isinstance(raw_pool.get("zones"), list) else []
    limit, why = ctx.rules.pool_node_limit(ctx, [str(zone) for zone in zones])
    if max_nodes > limit:
        ctx.add(f"{at}.maxNodes", max_nodes, f"at most {limit:,}: {why}", limit)


def _check_sizes(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    if pool.min_nodes > pool.max_nodes:
        ctx.add(f"{at}.minNodes", pool.min_nodes, f"<= maxNodes ({pool.max_nodes})", pool.max_nodes)
    if pool.capacity == "mixed" and pool.on_demand_base > pool.max_nodes:
        ctx.add(
            f"{at}.maxNodes",
            pool.max_nodes,
            f">= onDemandBase ({pool.on_demand_base}): maxNodes is the pool's node limit (on AWS its NodePools' limits), "
            "so it cannot be below the on-demand base; or lower onDemandBase to <= maxNodes",
            pool.on_demand_base,
        )


def _check_type_and_capacity(ctx: RuleContext, pool: GpuPool, at: str) -> InstanceType | None:
    itype = _resolve_instance_type(ctx, pool, at)
    if itype is None:
        return None
    if not _check_architecture(ctx, pool, itype, at):
        return None
    if pool.capacity == "mixed":
        _check_mixed_capacity(ctx, pool, itype, at)
    else:
        _check_single_option(ctx, pool, itype, at)
    # Keys the chosen purchase option does not use are refused rather than ignored.
    if pool.reservation_id and pool.capacity not in RESERVED_CAPACITY:
        spot_only = pool.capacity == "mixed" and pool.on_demand_base == 0 and pool.spot_share == 1
        why = (
            "a spot-only pool cannot draw from a reservation (reservations hold on-demand capacity); for a reserved "
            "pool set capacity: reservation (an On-Demand Capacity Reservation) or capacity-block"
            if spot_only
            else f"only capacity-block and reservation pools draw from a reservation (this pool is {pool.capacity})"
        )
        ctx.remove(f"{at}.reservationId", pool.reservation_id, f"unset: {why}")
    return itype


def _resolve_instance_type(ctx: RuleContext, pool: GpuPool, at: str) -> InstanceType | None:
    """The pool's instance type: a GPU of the catalog offered on this cloud, and a type of this cloud carrying it."""
    catalog, cloud = ctx.catalog, str(ctx.cloud)
    offered_gpus, gpu = catalog.gpus_on(cloud), pool.gpu
    if gpu not in catalog.gpus:
        # GPU names are case-sensitive (they become node label values): the fix gives the catalog's spelling.
        meant = nearest(gpu, catalog.gpus)
        allowed = _gpus_allowed(cloud, offered_gpus)
        if meant is None:
            ctx.add(f"{at}.gpu", gpu, allowed, choose_from(offered_gpus))
            return None
        if meant in offered_gpus:
            ctx.add(f"{at}.gpu", gpu, f"{allowed} (did you mean {meant}?)", meant)
            return None
        gpu = meant  # misspelt, and what was meant is not offered here: the alternatives to that
    if gpu not in offered_gpus:
        alternatives = catalog.alternatives_for(cloud, gpu) or offered_gpus
        meant_text = "" if gpu == pool.gpu else f"did you mean {gpu}? "
        ctx.add(
            f"{at}.gpu",
            pool.gpu,
            f"{meant_text}{gpu} is not offered on {cloud}; nearest alternatives: " + ", ".join(alternatives),
            alternatives[0],
        )
        return None
    if pool.instance_type is None:
        return catalog.default_type(cloud, gpu)
    itype = catalog.find(cloud, pool.instance_type)
    if itype is None or itype.gpu != gpu:
        allowed, offered, default = _types_carrying(ctx, cloud, gpu, f" (it carries {itype.gpu})" if itype else "")
        ctx.add(f"{at}.instanceType", pool.instance_type, allowed, nearest(pool.instance_type, offered) or default)
        return None
    return itype


def _check_architecture(ctx: RuleContext, pool: GpuPool, itype: InstanceType, at: str) -> bool:
    """A type whose CPU architecture the cloud's GPU node images are not built for (an arm64 GB200 host where they are
    x86_64) is refused, never planned with those images. True when the type's architecture is supported."""
    cloud = str(ctx.cloud)
    supported = registered_cloud(cloud).gpu_node_architectures
    if itype.host.arch in supported:
        return True
    why = f"{itype.name} is {itype.host.arch}; tritonfleet's GPU nodes on {cloud} are {', '.join(supported)}"
    same_gpu = [t.name for t in ctx.catalog.types_for(cloud, itype.gpu) if t.host.arch in supported]
    if same_gpu:
        value = pool.instance_type or f"unset ({itype.name}, the catalog's default for {itype.gpu})"
        allowed = f"an instance type carrying {itype.gpu} that is {', '.join(supported)} ({why}): " + ", ".join(same_gpu)
        ctx.add(f"{at}.instanceType", value, allowed, nearest(itype.name, same_gpu) or same_gpu[0])
        return False
    gpus = sorted({t.gpu for t in ctx.catalog.instance_types if t.cloud == cloud and t.host.arch in supported})
    alternatives = [g for g in ctx.catalog.alternatives_for(cloud, itype.gpu) if g in gpus] or gpus
    allowed = f"a GPU with a {', '.join(supported)} instance type on {cloud} ({why}): " + ", ".join(alternatives)
    ctx.add(f"{at}.gpu", pool.gpu, allowed, alternatives[0] if alternatives else "<gpu>")
    return False


def _check_mixed_capacity(ctx: RuleContext, pool: GpuPool, itype: InstanceType, at: str) -> None:
    """A mixed pool needs spot for its spot share and on-demand for the rest."""
    options = itype.purchase_options
    wants_spot = pool.spot_share > 0 and pool.max_nodes > pool.on_demand_base
    wants_on_demand = pool.on_demand_base > 0 or pool.spot_share < 1
    if wants_spot and "spot" not in options:
        ctx.add(
            f"{at}.spotShare",
            pool.spot_share,
            f"0: {itype.name} is sold only as {', '.join(options)}; set capacity to one of those for this pool",
            0,
        )
    assert ctx.rules is not None
    ctx.rules.check_mixed_pool(ctx, pool, at)
    if wants_on_demand and "on-demand" not in options:
        suggestion = next(o for o in ("capacity-block", "reservation", "flex-start", "spot") if o in options)
        ctx.add(
            f"{at}.capacity",
            pool.capacity,
            f"{itype.name} has no on-demand capacity; it is sold as {', '.join(options)}",
            "mixed" if suggestion == "spot" else suggestion,
        )


def _check_single_option(ctx: RuleContext, pool: GpuPool, itype: InstanceType, at: str) -> None:
    """A capacity-block, reservation or flex-start pool: an option of its type and this cloud, no spot, no base."""
    assert ctx.rules is not None
    if pool.capacity not in itype.purchase_options:
        ctx.add(f"{at}.capacity", pool.capacity, f"a purchase option of {itype.name}: " + ", ".join(itype.purchase_options), "mixed")
    ctx.rules.check_purchase_option(ctx, pool, at)
    if pool.capacity in RESERVED_CAPACITY and not pool.reservation_id:
        ctx.add(f"{at}.reservationId", MISSING, f"the id of the {pool.capacity} to draw nodes from", ctx.rules.RESERVATION_EXAMPLE)
    if pool.spot_share > 0:
        ctx.add(f"{at}.spotShare", pool.spot_share, f"0: spot is not part of a {pool.capacity} pool", 0)
    if pool.on_demand_base > 0:
        ctx.remove(f"{at}.onDemandBase", pool.on_demand_base, f"unset: a {pool.capacity} pool has no on-demand base")


def _check_labels(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    for key, value in pool.node_labels.items():
        if not is_label_key(key):
            allowed = "label keys like team or example.com/team (a name of at most 63 characters, an optional DNS prefix)"
            ctx.remove(f"{at}.nodeLabels", pool.node_labels, allowed, fix_key=f"{at}.nodeLabels.{key}")
        elif not re.fullmatch(LABEL_VALUE_PATTERN, value):
            allowed = "a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric"
            ctx.add(f"{at}.nodeLabels.{key}", value, allowed, "<value>")
        if is_reserved_label(key):
            ctx.remove(
                f"{at}.nodeLabels",
                pool.node_labels,
                "label keys outside the domains " + ", ".join(RESERVED_LABEL_DOMAINS) + f" and their subdomains ({key} is reserved)",
                fix_key=f"{at}.nodeLabels.{key}",
            )
    if ctx.rules:
        ctx.rules.check_pool_labels(ctx, pool, at)


def _check_zones(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    for i, zone in enumerate(pool.zones):
        if ctx.stack_zones and zone not in ctx.stack_zones:
            ctx.add(f"{at}.zones[{i}]", zone, "one of the cluster's zones: " + ", ".join(ctx.stack_zones), ctx.stack_zones[0])
    if ctx.rules:
        ctx.rules.check_pool_zones(ctx, pool, at)


def _check_image_pull(ctx: RuleContext, pool: GpuPool, at: str) -> None:
    """How the pool's nodes pull images faster (parallelImagePull) is the cloud's to check."""
    if ctx.rules:
        ctx.rules.check_pool_image_pull(ctx, pool, at)
