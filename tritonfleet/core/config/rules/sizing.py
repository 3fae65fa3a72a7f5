"""Sizing rules: a latency target carries its unit, an average load is at most the peak.

The rules that need files or the catalog's prices (a loadtest result for another model, bounds that cannot carry the
target) run with the plan's sizing (tritonfleet/plan/sizing.py), which reports through the same ConfigError.
"""

from __future__ import annotations

from tritonfleet.core.config.rules.context import RuleContext, listed, validate_section
from tritonfleet.core.config.schema import TargetLoad


def check_sizing(ctx: RuleContext) -> None:
    for i, raw_deployment in enumerate(listed(ctx.data, "tritonDeployments")):
        if not isinstance(raw_deployment, dict):
            continue
        at = f"tritonDeployments[{i}]"
        latency = raw_deployment.get("latencyTarget")
        if isinstance(latency, (int, float)) and not isinstance(latency, bool):
            ctx.add(f"{at}.latencyTarget", latency, "a p99 latency with its unit, ms or s", f"{latency}ms")
        raw_target = raw_deployment.get("targetLoad")
        target = validate_section(TargetLoad, raw_target) if raw_target else None
        if target is not None and target.average is not None and target.average > target.peak:
            ctx.add(f"{at}.targetLoad.average", target.average, f"at most the peak ({target.peak:g})", target.peak)
        if target is not None and not isinstance(raw_deployment.get("llm"), dict):
            for key, given in (("unit", target.unit == "outputTokens/s"), ("outputTokens", target.output_tokens),
                               ("inputTokens", target.input_tokens)):  # fmt: skip
                if not given:
                    continue
                allowed = "tokens only for an llm deployment (set its llm block), else requests/s or inferences/s"
                if key == "unit":
                    ctx.add(f"{at}.targetLoad.unit", target.unit, allowed, "requests/s")
                else:
                    ctx.remove(f"{at}.targetLoad.{key}", raw_target.get(key), allowed)
