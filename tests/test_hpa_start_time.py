"""Scale-up while new replicas start: the HPA model's rule for pods without a metric (tests/hpa_model.py), checked
against cases worked by hand from the upstream algorithm, and simulations of a load step over the HPA the chart
renders, with replicas that serve only once their start (the startup budget's total) is over.

What the simulations show (docs/serving.md "Autoscaling on Triton metrics"): the HPA counts a replica that has not
started at 0, so a signal that reads the offered load per serving replica asks for the load's replicas and no more
while they start, however fast the rate policy lets it ask; the chart's policy (HPA_SCALE_UP) then costs a minute per
doubling on top of the start. Pacing the policy by the start time (one step per start) only slows that down. A
latency guard is not load (its proposal is serving replicas × latency ÷ target), so it can overshoot a long start;
pacing stops that at the cost of serving the load 2 to 2.5 times later. Under open-loop load a backlog grows while
replicas start, and no rate policy tells it from load: both overshoot, and both settle once it drains.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from components.k8s.autoscaling import INFERENCES_PER_SECOND, LLM_SIGNALS, QUEUE_MS_PER_REQUEST, target_sequences
from components.k8s.triton import autoscaling_values
from tests.hpa_model import SYNC_SECONDS, Fleet, Hpa, pods_metric_proposal
from tests.serving_helpers import by_kind, render
from tests.test_startup import MEASURED, _with_deployment
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.startup import HPA_SCALE_UP, hpa_periods_to_max, startup_budget

SEQUENCES = LLM_SIGNALS["vllm"]["sequences"]


@pytest.mark.parametrize(
    ("values", "missing", "pending", "current", "expected"),
    [
        ([200, 200], 0, 0, 2, 4),  # every pod has a metric: ceil(2.0 × 2 ready pods)
        ([105, 105], 0, 0, 2, 2),  # within the 10 % tolerance
        ([300, 300], 2, 0, 4, 6),  # scale-up, 2 missing at 0: ratio 600 / 4 / 100 = 1.5, ceil(1.5 × 4)
        ([300, 300], 0, 2, 4, 6),  # pending pods count at 0 on a scale-up, like missing ones
        ([300, 300], 1, 1, 4, 6),
        ([50, 50], 2, 0, 4, 3),  # scale-down, 2 missing at the target: (50 + 50 + 100 + 100) / 4 = 0.75, ceil(3)
        ([50, 50], 0, 2, 4, 1),  # scale-down: pending pods are left out, ceil(0.5 × 2 ready pods)
        ([120, 120], 2, 0, 4, 4),  # 1.2 up, but 0.6 with the missing pods at 0: the direction would turn, keep 4
        ([210, 210], 2, 0, 4, 4),  # 1.05 with the missing pods: within the tolerance, keep 4
        ([250], 1, 0, 5, 5),  # 1.25 over 2 pods asks for 3, fewer than the 5 asked for already: keep 5
    ],
)
def test_pods_without_a_metric_count_as_the_upstream_replica_calculator_counts_them(
    values, missing, pending, current, expected
):
    assert pods_metric_proposal(current, 100, values, missing, pending) == expected


def test_no_pod_with_a_metric_is_an_error_not_a_proposal():
    with pytest.raises(AssertionError, match="did not receive metrics"):
        pods_metric_proposal(3, 100, [], missing=1, pending=2)


def test_a_fleet_replica_is_pending_then_missing_then_ready_and_the_newest_go_first():
    fleet = Fleet(replicas=2, start_seconds=300, pending_seconds=120)
    fleet.resize(5, now=0)
    assert (fleet.ready(60), fleet.missing(60), fleet.pending(60)) == (2, 0, 3)
    assert (fleet.ready(200), fleet.missing(200), fleet.pending(200)) == (2, 3, 0)
    assert (fleet.ready(300), fleet.missing(300), fleet.pending(300)) == (5, 0, 0)
    fleet.resize(6, now=310)
    fleet.resize(4, now=320)
    assert sorted(fleet.requested) == [-math.inf, -math.inf, 0, 0], "the replica still starting went first"


# A replica: 8 sequence slots, 4 s a sequence (2 requests/s at full batch); the chart's targets at utilisation 0.8.
SLOTS, SEQUENCE_SECONDS, MIN, MAX = 8, 4.0, 2, 24
CAPACITY = SLOTS / SEQUENCE_SECONDS
GUARD_MS = 2000


def _spec(guard: bool = False, scale_up_period: int | None = None, replicas: tuple[int, int] = (MIN, MAX)) -> dict:
    """The HPA the chart renders for the deployment: request rate and sequences, with the queue-time guard if `guard`,
    and its scale-up policies' period set to `scale_up_period` if given (pacing by the start time)."""
    deployment = TritonDeployment(
        name="a", pool="p", min_replicas=replicas[0], max_replicas=replicas[1], throughput_per_replica=CAPACITY,
        queue_time_target=f"{GUARD_MS}ms" if guard else None,
    )  # fmt: skip
    autoscaling = autoscaling_values(deployment, monitoring=True)
    autoscaling["sequences"] = {"metric": SEQUENCES, "target": target_sequences(SLOTS, deployment.target_utilization)}
    values = {"modelRepository": "s3://models", "replicas": {"min": replicas[0], "max": replicas[1]}, "autoscaling": autoscaling}
    spec = by_kind(render(values))["HorizontalPodAutoscaler"]["spec"]
    for policy in spec["behavior"]["scaleUp"]["policies"]:
        policy["periodSeconds"] = scale_up_period or policy["periodSeconds"]
    return spec


