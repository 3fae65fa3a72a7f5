"""The plan document: everything the offline plan knows about one stack, as deterministic JSON-ready data.

Cost, policy verdicts and pull-request diffs are all computed from this one document.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from tritonfleet.core.config import StackConfig, load_stack_config
from tritonfleet.core.conventions import HOURS_PER_MONTH
from tritonfleet.core.cost import cost_per_million, replica_usd_per_hour, stack_cost
from tritonfleet.plan.fingerprint import fingerprint_section, input_digests
from tritonfleet.plan.project import load_project, stack_config

PLAN_FORMAT = 1


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
                        {"usdPerHour": price.usd, "source": price.source, "asOf": str(load_sources()[price.source])}
                        if (price := itype.price(option))
                        else "unknown"
                    )
                    for option in pc.split.purchase
                },
                "monthlyFloorUsd": _money(pc.monthly_floor_usd),
                "monthlyCeilingUsd": _money(pc.monthly_ceiling_usd),
                "gpuHoursFloor": pc.gpu_hours_floor,
                "gpuHoursCeiling": pc.gpu_hours_ceiling,
                "unknownPrices": list(pc.unknown_prices),
            }
        )
    deployments = []
    for d in config.triton_deployments:
        per_hour = replica_usd_per_hour(config, d)
        per_million = cost_per_million(per_hour, d.throughput_per_replica)
        deployments.append(
            {
                "deployment": d.name,
                "pool": d.pool,
                "replicaUsdPerHour": _money(per_hour, 4),
                "throughputPerReplica": d.throughput_per_replica,
                "usdPer1MInferences": _money(per_million, 4) if d.throughput_per_replica else "not given",
            }
        )
    return {
        "currency": "USD",
        "hoursPerMonth": HOURS_PER_MONTH,
        "scope": "GPU node pools only (system nodes, storage, load balancers and traffic are not counted)",
        "pools": pools,
        "disabledPools": [
            {"pool": p.name, "gpu": p.gpu, "instanceType": config.instance_type(p).name} for p in config.gpu_pools if not p.enabled
        ],
        "monthlyFloorUsd": _money(cost.monthly_floor_usd),
        "monthlyCeilingUsd": _money(cost.monthly_ceiling_usd),
        "maxGpus": cost.max_gpus,
        "deployments": deployments,
        "budget": {
            "monthlyUsd": config.budget.monthly_usd,
            "basis": config.budget.basis,
            "warnFraction": config.budget.warn_fraction,
            "gpuLimit": config.gpu_limit,
        },
    }


def cloud_notes(config: StackConfig) -> dict[str, Any]:
    """The cloud's own notes for the plan (AWS: the version's support dates, NAT pricing for model pulls), or {}."""
    from tritonfleet.clouds import cloud_plan_notes

    module = cloud_plan_notes(config.cloud)
    return module.plan_notes(config, date.today()) if module else {}


def load_sources() -> dict[str, Any]:
    from tritonfleet.core.catalog import load_catalog

    return {name: source.as_of for name, source in load_catalog().sources.items()}


def _money(value: float | None, digits: int = 2) -> float | str:
    return "unknown" if value is None else round(value, digits)


def build_plan(project_dir: Path, stack: str, *, with_policy: bool = False, policy_config: Path | None = None) -> dict[str, Any]:
    """Validate the stack's config, run the program under mocks and assemble the plan document.

    With `with_policy`, also run the policy pack on it (policies/config/<stack>.json unless `policy_config`) and add
    the `policy` section. Raises ProjectError, ConfigError or PlanError (and, with policies, PackConfigError or
    PackError) for the user to read.
    """
    project = load_project(project_dir)
    raw, secret_keys = stack_config(project, stack)
    config = load_stack_config(raw, stack, secret_keys)  # fails fast, before any resource is registered
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


def dumps(plan: dict[str, Any]) -> str:
    return json.dumps(plan, indent=2, sort_keys=True) + "\n"
