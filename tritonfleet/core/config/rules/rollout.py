"""Rollout rules: steps that end in a promotion, an interval the metrics can judge, and replicas to split."""

from __future__ import annotations

from collections.abc import Mapping

from tritonfleet.core.cluster_monitoring import SCRAPE_INTERVAL_SECONDS
from tritonfleet.core.config.rules.context import RuleContext
from tritonfleet.core.config.schema import TritonDeployment, duration_seconds


def check_rollout(ctx: RuleContext, deployment: TritonDeployment, at: str) -> None:
    rollout = deployment.rollout
    if rollout is None:
        return

    weights = rollout.steps
    fixed = sorted(set(weights) | {100})
    if weights != fixed:
        ctx.add(
            f"{at}.rollout.steps",
            weights,
            "traffic weights in percent that increase step by step and end at 100 (the promotion), such as "
            "[10, 25, 50, 100]",
            fixed,
        )
    # A rate() needs two samples in its window: an interval under two scrapes judges nothing (always inconclusive).
    shortest = 2 * SCRAPE_INTERVAL_SECONDS
    if duration_seconds(rollout.interval) < shortest:
        ctx.add(
            f"{at}.rollout.interval",
            rollout.interval,
            f"at least {shortest}s: two of Prometheus' {SCRAPE_INTERVAL_SECONDS}s scrape intervals must fall in "
            "each step for its canary to be judged",
            "5m",
        )
    if deployment.min_replicas < 2:
        ctx.add(
            f"{at}.minReplicas",
            deployment.min_replicas,
            "at least 2 with a rollout: one replica cannot be split, so its canary would take all the traffic at "
            "once (or remove rollout)",
            2,
        )
    monitoring = ctx.data.get("monitoring") if isinstance(ctx.data.get("monitoring"), Mapping) else {}
    if monitoring.get("enabled", True) is False and not any(p.key == "monitoring.enabled" for p in ctx.problems):
        ctx.add(
            "monitoring.enabled",
            False,
            f"true with a rollout ({at}.rollout): the canary is judged on Triton's metrics in the stack's "
            "Prometheus, and Argo Rollouts is installed with it",
            True,
        )
    if rollout.analysis.max_ttft_ratio is not None and deployment.llm is None:
        ctx.remove(
            f"{at}.rollout.analysis.maxTtftRatio",
            rollout.analysis.max_ttft_ratio,
            "only on an llm deployment (time to first token is a decoupled model's metric)",
        )
