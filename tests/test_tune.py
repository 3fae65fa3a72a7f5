"""`tritonfleet tune`'s pure parts: the candidates, the GPU-memory bound, the configuration override, the winner and
the patch (the search against the real tritonserver: test_loadtest_live.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.local_servers import free_port
from tests.test_sizing_measurements import CURVE, result
from tritonfleet.cli import app
from tritonfleet.core.loadtest_result import LoadtestResult
from tritonfleet.loadtest import LoadtestError, LoadtestUsageError
from tritonfleet.tune import Candidate, Trial, apply, candidates, patch_text, winner, within_memory


def test_candidates_combine_and_batch_only_where_the_model_batches():
    found = candidates([1, 2], [0, 8], [None, 100], preferred=[4, 8, 16])
    assert Candidate(1, 0, None) in found and Candidate(2, 8, 100, (4, 8)) in found
    assert not [c for c in found if c.max_batch_size == 0 and c.queue_delay_us is not None]
    assert len(found) == 6
    with pytest.raises(LoadtestUsageError, match="at most 32"):
        candidates(list(range(1, 12)), [0, 4, 8], [None])
    with pytest.raises(LoadtestError, match="--instances: counts of 1 or more"):
        candidates([0], [None], [None])


def test_a_range_beyond_the_gpus_memory_is_cut_or_refused_with_the_fix():
    found = candidates([1, 2, 4, 8], [None], [None])
    kept, notes = within_memory(found, gpu_memory_gib=80, instance_gib=18)
    assert [c.instances for c in kept] == [1, 2, 4] and notes == ["8 instances: 8 x 18 GiB > 80 GiB of GPU memory"]
    with pytest.raises(LoadtestError, match="at most 2 instance.* fit 80 GiB of GPU memory; use --instances up to 2"):
        within_memory(candidates([4, 8], [None], [None]), gpu_memory_gib=80, instance_gib=30)
    assert within_memory(found, None, 18) == (found, [])  # no GPU given: nothing to bound by


def test_a_candidate_overrides_only_what_it_changes():
    config = {"name": "m", "max_batch_size": 4, "instance_group": [{"kind": "KIND_GPU", "count": 1, "gpus": [0]}],
              "dynamic_batching": {"priority_levels": 2}}  # fmt: skip
    changed = apply(config, Candidate(3, 16, 200, (8, 16)))
    assert changed["instance_group"] == [{"kind": "KIND_GPU", "count": 3, "gpus": [0]}]
    assert changed["max_batch_size"] == 16
    assert changed["dynamic_batching"] == {"priority_levels": 2, "max_queue_delay_microseconds": 200,
                                           "preferred_batch_size": [8, 16]}  # fmt: skip
    assert config["instance_group"][0]["count"] == 1  # the original is untouched (restored at the end)
    assert apply({"name": "m"}, Candidate(2))["instance_group"] == [{"kind": "KIND_AUTO", "count": 2}]


def _trial(candidate: Candidate, capacity: float | None) -> Trial:
    if capacity is None:
        return Trial(candidate, None, "load failed")
    doc = result(curve=CURVE, achieved=capacity, capacity={"achievedInferencesPerSecond": capacity, "latencyMs": 20.0})
    return Trial(candidate, LoadtestResult.model_validate(doc))


def test_the_winner_has_the_most_capacity_and_the_fewest_instances_on_a_tie():
    trials = [_trial(Candidate(1), 100.0), _trial(Candidate(4), 180.0), _trial(Candidate(2), 180.0),
              _trial(Candidate(8), None)]  # fmt: skip
    assert winner(trials).candidate == Candidate(2)
    assert winner([_trial(Candidate(8), None)]) is None
    text = patch_text(Candidate(2, 8, 100, (4, 8)), trials, 50, 99)
    assert "#   8 instances: did not load (load failed)" in text and "#   4 instances: 180.0/s" in text
    assert "instance_group [ { count: 2 } ]" in text and "max_batch_size: 8" in text
    assert "dynamic_batching { max_queue_delay_microseconds: 100 preferred_batch_size: [ 4, 8 ] }" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--instances", "one"], "--instances one: whole numbers >= 0"),
        (["--queue-delays-us", "-5"], "or keep"),
        (["--gpu", "A100"], "--gpu A100: not in the catalog"),
        (["--gpu", "L4", "--instance-memory-gib", "30", "--instances", "1,2"], "no candidate fits: at most 0 instance"),
    ],
)
def test_bad_tune_arguments_say_the_fix(args, message):
    outcome = CliRunner().invoke(app, ["tune", "--model", "m", "--latency-target", "50ms",
                                       "--url", f"127.0.0.1:{free_port()}", *args])  # fmt: skip
    assert outcome.exit_code == 1 and message in outcome.output and "Traceback" not in outcome.output