@dataclass
class Run:
    replicas: list[int]  # the HPA's count after each sync
    ready: list[int]  # replicas serving at each sync

    def serving(self, replicas: int) -> float:
        """Seconds from the load step until `replicas` serve."""
        return next(i + 1 for i, ready in enumerate(self.ready) if ready >= replicas) * SYNC_SECONDS


Signals = Callable[[int, float], dict[str, float]]


def closed_loop(users: int) -> Signals:
    """`users` clients, each with one request in flight (chat sessions): a ready replica holds users / ready
    sequences, running or waiting for a slot; a waiting one waits waiting / throughput (Little's law)."""

    def signals(ready: int, _seconds: float) -> dict[str, float]:
        running = min(users, SLOTS * ready)
        return {SEQUENCES: users / ready, INFERENCES_PER_SECOND: running / SEQUENCE_SECONDS / ready,
                QUEUE_MS_PER_REQUEST: 1000 * SEQUENCE_SECONDS * (users - running) / running}  # fmt: skip

    return signals


def open_loop(rate: float) -> Signals:
    """`rate` requests/s whatever the replicas serve: what the serving replicas cannot take waits in their queues."""
    backlog = 0.0

    def signals(ready: int, seconds: float) -> dict[str, float]:
        nonlocal backlog
        served = min(ready * CAPACITY * seconds, backlog + rate * seconds)
        backlog += rate * seconds - served
        in_flight = served / seconds * SEQUENCE_SECONDS + backlog
        return {SEQUENCES: in_flight / ready, INFERENCES_PER_SECOND: served / seconds / ready,
                QUEUE_MS_PER_REQUEST: 1000 * backlog / (ready * CAPACITY)}  # fmt: skip

    return signals


