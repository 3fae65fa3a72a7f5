"""The plan document: everything the offline plan knows about one stack, as deterministic JSON-ready data.

Cost, policy verdicts and pull-request diffs are all computed from this one document.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from tritonfleet.core.bill import BillLine, known_total, other_lines
from tritonfleet.core.bill import total as bill_total
from tritonfleet.core.config import StackConfig, load_stack_config
from tritonfleet.core.conventions import HOURS_PER_MONTH, TRITON_CHART_NAME
from tritonfleet.core.cost import StackCost, stack_cost
from tritonfleet.core.network_policy import enforcement, ships_network_policies
from tritonfleet.plan.fingerprint import fingerprint_section, input_digests
from tritonfleet.plan.project import load_project, stack_config
from tritonfleet.plan.sizing import plan_sizing

PLAN_FORMAT = 1


def bill_line_document(line: BillLine) -> dict[str, Any]:
    """One non-GPU line: what it counts, its figures, each price with its source, date and regions (or unknown)."""
    sources = load_sources()
    prices = []
    for charge in line.charges:
        if charge.price is None:
            prices.append({"item": charge.item, "price": "unknown", "pricedIn": list(charge.priced_elsewhere)})
            continue
        price = charge.price
        prices.append({
            "item": charge.item, "quantity": round(charge.quantity.ceiling, 3), "unit": price.unit, "usd": price.usd,
            "source": price.source, "asOf": str(sources[price.source]), "regions": list(price.regions),
        })
    return {
        "line": line.line,
        "what": line.what,
        "monthlyFloorUsd": _money(line.monthly_floor_usd),
        "monthlyExpectedUsd": _money(line.monthly_expected_usd),
        "monthlyCeilingUsd": _money(line.monthly_ceiling_usd),
        "prices": prices,
        **({"assumption": line.assumption} if line.assumption else {}),
        **({"note": line.note} if line.note else {}),
        **({"source": line.source} if line.source else {}),
    }


def bill_section(config: StackConfig, cost: StackCost) -> dict[str, Any]:
    """The non-GPU lines and the totals split into GPU and the rest (floor, expected and ceiling)."""
    lines = other_lines(config, cost, date.today())
    gpu = {
        "floor": cost.monthly_floor_usd, "expected": cost.monthly_expected_ceiling_usd, "ceiling": cost.monthly_ceiling_usd,
    }
    totals = {}
    for pick, value in gpu.items():
        rest = bill_total(lines, pick)
        key = pick.capitalize()
        totals[f"gpu{key}Usd"] = _money(value)
        totals[f"other{key}Usd"] = _money(rest)
        totals[f"total{key}Usd"] = _money(None if value is None or rest is None else value + rest)
        totals[f"otherKnown{key}Usd"] = known_total(lines, pick)
    return {"otherLines": [bill_line_document(line) for line in lines], "totals": totals}


def cost_section(config: StackConfig) -> dict[str, Any]:
    cost = stack_cost(config)
    catalog_entries = {p.name: config.instance_type(p) for p in config.enabled_pools}
    pools = []
    for pc in cost.pools:
        itype = catalog_entries[pc.pool]
        pools.append(
            {
                "pool": pc.pool,
                "gpu": pc.gpu,
                "instanceType": pc.instance_type,
                "gpusPerNode": pc.gpus_per_node,
                "nodes": {option: {"min": r.min, "max": r.max} for option, r in pc.split.purchase.items()},
                "maxGpus": pc.max_gpus,
                "prices": {
                    option: (
                        {"usdPerHour": price.usd, "source": price.source, "asOf": str(load_sources()[price.source]),
                         "regions": list(price.regions)}
                        if (price := itype.price(option, config.region))
                        else ("assumed" if option in pc.assumed_prices else "unknown")
                    )
                    for option in dict.fromkeys([*pc.split.purchase, *(["on-demand"] if pc.falls_back else [])])
                },
                # Where the catalog does price an option this region lacks (the figure is never borrowed from there).
                "pricedElsewhere": {
                    option: list(itype.priced_regions(option))
                    for option in dict.fromkeys([*pc.split.purchase, *(["on-demand"] if pc.falls_back else [])])
                    if itype.price(option, config.region) is None and itype.priced_regions(option)
                },
                # Each tier counted once (they add up to maxNodes), filled in this order; `fallback` is the tier full
                # with spot unavailable (AWS: the burst launches on-demand), `expected` the spotShare mix.
                "capacity": [
                    {
                        "tier": tier.name,
                        "nodes": tier.nodes,
                        "purchase": list(tier.purchase),
                        "monthlyExpectedUsd": _money(tier.monthly_expected_usd),
                        "monthlyFallbackUsd": _money(tier.monthly_fallback_usd),
                    }
                    for tier in pc.tiers
                ],
                "fallsBackToOnDemand": pc.falls_back,
                # The nodes the autoscalers keep up at minReplicas and reach at maxReplicas (core/placement.py).
                "floorNodes": pc.floor_nodes,
                "ceilingNodes": pc.ceiling_nodes,
                "monthlyExpectedCeilingUsd": _money(pc.monthly_expected_ceiling_usd),
                "monthlyFloorUsd": _money(pc.monthly_floor_usd),
                "monthlyCeilingUsd": _money(pc.monthly_ceiling_usd),
                "gpuHoursFloor": pc.gpu_hours_floor,
                "gpuHoursCeiling": pc.gpu_hours_ceiling,
                "unknownPrices": list(pc.unknown_prices),
                "assumedPrice": (
                    {"usdPerHour": pool.assumed_price.usd_per_hour, "note": pool.assumed_price.note,
                     "purchaseOptions": list(pc.assumed_prices)}
                    if (pool := config.pool(pc.pool)).assumed_price else "none"
                ),
                # Only where set: the pool's pods go on to this pool's nodes when its own have no capacity.
                **({"fallbackPool": pool.fallback_pool} if pool.fallback_pool else {}),
            }
        )
    return {
        "currency": "USD",
        "region": config.region,  # every price is this region's, or unknown
        "hoursPerMonth": HOURS_PER_MONTH,
        "scope": "GPU node pools, and every other line of the bill (otherLines)",
        "pools": pools,
        "disabledPools": [
            {"pool": p.name, "gpu": p.gpu, "instanceType": config.instance_type(p).name} for p in config.gpu_pools if not p.enabled
        ],
        "monthlyFloorUsd": _money(cost.monthly_floor_usd),
        "monthlyCeilingUsd": _money(cost.monthly_ceiling_usd),
        "monthlyExpectedCeilingUsd": _money(cost.monthly_expected_ceiling_usd),
        # false: the spot/on-demand mix (spotShare) is an estimate of what the provisioner will get (AWS Karpenter),
        # not a bound its node pools hold.
        "spotShareEnforced": all(pc.spot_share_enforced for pc in cost.pools),
        "maxGpus": cost.max_gpus,
        "budget": {
            "monthlyUsd": config.budget.monthly_usd,
            "basis": config.budget.basis,
            "warnFraction": config.budget.warn_fraction,
            "gpuLimit": config.gpu_limit,
        },
        **bill_section(config, cost),
    }


def startup_section(config: StackConfig) -> dict[str, Any]:
    """Per deployment: each step of a new replica's start, the totals with and without the caches, the checks they
    must pass (core/startup.py); warnings."""
    from dataclasses import asdict

    from tritonfleet.core.startup import first_request_wait, image_pull_path, startup_budget, startup_warnings

    deployments = []
    for deployment in config.triton_deployments:
        budget = startup_budget(config, deployment)
        row = asdict(budget)
        row["checks"] = [{**asdict(c), "short": c.short} for c in budget.checks]
        if deployment.model_cache:
            row["modelCache"] = True
        if deployment.scale_to_zero is not None:
            pool = config.pool(deployment.pool)
            wait = first_request_wait(
                deployment, config.instance_type(pool), pool.min_nodes == 0, image_pull_path(config, deployment)
            )
            row["scaleToZero"] = {"idleMinutes": deployment.scale_to_zero.idle_minutes, "seconds": wait.seconds,
                                  "complete": wait.complete, "newNode": wait.new_node}  # fmt: skip
        deployments.append(row)
    return {"deployments": deployments, "warnings": startup_warnings(config)}


def disruption_section(config: StackConfig) -> dict[str, Any]:
    """Per deployment: its PodDisruptionBudget and what a spot reclaim costs at the floor; warnings."""
    from dataclasses import asdict

    from tritonfleet.core.disruption import disruption_warnings, pdb_max_unavailable, spot_exposure

    return {
        "deployments": [
            {
                "deployment": d.name,
                "pdbMaxUnavailable": pdb_max_unavailable(d),
                "floor": asdict(spot_exposure(config, d)),
                "ceiling": asdict(spot_exposure(config, d, d.max_replicas)),
            }
            for d in config.triton_deployments
        ],
        "warnings": disruption_warnings(config),
    }


def rollout_section(config: StackConfig) -> list[dict[str, Any]]:
    """Per deployment with a rollout: its pins, steps, thresholds, duration and the canary's extra GPUs and cost."""
    from tritonfleet.core.rollout import summary

    return [summary(config, d) for d in config.triton_deployments if d.rollout is not None]


