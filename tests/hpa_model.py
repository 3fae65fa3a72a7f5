"""The Kubernetes HPA's replica computation (autoscaling/v2), for the autoscaling proof.

Follows pkg/controller/podautoscaler (replica_calculator.go, horizontal.go) of Kubernetes 1.33: per Pods metric with an
AverageValue target, `ratio = average / target`; within the 10 % tolerance the proposal is the current count, otherwise
`ceil(ratio × current)`; the largest proposal of all metrics wins, but a metric that cannot be computed (the adapter
serves none for the pods) blocks a scale-down (horizontal.go computeReplicasForMetrics: no recommendation, no change,
ScalingActive false) while it is skipped on a scale-up; then the behaviour: stabilisation windows (scale-up
takes the lowest, scale-down the highest recommendation of its window), then the rate policies (period-start replicas ±
policy, selectPolicy Max), then min/max. Timestamps are simulated seconds, so a 300 s window costs no wall-clock time.

Replicas that are requested but not serving yet (`Fleet`, `Hpa.sync_pods`) follow the same file's calcPlainMetricReplicas
and groupPods (the path for Pods metrics): a pending pod is "unready" and counts at 0 on a scale-up only; a running
pod without a metric is "missing" and counts at 0 on a scale-up, at the target on a scale-down; a result that would
turn the scaling direction round keeps the current count; readiness is checked for CPU metrics only. Read 2026-12-05
in kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go as Kubernetes 1.28 has it (a copy of the
release, kevinhehc/k8s-1.28 @f021286) and as the current main branch has it (adrianmoisey/kubernetes @786f7bb): the
same but for 1.33's per-direction tolerances (default 10 % both ways). The upstream repository itself (1.9 GB) is over
the size the search tool fetches, so no tag could be checked out.
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


def pods_metric_proposal(
    current: int, target: float, values: list[float], missing: int = 0, pending: int = 0, tolerance: float = TOLERANCE
) -> int:
    """One Pods metric's proposal as calcPlainMetricReplicas computes it when pods have no metric yet.

    `values`: the metric of each running pod that has one; `missing`: running pods with none (Triton opens its metrics
    port once its models are loaded, and the adapter's rate needs two scrapes); `pending`: pods not running yet (no
    node, image pulling). Pending pods count only on a scale-up, at 0; missing pods count at 0 on a scale-up and at
    the target on a scale-down; and a result that would turn the direction round keeps `current`. Readiness itself is
    checked for CPU only, so a running pod that serves a metric counts with its value. Floats stand in for the
    controller's milli-units.
    """
    if not values:
        raise AssertionError("did not receive metrics for targeted pods: the HPA would not scale")
    ratio = sum(values) / len(values) / target
    scale_up_with_unready = pending > 0 and ratio > 1
    if not scale_up_with_unready and missing == 0:
        return current if abs(ratio - 1) <= tolerance else math.ceil(ratio * len(values))
    counted = list(values)
    if missing and ratio != 1:
        counted += [target if ratio < 1 else 0.0] * missing
    if scale_up_with_unready:
        counted += [0.0] * pending
    new_ratio = sum(counted) / len(counted) / target
    if abs(new_ratio - 1) <= tolerance or (ratio < 1 < new_ratio) or (ratio > 1 > new_ratio):
        return current
    new = math.ceil(new_ratio * len(counted))
    if (new_ratio < 1 and new > current) or (new_ratio > 1 and new < current):
        return current
    return new


@dataclass
class Hpa:
    """One HPA's state across syncs, built from the rendered object's spec."""

    spec: dict[str, Any]
    current: int = 0
    now: float = 0.0
    recommendations: list[tuple[float, int]] = field(default_factory=list)
    events: list[tuple[float, int]] = field(default_factory=list)  # (time, replicas added (+) or removed (-))
    scale_downs_blocked: int = 0  # syncs a metric it could not compute kept from scaling down (ScalingActive false)

    def __post_init__(self) -> None:
        self.current = self.current or self.spec["minReplicas"]
        self.targets = {m["pods"]["metric"]["name"]: quantity(m["pods"]["target"]["averageValue"]) for m in self.spec["metrics"]}

    def proposal(self, averages: dict[str, float]) -> int | None:
        """The largest per-metric proposal, or None where the HPA does not act (`_computable`)."""
        proposals = []
        for name, target in self.targets.items():
            if name not in averages:
                continue
            ratio = averages[name] / target
            if math.isnan(ratio):
                raise AssertionError(f"{name} is NaN: the HPA would stop scaling")
            proposals.append(self.current if abs(ratio - 1) <= TOLERANCE else math.ceil(ratio * self.current))
        return self._computable(proposals, len(self.targets) - len(proposals))

    def _computable(self, proposals: list[int], invalid: int) -> int | None:
        """horizontal.go computeReplicasForMetrics: a metric it cannot compute (the adapter serves none for the pods)
        is skipped while the others propose a scale-up or the current count, but "if all metrics are invalid or some
        are invalid and we would scale down" it returns an error: no recommendation, no change, ScalingActive false
        (kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go, the same in 1.28 and main; read
        2026-12-05). So an HPA with one metric its pods never export scales up but never down."""
        if not proposals:
            raise AssertionError("no metric served: the HPA would stop scaling")
        desired = max(proposals)
        if invalid and desired < self.current:
            self.scale_downs_blocked += 1
            return None
        return desired

    def sync(self, averages: dict[str, float], seconds: float = SYNC_SECONDS) -> int:
        """One controller sync `seconds` after the previous one; returns the new replica count."""
        self.now += seconds
        return self._behave(self.proposal(averages))

    def pods_proposal(self, values: dict[str, list[float]], missing: int = 0, pending: int = 0) -> int | None:
        """The largest per-metric proposal when some pods have no metric yet (`missing`: running, no metric served;
        `pending`: not running yet), from each metric's values of the pods that have one (`pods_metric_proposal`);
        None where a metric no pod serves blocks a scale-down (`_computable`)."""
        proposals = [
            pods_metric_proposal(self.current, self.targets[name], pod_values, missing, pending)
            for name, pod_values in values.items()
            if name in self.targets
        ]
        return self._computable(proposals, len(self.targets) - len(proposals))

    def sync_pods(self, values: dict[str, list[float]], missing: int = 0, pending: int = 0,
                  seconds: float = SYNC_SECONDS) -> int:
        """`sync` with per-pod values and pods that have no metric yet (see `pods_proposal`)."""
        self.now += seconds
        return self._behave(self.pods_proposal(values, missing, pending))

    def _behave(self, desired: int | None) -> int:
        """The behaviour applied to the metrics' proposal: stabilisation windows, rate policies, min/max. No proposal
        (a blocked scale-down): the controller returns before them, recording nothing."""
        if desired is None:
            return self.current
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


@dataclass
class Fleet:
    """The scale target's replicas over time, for `Hpa.sync_pods`: a replica requested at t is pending until
    t + pending_seconds (a node joins, the image is pulled), then running without a metric until t + start_seconds
    (model fetch, load and warm-up: the startup budget's total), then ready: it takes load and serves its metric.
    A scale-down deletes the newest replicas first (the ReplicaSet deletes pods that are not ready, then the youngest,
    first). The replicas it starts with are ready."""

    replicas: int
    start_seconds: float
    pending_seconds: float = 0.0
    requested: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.requested = self.requested or [-math.inf] * self.replicas

    def resize(self, replicas: int, now: float) -> None:
        self.requested = sorted(self.requested)[:replicas] + [now] * max(0, replicas - len(self.requested))

    def ready(self, now: float) -> int:
        return sum(now >= t + self.start_seconds for t in self.requested)

    def pending(self, now: float) -> int:
        return sum(now < t + self.pending_seconds for t in self.requested)

    def missing(self, now: float) -> int:
        return len(self.requested) - self.ready(now) - self.pending(now)
