"""The guide's LLM scenarios as example stacks (docs/examples/): they validate, and the plan's sizing shows the GPUs
they need, as docs/serving.md states them."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from tritonfleet.core import llm as llm_memory
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.sizing import size_stack
from tritonfleet.plan.sizing import deployment_capacities

# example -> (GPUs per replica, peak replicas, peak nodes, GPUs at peak), as docs/serving.md shows them.
EXAMPLES = {
    "llm-h200-8b-int4": (1, 34, 5, 34),
    "llm-b200-70b-fp8": (1, 267, 34, 267),
}


def _sized(name: str):
    from tritonfleet.plan.project import engine_string

    doc = yaml.safe_load((ROOT / "docs" / "examples" / f"{name}.yaml").read_text())
    config = load_stack_config({k: engine_string(v) for k, v in doc["config"].items()}, name)
    return config, size_stack(config, deployment_capacities(config, ROOT))


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_example_sizes_to_the_gpus_the_docs_show(name):
    config, sizing = _sized(name)
    deployment = config.triton_deployments[0]
    itype = config.instance_type(config.pool(deployment.pool))
    fit = llm_memory.memory_fit(deployment.llm, llm_memory.architecture_of(deployment.llm), itype.gpu, 1)
    assert fit.fits
    peak = sizing.pools[0].points["peak"]
    shown = (deployment.gpus_per_replica, sizing.deployments[0].replicas["peak"], peak.nodes, peak.gpus_used)
    assert shown == EXAMPLES[name]
    assert not sizing.blocking
    docs = (ROOT / "docs" / "serving.md").read_text()
    assert f"`docs/examples/{name}.yaml`" in docs
    assert f"| {fit.needed_gb:.1f} of {fit.gpu_memory_gb:g} GB | {shown[0]} | {shown[1]} | {shown[2]} | {shown[3]} |" in docs


def test_the_h200_example_costs_what_the_docs_say():
    """Per month at the average load, and per 1M output tokens at the file's assumed 200 output tokens a request."""
    from tritonfleet.core.conventions import HOURS_PER_MONTH

    _, sizing = _sized("llm-h200-8b-int4")
    points, deployment = sizing.pools[0].points, sizing.deployments[0]
    peak, average = points["peak"].usd_per_hour, points["average"].usd_per_hour
    per_million = {
        point: usd / (load * 200 * 3600) * 1e6
        for point, usd, load in (("peak", peak, deployment.peak_per_second), ("average", average, deployment.average_per_second))
    }
    docs = (ROOT / "docs" / "serving.md").read_text()
    expected = (
        f"${peak:,.2f} an hour at peak", f"${average:,.2f} at its average load", f"${average * HOURS_PER_MONTH:,.0f} a month",
        f"${per_million['peak']:.2f} per 1M output tokens at peak", f"${per_million['average']:.2f} at the average",
    )
    flat = " ".join(docs.split())
    for text in expected:
        assert text in flat, text


def test_the_b200_example_costs_unknown_not_zero():
    """p6-b200 is sold as capacity blocks whose rate no source of ours publishes: the cost is unknown, never $0."""
    _, sizing = _sized("llm-b200-70b-fp8")
    assert sizing.pools[0].points["peak"].usd_per_hour is None
