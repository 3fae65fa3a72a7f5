"""The startup budget: each step of a new replica's start from a measurement or sourced figures, totals with and
without the caches, the checks it must pass (startup probe, Helm timeout, spike ramp, spot notice) and their warnings."""

from __future__ import annotations

import json

import pytest

from tests.conftest import STACKS, engine_config
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.startup import (
    HPA_SCALE_UP,
    TRITON_DEFAULT_LOAD_THREADS,
    budget_lines,
    helm_timeout_seconds,
    hpa_periods_to_max,
    model_load_threads,
    startup_budget,
    startup_warnings,
)
from tritonfleet.plan.document import startup_section


def _with_deployment(stack: str, disk_gi: int | None = None, **changes):
    raw = dict(engine_config(stack))
    deployments = json.loads(raw["tritonfleet:tritonDeployments"])
    deployments[0].update(changes)
    raw["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    if disk_gi:
        pools = json.loads(raw["tritonfleet:gpuPools"])
        next(p for p in pools if p["name"] == deployments[0]["pool"])["diskGi"] = disk_gi
        raw["tritonfleet:gpuPools"] = json.dumps(pools)
    return load_stack_config(raw, stack)


MEASURED = {"nodeSeconds": 90, "imagePullSeconds": 300, "modelFetchSeconds": 200, "loadSeconds": 60, "warmupSeconds": 10}


def test_the_shipped_stacks_have_budgets_that_cover_their_copies():
    for stack in STACKS:
        assert startup_warnings(load_stack_config(engine_config(stack), stack)) == [], stack


def test_steps_come_from_sourced_figures_and_unknown_ones_stay_unknown():
    # dev resnet on g6e.xlarge: 2.5 Gbps sustained (EC2's figure via moto); the 15.5 GB py3 image and 20 GiB.
    config = load_stack_config(engine_config("dev"), "dev")
    budget = startup_budget(config, config.triton_deployments[0])
    assert budget.step("image pull").seconds == 50 and "(pins)" in budget.step("image pull").basis
    assert budget.step("model fetch").seconds == 69 and "MOTO" in budget.step("model fetch").basis
    for name in ("node", "model load", "warm-up"):
        assert budget.step(name).seconds is None and "startup.measured." in budget.step(name).basis
    assert not budget.complete
    assert budget.totals == {"no cache": 119, "image cache": 69, "model cache": 50, "both caches": 0}


def test_measured_steps_replace_estimates_and_the_caches_skip_their_step():
    config = _with_deployment("dev", startup={"measured": MEASURED})
    budget = startup_budget(config, config.triton_deployments[0])
    assert budget.complete and all(s.basis == "measured" for s in budget.steps)
    assert budget.totals == {"no cache": 660, "image cache": 360, "model cache": 460, "both caches": 160}


def test_a_large_llm_on_a_small_budget_is_warned_with_the_fix():
    # prod llm on p5en.48xlarge: 200 Gbps on network card 0 (EC2's figure); 1.5 TiB of weights take about a minute.
    config = _with_deployment("prod", disk_gi=2000, repositoryGi=1500, modelLoadSeconds=30)
    budget = startup_budget(config, config.triton_deployments[0])
    assert budget.network_gbps == 200 and budget.network_source == "MOTO"
    assert budget.step("model fetch").seconds == 65 and budget.short
    [warning] = startup_warnings(config)
    assert "startup probe (modelLoadSeconds) is 30 s but a new replica needs at least 65 s" in warning
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].modelLoadSeconds' 180" in warning


def test_a_start_longer_than_the_helm_timeout_is_warned():
    config = _with_deployment("dev", modelLoadSeconds=900, startup={"measured": {**MEASURED, "nodeSeconds": 1000}})
    budget = startup_budget(config, config.triton_deployments[0])
    helm = next(c for c in budget.checks if c.against == "Helm timeout")
    assert helm.limit_seconds == helm_timeout_seconds(config.triton_deployments[0]) == 1500 and helm.short
    [warning] = startup_warnings(config)
    assert "Helm timeout is 1500 s but a new replica needs 1570 s" in warning
    assert "modelLoadSeconds' 1030" in warning


def test_maxreplicas_reached_after_the_spike_peak_is_warned():
    # min 1 -> max 20 at +max(100 %, 4 pods) a minute: 1, 5, 10, 20: three periods. dev: 1 -> 2 in one, then 660 s.
    assert hpa_periods_to_max(1, 20) == 3 and hpa_periods_to_max(2, 2) == 0
    config = _with_deployment(
        "dev", minReplicas=1, maxReplicas=2, startup={"measured": MEASURED, "spikeRampSeconds": 600}
    )
    budget = startup_budget(config, config.triton_deployments[0])
    spike = next(c for c in budget.checks if c.against.startswith("spike ramp"))
    assert budget.hpa_seconds_to_max == HPA_SCALE_UP["periodSeconds"]
    assert (spike.limit_seconds, spike.needs_seconds, spike.short) == (600, 60 + 660, True)
    [warning] = startup_warnings(config)
    assert "spike ramp (maxReplicas serving) is 600 s but a new replica needs 720 s" in warning
    assert "with the image and model caches 160 s" in warning and "minReplicas" in warning