def monitoring_section(config: StackConfig) -> dict[str, Any]:
    """Prometheus sizing from the series the stack creates at its ceiling, and what it warns about."""
    if not config.monitoring.enabled:
        return {"enabled": False}
    from tritonfleet.monitoring.autoscaling import autoscaling_warnings
    from tritonfleet.monitoring.sizing import prometheus_sizing

    sizing = prometheus_sizing(config)
    return {
        "enabled": True,
        "estimatedSeries": sizing.series,
        "prometheusMemoryRequestMi": sizing.memory_request_mib,
        "prometheusMemoryLimitMi": sizing.memory_limit_mib,
        "diskNeededGi": sizing.disk_needed_gib,
        "retentionSizeGi": sizing.retention_size_gib,
        "warnings": sizing.warnings() + autoscaling_warnings(config),
    }


def network_policy_section(resources: list[tuple[str, str, Any]]) -> dict[str, Any]:
    """Which releases ship NetworkPolicies, and whether each cluster enforces them (and by what)."""
    return {
        "shippedBy": ships_network_policies(resources, TRITON_CHART_NAME),
        "clusters": [{"cluster": e.cluster, "enforced": e.enforced, "by": e.how} for e in enforcement(resources)],
    }


def cloud_notes(config: StackConfig) -> dict[str, Any]:
    """The cloud's own notes for the plan (AWS: the version's support dates, NAT pricing for model pulls), or {}."""
    from tritonfleet.core.cloud import cloud

    return cloud(config.cloud).plan_notes(config, date.today())


