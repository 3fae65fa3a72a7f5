"""`tritonfleet size`'s advice inside the stack's guardrails: the limits read from its policy config, and the best
ranked options planned as they would be applied — an option whose plan breaks a mandatory policy, deletes or replaces
a protected resource, or fails the config checks is excluded with those reasons, and the next one is planned."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tritonfleet.core.config import ConfigError, StackConfig
from tritonfleet.core.conventions import CONFIG_NAMESPACE
from tritonfleet.core.size_options import Guardrails, Option, Ranking
from tritonfleet.policycheck.check import config_path

PLANNED_AT_MOST = 3  # options planned before giving up (each plan takes a few seconds)
_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def _enabled(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("enforcementLevel", "mandatory") == "mandatory"


def guardrails(
    config: StackConfig, project_dir: Path, model_memory_gib: float | None, benchmark_model: str | None
) -> Guardrails:
    """The stack's limits: gpuLimit, and from policies/config/<stack>.json the mandatory policies' allowed instance
    types, GPU ceiling and serving on-demand base (the pack's defaults where a mandatory policy sets none)."""
    path = config_path(project_dir, config.stack)
    try:
        policy = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        policy = {}
    policy = policy if isinstance(policy, dict) else {}
    allowed = policy.get("gpu-pool-allowed-instance-types")
    limit = policy.get("gpu-stack-limit-total-gpus")
    base = policy.get("spot-serving-pool-require-on-demand-base")
    limits = [config.gpu_limit, limit.get("maxGpus") if _enabled(limit) else None]
    return Guardrails(
        gpu_limit=min((n for n in limits if isinstance(n, int)), default=None),
        allowed_instance_types=tuple(allowed.get("allowedInstanceTypes", ())) if _enabled(allowed) else None,
        min_on_demand_nodes=int(base.get("minOnDemandNodes", 1)) if _enabled(base) else 0,
        model_memory_gib=model_memory_gib,
        benchmark_model=benchmark_model,
        policy_file=str(path.relative_to(project_dir)) if path.is_file() else "no policy config",
    )


def with_settings(raw: dict[str, str], settings: dict[str, Any]) -> dict[str, str]:
    """The merged config (engine strings) with `settings` (paths below the namespace, e.g. gpuPools[1].maxNodes)."""
    out = dict(raw)
    for path, value in settings.items():
        steps = [name or int(index) for name, index in _STEP.findall(path)]
        full = f"{CONFIG_NAMESPACE}:{steps[0]}"
        document = json.loads(out[full]) if full in out and str(out[full])[:1] in "[{" else out.get(full)
        if len(steps) == 1:
            document = value
        else:
            node = document
            for step in steps[1:-1]:
                node = node[step]
            node[steps[-1]] = value
        out[full] = json.dumps(document) if isinstance(document, (dict, list)) else str(document)
    return out


def plan_reasons(project_dir: Path, stack: str, base: dict[str, Any], option: Option) -> list[str]:
    """Why the option, applied, cannot go ahead: config problems, mandatory verdicts the base does not have, and
    protected clusters, node pools or buckets it deletes or replaces. [] when it plans clean."""
    from tritonfleet.diff import compare_stack
    from tritonfleet.plan.document import build_plan

    settings = {k: v for k, v in option.settings.items() if "<" not in str(v)}  # placeholders (reservation ids) aside
    from tritonfleet.plan.harness import PlanError

    try:
        head = build_plan(project_dir, stack, with_policy=True, edit=lambda raw: with_settings(raw, settings))
    except ConfigError as error:
        return [f"planned, {p.key}: {p.allowed}" for p in error.problems]
    except PlanError as error:
        return [f"planned, the program failed: {error}"]
    diff = compare_stack(base, head)
    reasons = [f"planned, {v.policy} fails: {v.message}" for v in diff.added_mandatory]
    reasons += [
        f"planned, it would {f.action} the protected {f.kind} {f.name}"
        for f in diff.flags
        if f.action in ("delete", "replace") and any(n.startswith("protected") for n in f.notes)
    ]
    return reasons


def advise(
    project_dir: Path, stack: str, ranking: Ranking, at_most: int = PLANNED_AT_MOST
) -> tuple[Ranking, Option | None]:
    """Plan the best ranked options in turn until one plans clean (at most `at_most` plans): the ranking with those
    that did not excluded, and the one to recommend (None when none planned clean)."""
    from tritonfleet.plan.document import build_plan

    if ranking.winner is None:
        return ranking, None
    base = build_plan(project_dir, stack, with_policy=True)
    for _ in range(at_most):
        winner = ranking.winner
        if winner is None:
            break
        reasons = plan_reasons(project_dir, stack, base, winner)
        if not reasons:
            return ranking, winner
        ranking = ranking.without(winner, *reasons)
    return ranking, None
