"""A policy config for a new stack (`tritonfleet policy init`): another stack's config as the template for the
enforcement levels, with the values the pack cannot see taken from the new stack itself.

The pack sees resources only, so the budget, its basis and warn fraction, the GPU ceiling and the instance types the
stack's pools use must come from the policy config; they are copied from the stack file so the two agree (a test
keeps them equal for every shipped stack).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonfleet.core.config import ConfigError, StackConfig, load_stack_config
from tritonfleet.plan.project import Project, ProjectError, load_project, stack_config
from tritonfleet.policycheck import pack_config
from tritonfleet.policycheck.check import config_path, pack_dir

BUDGET_POLICIES = ("cost-stack-enforce-monthly-budget", "cost-stack-warn-monthly-budget")
GPU_LIMIT_POLICY = "gpu-stack-limit-total-gpus"
INSTANCE_TYPES_POLICY = "gpu-pool-allowed-instance-types"


@dataclass(frozen=True)
class NewConfig:
    document: dict[str, Any]
    template: str  # the stack whose config gave the enforcement levels
    added_types: list[str]  # instance types of the new stack's pools the template did not allow


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _entry(config: dict[str, Any], policy: str) -> dict[str, Any]:
    """The policy's entry as an object (a bare enforcement level becomes {"enforcementLevel": level})."""
    entry = config.get(policy)
    entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry or {})
    config[policy] = entry
    return entry


def _load_stack(project: Project, stack: str) -> StackConfig:
    raw, secret_keys = stack_config(project, stack)
    return load_stack_config(raw, stack, secret_keys)


def choose_template(project: Project, config: StackConfig, candidates: list[str]) -> str:
    """The stack to copy enforcement levels from: same cloud and environment, else same environment, else same cloud."""

    def kind(stack: str) -> tuple[str, str] | None:
        try:
            other = _load_stack(project, stack)
        except (ProjectError, ConfigError):  # a stack that does not load is no template; its own plan says why
            return None
        return other.cloud, other.environment

    kinds = {s: kind(s) for s in candidates}
    for wanted in (
        lambda k: k == (config.cloud, config.environment),
        lambda k: k[1] == config.environment,
        lambda k: k[0] == config.cloud,
    ):
        found = [s for s, k in kinds.items() if k is not None and wanted(k)]
        if found:
            return sorted(found)[0]
    raise ProjectError(f"no stack with a policy config to start from; give one with --like (stacks: {', '.join(candidates)})")


def derive(project_dir: Path, stack: str, like: str | None = None) -> NewConfig:
    """The policy config for `stack`. Raises ProjectError, ConfigError (the stack) or PackConfigError (the result)."""
    from tritonfleet.policycheck.direct import load_policies, policy_meta

    project = load_project(project_dir)
    config = _load_stack(project, stack)
    candidates = sorted(p.stem for p in config_path(project_dir, stack).parent.glob("*.json") if p.stem != stack)
    template = like or choose_template(project, config, candidates)
    document = copy.deepcopy(pack_config.load(config_path(project_dir, template)))
    same_cloud = _load_stack(project, template).cloud == config.cloud if template in project.stacks() else False

    budget = config.budget
    for policy in BUDGET_POLICIES:
        entry = _entry(document, policy)
        entry.update(monthlyUsd=_number(budget.monthly_usd), basis=budget.basis)
    _entry(document, BUDGET_POLICIES[1])["warnFraction"] = budget.warn_fraction
    _entry(document, GPU_LIMIT_POLICY)["maxGpus"] = config.gpu_limit
    used = list(dict.fromkeys(config.instance_type(p).name for p in config.gpu_pools))
    allowed = _entry(document, INSTANCE_TYPES_POLICY)
    kept = list(allowed.get("allowedInstanceTypes", [])) if same_cloud else []
    added = [t for t in used if t not in kept]
    allowed["allowedInstanceTypes"] = kept + added
    pack_config.reconcile(policy_meta(load_policies(pack_dir(project_dir))), document, f"the policy config derived for {stack}")
    return NewConfig(document, template, added)


def write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
