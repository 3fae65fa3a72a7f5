"""The Kubernetes HPA's replica computation (autoscaling/v2), for the autoscaling proof.

Follows pkg/controller/podautoscaler (replica_calculator.go, horizontal.go) of Kubernetes 1.33: per Pods metric with an
AverageValue target, `ratio = average / target`; within the 10 % tolerance the proposal is the current count, otherwise
`ceil(ratio × current)`; the largest proposal of all metrics wins; then the behaviour: stabilisation windows (scale-up
takes the lowest, scale-down the highest recommendation of its window), then the rate policies (period-start replicas ±
policy, selectPolicy Max), then min/max. Timestamps are simulated seconds, so a 300 s window costs no wall-clock time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

TOLERANCE = 0.1
SYNC_SECONDS = 15  # kube-controller-manager --horizontal-pod-autoscaler-sync-period default


def quantity(text: str) -> float:
    """A Kubernetes quantity as the HPA targets use it ('1600', '1600m', '20')."""
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


@dataclass
class Hpa:
    """One HPA's state across syncs, built from the rendered object's spec."""

    spec: dict[str, Any]
    current: int = 0
    now: float = 0.0
    recommendations: list[tuple[float, int]] = field(default_factory=list)
    events: list[tuple[float, int]] = field(default_factory=list)  # (time, replicas added (+) or removed (-))

    def __post_init__(self) -> None:
        self.current = self.current or self.spec["minReplicas"]
        self.targets = {m["pods"]["metric"]["name"]: quantity(m["pods"]["target"]["averageValue"]) for m in self.spec["metrics"]}

    def proposal(self, averages: dict[str, float]) -> int:
        """The largest per-metric proposal; a metric the adapter did not serve is skipped (as the HPA does)."""
        proposals = []
        for name, target in self.targets.items():
            if name not in averages:
                continue
            ratio = averages[name] / target
            if math.isnan(ratio):
                raise AssertionError(f"{name} is NaN: the HPA would stop scaling")
            proposals.append(self.current if abs(ratio - 1) <= TOLERANCE else math.ceil(ratio * self.current))
        if not proposals:
            raise AssertionError("no metric served: the HPA would stop scaling")
        return max(proposals)

    def sync(self, averages: dict[str, float], seconds: float = SYNC_SECONDS) -> int:
        """One controller sync `seconds` after the previous one; returns the new replica count."""
        self.now += seconds
        desired = self.proposal(averages)
        behavior = self.spec["behavior"]
        up_window = behavior["scaleUp"]["stabilizationWindowSeconds"]
        down_window = behavior["scaleDown"]["stabilizationWindowSeconds"]
        self.recommendations = [(t, r) for t, r in self.recommendations if t > self.now - max(up_window, down_window)]
        self.recommendations.append((self.now, desired))
        up = min(r for t, r in self.recommendations if t > self.now - up_window or t == self.now)
        down = max(r for t, r in self.recommendations if t > self.now - down_window or t == self.now)
        stabilized = min(max(self.current, up), down)
        new = self._limit(stabilized)
        if new != self.current:
            self.events.append((self.now, new - self.current))
        self.current = new
        return new

    def _period_start(self, period: float) -> int:
        return self.current - sum(delta for t, delta in self.events if t > self.now - period)

    def _limit(self, desired: int) -> int:
        lo, hi = self.spec["minReplicas"], self.spec["maxReplicas"]
        if desired > self.current:
            rules = self.spec["behavior"]["scaleUp"]
            limit = max(self._proposed_up(p) for p in rules["policies"])
            return min(desired, max(limit, self.current), hi)
        if desired < self.current:
            rules = self.spec["behavior"]["scaleDown"]
            limit = min(self._proposed_down(p) for p in rules["policies"])
            return max(desired, min(limit, self.current), lo)
        return min(max(desired, lo), hi)

    def _proposed_up(self, policy: dict[str, Any]) -> int:
        start = self._period_start(policy["periodSeconds"])
        if policy["type"] == "Pods":
            return start + policy["value"]
        return math.ceil(start * (1 + policy["value"] / 100))

    def _proposed_down(self, policy: dict[str, Any]) -> int:
        start = self._period_start(policy["periodSeconds"])
        if policy["type"] == "Pods":
            return start - policy["value"]
        return int(start * (1 - policy["value"] / 100))
