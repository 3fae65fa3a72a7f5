"""The startup budget against the repository copy time at the node's sourced bandwidth; bad disk sizes are refused."""

from __future__ import annotations

import json

from tests.conftest import STACKS, engine_config
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.startup import startup_budget, startup_warnings


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


def test_the_shipped_stacks_have_budgets_that_cover_their_copies():
    for stack in STACKS:
        assert startup_warnings(load_stack_config(engine_config(stack), stack)) == [], stack


def test_a_large_llm_on_a_small_budget_is_warned_with_the_fix():
    # prod llm on p5en.48xlarge: 200 Gbps on network card 0 (EC2's figure); 1.5 TiB of weights take about a minute.
    config = _with_deployment("prod", disk_gi=2000, repositoryGi=1500, modelLoadSeconds=30)
    budget = startup_budget(config, config.triton_deployments[0])
    assert budget.network_gbps == 200 and budget.network_source == "MOTO"
    assert budget.download_seconds == 65 and budget.short
    [warning] = startup_warnings(config)
    assert warning.startswith("tritonDeployments[0].modelLoadSeconds: 30 s is less than copying 1500 GiB")
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].modelLoadSeconds' 180" in warning


def test_a_small_node_copies_slowly():
    # dev: g6e.xlarge sustains 2.5 Gbps (bursts to 20): 100 GiB take about 6 minutes, more than a 300 s budget.
    config = _with_deployment("dev", disk_gi=200, repositoryGi=100, modelLoadSeconds=300)
    assert startup_budget(config, config.triton_deployments[0]).download_seconds == 344
    assert len(startup_warnings(config)) == 1


def test_an_unknown_bandwidth_gives_no_estimate_rather_than_a_guess():
    config = load_stack_config(engine_config("gcp-prod"), "gcp-prod")
    llm = next(d for d in config.triton_deployments if d.name == "llm")
    budget = startup_budget(config, llm)
    assert budget.network_gbps is None and budget.download_seconds is None and not budget.short