def load_sources() -> dict[str, Any]:
    from tritonfleet.core.catalog import load_catalog

    return {name: source.as_of for name, source in load_catalog().sources.items()}


def _money(value: float | None, digits: int = 2) -> float | str:
    return "unknown" if value is None else round(value, digits)


def _config_value(config: StackConfig, key: str) -> Any:
    """The value of a dotted config key (camelCase, as in the stack file), or None where the path has none."""
    value: Any = config
    for part in key.split("."):
        fields = getattr(type(value), "model_fields", {})
        name = next((n for n, f in fields.items() if (f.alias or n) == part), None)
        if name is None:
            return None
        value = getattr(value, name)
    return value


def acknowledged_keys(config: StackConfig) -> list[str]:
    """The config keys set true that acknowledge a replacement a prod stack otherwise refuses (each cloud's
    `prod_acknowledgements`), for tritonfleet diff."""
    from tritonfleet.core.cloud import cloud, cloud_names

    keys = sorted({key for name in cloud_names() for key in cloud(name).prod_acknowledgements.values()})
    return [key for key in keys if _config_value(config, key) is True]


def build_plan(
    project_dir: Path,
    stack: str,
    *,
    with_policy: bool = False,
    policy_config: Path | None = None,
    edit: Callable[[dict[str, str]], dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Validate the stack's config, run the program under mocks and assemble the plan document.

    With `with_policy`, also run the policy pack on it (policies/config/<stack>.json unless `policy_config`) and add
    the `policy` section. `edit` changes the merged config first (`tritonfleet size` plans its advice so). Raises
    ProjectError, ConfigError or PlanError (and, with policies, PackConfigError or PackError) for the user to read.
    """
    project = load_project(project_dir)
    raw, secret_keys = stack_config(project, stack)
    if edit is not None:
        raw = edit(raw)
    config = load_stack_config(raw, stack, secret_keys)  # fails fast, before any resource is registered
    sizing = plan_sizing(config, project.directory)  # so do target loads the configured bounds cannot carry
    inputs = input_digests(project, stack)

    from tritonfleet.plan.harness import run_program  # imports pulumi: only once the config is known good

    run = run_program(project.directory, project.name, stack, raw, secret_keys)
    types = Counter(r.type for r in run.resources if r.custom)
    document = {
        "format": PLAN_FORMAT,
        "project": project.name,
        "stack": stack,
        "cloud": config.cloud,
        "environment": config.environment,
        "region": config.region,
        "summary": {
            "resources": sum(types.values()),
            "components": sum(1 for r in run.resources if not r.custom),
            "byType": dict(sorted(types.items())),
        },
        "cost": cost_section(config),
        "monitoring": monitoring_section(config),
        "disruption": disruption_section(config),
        "startup": startup_section(config),
        "rollouts": rollout_section(config),
        "sizing": sizing,
        # Config keys that acknowledge a change a prod stack otherwise refuses (tritonfleet diff reads them).
        "acknowledged": acknowledged_keys(config),
        # Every resource, components included, as the policy cluster-require-network-policy-enforcement reads them:
        # a cloud may model its cluster as a component resource.
        "networkPolicy": network_policy_section([(r.type, r.name, r.inputs) for r in run.resources]),
        "cloudNotes": cloud_notes(config),
        "outputs": run.outputs,
        "resources": [r.document() for r in run.resources],
        "fingerprint": fingerprint_section(inputs),  # `policy check` reuses a saved plan while this still matches
    }
    if with_policy:
        from tritonfleet.policycheck.check import check

        # Direct calls of the pack's policies: `tritonfleet policy check` also runs the pack over gRPC and compares.
        document["policy"] = check(project.directory, document, policy_config, through_pack=False).section()
    return document


class PlanDocumentError(Exception):
    """A plan document that would not be valid JSON (a number that is not finite): never written."""


def dumps(plan: dict[str, Any]) -> str:
    """The plan document as deterministic, valid JSON (NaN and Infinity, which json.dumps writes by default, are no
    JSON: a reader such as `tritonfleet diff` or jq refuses them)."""
    try:
        return json.dumps(plan, indent=2, sort_keys=True, allow_nan=False) + "\n"
    except ValueError:
        where = ", ".join(_not_finite(plan, "")[:5])
        raise PlanDocumentError(f"the plan holds a number that is not finite at {where}: not written (a tritonfleet bug; please report it with the stack file)") from None


def _not_finite(value: Any, at: str) -> list[str]:
    """The paths of the numbers in `value` that are not finite."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [at or "the top"]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _not_finite(item, f"{at}.{key}" if at else str(key))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _not_finite(item, f"{at}[{i}]")]
    return []