def simulate(spec: dict, start_seconds: float, signals: Signals, seconds: float = 3600, count_unstarted: bool = True) -> Run:
    """A load step at 0 s, one HPA sync every 15 s. Replicas pend for the first 60 % of their start (node, image),
    then run without a metric until it ends. `count_unstarted=False` is an HPA without the upstream rule: the
    serving replicas' average times every replica asked for."""
    hpa, fleet = Hpa(spec), Fleet(spec["minReplicas"], start_seconds, 0.6 * start_seconds)
    run = Run([], [])
    for sync in range(1, int(seconds // SYNC_SECONDS) + 1):
        now = sync * SYNC_SECONDS
        ready = fleet.ready(now)
        values = {name: value for name, value in signals(ready, SYNC_SECONDS).items() if name in hpa.targets}
        if count_unstarted:
            replicas = hpa.sync_pods({n: [v] * ready for n, v in values.items()}, fleet.missing(now), fleet.pending(now))
        else:
            replicas = hpa.sync(values)
        fleet.resize(replicas, now)
        run.replicas.append(replicas)
        run.ready.append(ready)
    return run


def ideal(users: float) -> int:
    """The replicas a load needs at the target: sequences (or requests/s × seconds a sequence) ÷ (slots × 0.8)."""
    return min(MAX, max(MIN, math.ceil(users / (SLOTS * 0.8))))


def settles(run: Run, want: int, after_seconds: float) -> bool:
    """Within ±1 of `want` from `after_seconds` on, and the same count throughout (no oscillation)."""
    tail = run.replicas[int(after_seconds // SYNC_SECONDS):]
    return all(abs(r - want) <= 1 for r in tail) and len(set(tail)) == 1


STARTS = [120, 300, 660]  # seconds: a cached image and model; an uncached one; test_startup's measured steps


@pytest.mark.parametrize("start_seconds", STARTS)
@pytest.mark.parametrize("users", [60, 120])
def test_replicas_not_started_count_at_zero_so_the_hpa_asks_for_the_load_and_no_more(start_seconds, users):
    run = simulate(_spec(), start_seconds, closed_loop(users))
    want = ideal(users)
    assert max(run.replicas) <= want + 1, "no overshoot while the new replicas start"
    # As fast as the chart's policy asks (a minute a doubling) plus one start: the plan's formula.
    assert run.serving(want - 1) <= hpa_periods_to_max(MIN, want) * HPA_SCALE_UP["periodSeconds"] + start_seconds
    assert settles(run, want, run.serving(want - 1))
    without_rule = simulate(_spec(), start_seconds, closed_loop(users), count_unstarted=False)
    assert max(without_rule.replicas) == MAX, "at the serving replicas' average the HPA would compound to max"


@pytest.mark.parametrize("start_seconds", STARTS)
def test_pacing_by_the_start_time_only_slows_the_scale_up(start_seconds):
    users, want = 120, ideal(120)
    default, paced = (simulate(spec, start_seconds, closed_loop(users)) for spec in (_spec(), _spec(False, start_seconds)))
    assert max(paced.replicas) == max(default.replicas) <= want + 1, "neither overshoots"
    # 2 → 6 → 12 → 19: each paced step waits a whole start instead of a minute.
    assert paced.serving(want - 1) - default.serving(want - 1) >= 2 * (start_seconds - HPA_SCALE_UP["periodSeconds"])
    assert settles(paced, want, paced.serving(want - 1))


@pytest.mark.parametrize("start_seconds", STARTS)
def test_a_latency_guard_overshoots_a_long_start_and_pacing_trades_that_for_whole_starts(start_seconds):
    """The guard's proposal is serving replicas × latency ÷ target: latency is not load, so counting the replicas not
    started at 0 does not bound it. With a start longer than two of the policy's periods the chart's policy goes past
    the load's count (up to maxReplicas) and comes back after the scale-down window; paced by the start time it does
    not overshoot, but serves the load two to three times later."""
    users, want = 120, ideal(120)
    reach = hpa_periods_to_max(MIN, want) * HPA_SCALE_UP["periodSeconds"] + start_seconds
    default = simulate(_spec(guard=True), start_seconds, closed_loop(users))
    assert (max(default.replicas) > want + 1) == (start_seconds > 2 * HPA_SCALE_UP["periodSeconds"])
    assert default.serving(want - 1) <= reach
    assert settles(default, want, 1800)
    paced = simulate(_spec(True, start_seconds), start_seconds, closed_loop(users))
    assert max(paced.replicas) <= want + 1
    assert paced.serving(want - 1) >= 3 * start_seconds
    assert settles(paced, want, paced.serving(want - 1))


@pytest.mark.parametrize("paced", [False, True])
def test_a_growing_backlog_overshoots_paced_or_not_and_then_settles(paced):
    """Open-loop load at 12 requests/s (ideal 8): while replicas start, the backlog grows and both the guard and the
    waiting sequences read it as load; neither policy keeps the count within ±1, and both settle once it drains."""
    rate, start_seconds = 12.0, 300
    want = ideal(rate * SEQUENCE_SECONDS)
    run = simulate(_spec(True, start_seconds if paced else None), start_seconds, open_loop(rate), seconds=5400)
    assert max(run.replicas) > want + 1
    assert settles(run, want, 5400 - 900)


def test_the_plan_reach_to_max_replicas_bounds_the_simulated_one():
    """The plan's spike check (startup.spikeRampSeconds) adds the start to the policy's periods to maxReplicas: a
    step that needs maxReplicas serves by then in the simulation, and less than a period sooner (prod's llm
    deployment, 2 to 12 replicas, with test_startup's measured steps)."""
    config = _with_deployment("prod", startup={"measured": MEASURED})
    deployment = config.triton_deployments[0]
    budget = startup_budget(config, deployment)
    start, replicas = budget.totals["no cache"], (deployment.min_replicas, deployment.max_replicas)
    plan = budget.hpa_seconds_to_max + start
    run = simulate(_spec(replicas=replicas), start, closed_loop(SLOTS * deployment.max_replicas * 2))
    assert plan - HPA_SCALE_UP["periodSeconds"] < run.serving(deployment.max_replicas) <= plan
