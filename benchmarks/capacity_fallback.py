"""How long until a burst GPU node serves when spot is unavailable? A model, not a measurement (no account here).

Before: cluster-autoscaler with one managed node group per purchase option and the priority expander (spot first).
It scales the spot group up; the ASG cannot launch; cluster-autoscaler only gives up on that group once the node has
not registered within `max-node-provision-time` (15 min, the default and our former setting, cited below), backs the
group off and then scales the next group (on-demand). In prod as it was configured the on-demand group was 1..1, so
the burst never arrived at all: that case is printed as well.

After: Karpenter with one burst NodePool allowing spot and on-demand. The spot CreateFleet fails with an
insufficient-capacity error; Karpenter caches that offering as unavailable and launches on-demand in the next
provisioning round ("generally within milliseconds", tritonfleet/clouds/aws/facts.py SPOT_FALLS_BACK_TO_ON_DEMAND).
That round waits at most one batch window (batchMaxDuration 10s, tests/upstream/karpenter-1.14.1/values.yaml).

Both sides then pay the same boot + GPU-ready + model-load time, so it cancels in the difference but not in the ratio:
ASSUMED values below are marked, and the ratio is printed for each. Run: venv/bin/python benchmarks/capacity_fallback.py
"""

from __future__ import annotations

# Sources (read 2026-12-03):
#  - cluster-autoscaler FAQ, "--max-node-provision-time ... default 15 minutes" (kubernetes/autoscaler
#    cluster-autoscaler/FAQ.md, "What are the parameters to CA?"), also the value tritonfleet set
#    (tritonfleet/clouds/aws/layout.py MAX_NODE_PROVISION_TIME = "15m") while it ran cluster-autoscaler.
#  - Karpenter: karpenter.sh/docs/concepts/nodepools/ (capacity-type fallback), chart 1.14.1 values batchMaxDuration.
CA_PROVISION_TIMEOUT_S = 15 * 60
KARPENTER_BATCH_MAX_S = 10
# ASSUMED: a failed spot CreateFleet call and the on-demand retry, API round trips (seconds, not measured here).
CREATE_FLEET_ROUND_TRIPS_S = 5
# ASSUMED: cluster-autoscaler's scan interval (default 10 s) before it asks the next group after the back-off.
CA_SCAN_INTERVAL_S = 10
# ASSUMED: time from launch to a Ready GPU node with its device plugin (p5en-class nodes take minutes to boot), and
# a Triton replica's model load (prod's llm states modelLoadSeconds 1200). Shown at several values.
READY_SCENARIOS_S = {"boot 5 min": 300, "boot 10 min": 600, "boot 10 min + model load 20 min": 600 + 1200}


def before_seconds(ready_s: int) -> float:
    return CA_PROVISION_TIMEOUT_S + CA_SCAN_INTERVAL_S + ready_s


def after_seconds(ready_s: int) -> float:
    return KARPENTER_BATCH_MAX_S + CREATE_FLEET_ROUND_TRIPS_S + ready_s


def main() -> None:
    print("Time to a serving burst node when spot is unavailable (model; ASSUMED values marked in the source)")
    print(f"  cluster-autoscaler gives up on the spot group after {CA_PROVISION_TIMEOUT_S} s (max-node-provision-time)")
    print(f"  Karpenter falls back within one batch window ({KARPENTER_BATCH_MAX_S} s) + API round trips")
    for name, ready in READY_SCENARIOS_S.items():
        before, after = before_seconds(ready), after_seconds(ready)
        print(f"  {name:32s} before {before / 60:5.1f} min  after {after / 60:5.1f} min  ratio {before / after:4.1f}x")
    print("  prod as configured before (on-demand group 1..1): the burst never arrived (ratio unbounded)")
    waiting = before_seconds(0) - after_seconds(0)
    print(f"  time-to-fallback alone: before {before_seconds(0):.0f} s, after {after_seconds(0):.0f} s, "
          f"ratio {before_seconds(0) / after_seconds(0):.0f}x ({waiting / 60:.1f} min saved per event)")


if __name__ == "__main__":
    main()