def test_the_spot_notice_is_shown_not_warned():
    config = _with_deployment("dev", startup={"measured": MEASURED})
    budget = startup_budget(config, config.triton_deployments[0])
    spot = next(c for c in budget.checks if c.against == "spot notice")
    assert spot.limit_seconds == 120 and spot.short
    assert startup_warnings(config) == []


def test_the_plan_section_and_its_text():
    config = _with_deployment("dev", startup={"measured": MEASURED})
    [row] = startup_section(config)["deployments"][:1]
    assert row["totals"]["both caches"] == 160 and {c["against"]: c["short"] for c in row["checks"]}["spot notice"]
    lines = budget_lines(row)
    assert lines[0] == "Triton 'resnet' startup: 660 s, new node to ready"
    assert "  no cache 660 s, image cache 360 s, model cache 460 s, both caches 160 s" in lines
    assert "  spot notice 120 s: misses" in lines and "  node           90 s  measured" in lines
    assert "  a spike: HPA asks for 2 replicas after 60 s, serving after 720 s" in lines
    unknown = budget_lines(startup_section(load_stack_config(engine_config("dev"), "dev"))["deployments"][0])
    assert unknown[0] == "Triton 'resnet' startup: 119 s (at least), new node to ready"
    assert "  image pull     50 s  15.5 GB image (pins) at 2.5 Gbps (MOTO), a floor" in unknown
    assert "  Helm timeout 1200 s: may miss (steps unknown)" in unknown
    assert all(len(line) <= 80 for line in lines + unknown)


def test_an_unknown_bandwidth_gives_no_estimate_rather_than_a_guess():
    config = load_stack_config(engine_config("gcp-prod"), "gcp-prod")
    llm = next(d for d in config.triton_deployments if d.name == "llm")
    budget = startup_budget(config, llm)
    assert budget.network_gbps is None and budget.step("model fetch").seconds is None and not budget.short


def test_an_image_of_unknown_size_is_unknown_until_stated():
    config = _with_deployment("dev", imageTag="26.07-custom-py3")
    assert startup_budget(config, config.triton_deployments[0]).step("image pull").seconds is None
    config = _with_deployment("dev", imageTag="26.07-custom-py3", startup={"imageGb": 25})
    assert startup_budget(config, config.triton_deployments[0]).step("image pull").seconds == 80


@pytest.mark.parametrize(
    "startup, key",
    [
        ({"measured": {"nodeSeconds": -1}}, "measured.nodeSeconds"),
        ({"spikeRampSeconds": 0}, "spikeRampSeconds"),
        ({"imageGb": 0}, "imageGb"),
        ({"coldStart": 1}, "coldStart"),
    ],
)
def test_bad_startup_input_is_refused_with_the_key(startup, key):
    with pytest.raises(ConfigError) as error:
        _with_deployment("dev", startup=startup)
    assert key in str(error.value)


def test_model_load_threads_follow_the_replicas_cpus():
    config = load_stack_config(engine_config("prod"), "prod")
    deployment = config.triton_deployments[0]
    assert model_load_threads(deployment, 2) == TRITON_DEFAULT_LOAD_THREADS  # never below Triton's default
    assert model_load_threads(deployment, 44) == 44 and model_load_threads(deployment, 500) == 64
    stated = _with_deployment("dev", modelLoadThreads=2).triton_deployments[0]
    assert model_load_threads(stated, 44) == 2


def test_the_planned_release_carries_the_threads_and_the_scale_up_policy():
    from tests.serving_helpers import planned_values
    from tritonfleet.core.conventions import triton_release_name
    from tritonfleet.core.packing import replica_requests

    config = load_stack_config(engine_config("prod"), "prod")
    deployment = next(d for d in config.triton_deployments if d.name == "llm")
    cpus = replica_requests(config.instance_type(config.pool(deployment.pool)), deployment.gpus_per_replica)[0]
    values = planned_values("prod", triton_release_name(deployment.name))
    assert values["modelLoadThreads"] == model_load_threads(deployment, cpus) == min(64, cpus) > 4
    assert values["autoscaling"]["scaleUp"] == HPA_SCALE_UP


def test_an_llm_repository_smaller_than_its_weights_is_warned_and_fetched_at_weight_size():
    # prod's Llama 3.3 70B at FP8: 70.6 GB of weights; a 20 GiB repository would be evicted mid-copy from /tmp.
    config = _with_deployment("prod", repositoryGi=20)
    fetch = startup_budget(config, config.triton_deployments[0]).step("model fetch")
    assert fetch.basis.startswith("70.6 GB of weights at 200 Gbps") and fetch.seconds == 3
    [warning] = startup_warnings(config)
    assert warning.startswith("tritonDeployments[0].repositoryGi: 20 GiB is less than the weights of llm (70.6 GB)")
    assert warning.endswith("pulumi config set --path 'tritonfleet:tritonDeployments[0].repositoryGi' 73")
