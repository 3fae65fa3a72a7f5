"""The plan's sizing: figures for every shipped stack, failures with the numbers, bad input named by key, the diff of
$/1M, and `tritonfleet size`."""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT, STACKS, engine_config, one_line
from tests.serving_helpers import plan
from tritonfleet.cli import app
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import CONFIG_NAMESPACE
from tritonfleet.diff import compare_plans, report, to_json
from tritonfleet.plan.sizing import plan_sizing
from tritonfleet.plan.text import sizing_lines


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_plans_its_sizing(stack):
    document = plan(stack)
    sizing = document["sizing"]
    names = {d["deployment"] for d in sizing["deployments"]}
    assert names == {d["deployment"] for d in document["sizing"]["deployments"]} and names
    for d in sizing["deployments"]:
        assert isinstance(d["capacity"], dict) and d["capacity"]["kind"] in ("stated", "measured")
        assert d["replicas"]["minimum"] <= d["replicas"]["average"] <= d["replicas"]["peak"]
        for point in ("peak", "average"):  # a number where prices are known or assumed, else "unknown": never 0
            value = d["usdPer1M"][point]
            assert value == "unknown" or (isinstance(value, float) and value > 0)
            if document["cloud"] == "aws" or stack == "gcp-prod":
                assert isinstance(value, float)
    for p in sizing["pools"]:
        for point in ("minimum", "average", "peak"):
            at = p[point]
            assert at["gpusPaid"] == at["nodes"] * p["gpusPerNode"] and at["idleGpus"] == at["gpusPaid"] - at["gpusUsed"]
            assert sum(at["purchase"].values()) == at["nodes"]
    assert all(len(line) <= 80 for line in sizing_lines(document))


def test_prod_h200_pays_whole_nodes():
    h200 = next(p for p in plan("prod")["sizing"]["pools"] if p["pool"] == "h200")
    # llm: 80 requests/s at 10/s per replica, 25 % headroom -> 11 two-GPU replicas -> 3 nodes of 8, 2 GPUs idle
    assert (h200["peak"]["nodes"], h200["peak"]["gpusUsed"], h200["peak"]["idleGpus"]) == (3, 22, 2)
    assert h200["peak"]["purchase"] == {"on-demand": 1, "spot": 2}
    assert h200["peak"]["usdPerHour"] == round(63.296 + 2 * 27.20, 4)
    assert h200["peak"]["usdPer1M"] == round((63.296 + 2 * 27.20) / (80 * 3600) * 1e6, 6)
    # minimum: the plan's floor, 2 two-GPU replicas kept on 2 nodes (prod's hard node spread) -> 12 of 16 GPUs idle
    assert (h200["minimum"]["nodes"], h200["minimum"]["idleGpus"]) == (2, 12)
    assert any("12 of 16 paid GPUs idle at the minimum" in f["message"] for f in plan("prod")["sizing"]["findings"])


def test_plan_prints_per_million_lines():
    lines = sizing_lines(plan("prod"))
    assert any(line.startswith("  llm (h200)") for line in lines)
    assert any(line.startswith("  pool h200") for line in lines)
    assert any("$/1M peak $" in line for line in lines)


def _raw(stack: str, **deployment_changes) -> dict[str, str]:
    raw = dict(engine_config(stack))
    key = f"{CONFIG_NAMESPACE}:tritonDeployments"
    deployments = json.loads(raw[key])
    for change in deployment_changes.get("deployments", []):
        deployments[0].update(change)
    raw[key] = json.dumps(deployments)
    return raw


def test_a_target_the_bounds_cannot_carry_fails_with_the_numbers():
    config = load_stack_config(_raw("dev", deployments=[{"targetLoad": {"peak": 9000, "unit": "requests/s"}}]), "dev")
    with pytest.raises(ConfigError) as error:
        plan_sizing(config, ROOT)
    message = str(error.value)
    assert "tritonDeployments[0].maxReplicas" in message and "needs 6 replicas at 2,000/s each (stated)" in message
    assert "gpuPools[0].maxNodes" in message  # 6 g6e.xlarge nodes > maxNodes
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].maxReplicas' 6 --stack dev" in message


@pytest.mark.parametrize(
    "change,key,fragment",
    [
        ({"targetLoad": {"peak": 0}}, "tritonDeployments[0].targetLoad.peak", ">= 0.001"),
        ({"targetLoad": {"peak": -5, "unit": "requests/s"}}, "tritonDeployments[0].targetLoad.peak", ">= 0.001"),
        ({"targetLoad": {"peak": 100, "average": 200}}, "tritonDeployments[0].targetLoad.average", "at most the peak"),
        ({"targetLoad": {"peak": 100, "unit": "rps"}}, "tritonDeployments[0].targetLoad.unit", "requests/s, inferences/s"),
        ({"latencyTarget": "50"}, "tritonDeployments[0].latencyTarget", "with a unit"),
        ({"latencyTarget": 50}, "tritonDeployments[0].latencyTarget", "50ms"),
        ({"throughputPerReplica": 0}, "tritonDeployments[0].throughputPerReplica", ">= 0.001"),
    ],
)
def test_bad_sizing_input_names_the_key(change, key, fragment):
    with pytest.raises(ConfigError) as error:
        load_stack_config(_raw("dev", deployments=[change]), "dev")
    assert f"tritonfleet:{key}" in str(error.value) and fragment in str(error.value)


def _result(model: str, achieved: float, errors: int = 0) -> dict:
    return {
        "format": "tritonfleet-loadtest/1", "model": model, "modelVersion": "", "url": "127.0.0.1:8000",
        "protocol": "http", "mode": "rate", "offeredRate": 100.0, "concurrency": None, "batchSize": 1, "replicas": 1,
        "startedAt": "2026-12-03T09:00:00+00:00", "durationS": 10.0, "requests": 1000, "succeeded": 1000 - errors,
        "errors": errors, "errorSamples": [], "achievedRequestsPerSecond": achieved,
        "achievedInferencesPerSecond": achieved, "latencyMs": {"p50": 5.0, "p95": 9.0, "p99": 80.0, "max": 90.0},
        "latencyMeasuredFrom": "scheduled send time (open loop)",
    }  # fmt: skip


@pytest.mark.parametrize(
    "content,model,fragment",
    [
        (_result("bert", 900.0), "resnet", "a result for model 'resnet'"),
        (_result("resnet", 0.0, errors=1000), "resnet", "no request succeeded (1000 errors of 1000 requests)"),
        ({"hello": 1}, "resnet", "is not a `tritonfleet loadtest` result"),
        ({**_result("resnet", 900.0), "achievedInferencesPerSecond": float("inf")}, "resnet", "the number Infinity, which JSON does not have"),
        (None, "resnet", "cannot read"),
    ],
)
def test_bad_loadtest_results_name_the_key(tmp_path, content, model, fragment):
    if content is not None:
        (tmp_path / "result.json").write_text(json.dumps(content))
    raw = _raw("dev", deployments=[{"loadtestResult": {"path": "result.json", "model": model}}])
    with pytest.raises(ConfigError) as error:
        plan_sizing(load_stack_config(raw, "dev"), tmp_path)
    assert "tritonfleet:tritonDeployments[0].loadtestResult.path" in str(error.value) and fragment in str(error.value)


def test_a_measured_capacity_wins_and_its_source_and_latency_show(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps({**_result("resnet", 100.0), "latencyMs": {
        "p50": 5.0, "p95": 9.0, "p99": 20.0, "max": 90.0}}))  # fmt: skip
    raw = _raw("dev", deployments=[{"loadtestResult": {"path": "result.json", "model": "resnet"}, "targetLoad": {"peak": 100}}])
    section = plan_sizing(load_stack_config(raw, "dev"), tmp_path)
    capacity = section["deployments"][0]["capacity"]
    assert capacity["kind"] == "measured" and capacity["inferencesPerSecond"] == 100.0
    assert "result.json" in capacity["source"] and "p99 20 ms" in capacity["source"]
    # p99 80 ms at that rate is above the stack's latencyTarget of 50ms: no capacity at that target, refused
    (tmp_path / "result.json").write_text(json.dumps(_result("resnet", 100.0)))
    with pytest.raises(ConfigError, match="p99 80 ms is above the latency target of 50 ms"):
        plan_sizing(load_stack_config(raw, "dev"), tmp_path)


def test_diff_shows_the_change_of_per_million():
    base = plan("prod")
    head = copy.deepcopy(base)
    vision = next(d for d in head["sizing"]["deployments"] if d["deployment"] == "vision")
    vision["usdPer1M"]["peak"] = round(vision["usdPer1M"]["peak"] * 2, 6)
    (diff,) = compare_plans({"prod": base}, {"prod": head})
    assert diff.status == "changed"
    markdown = report([diff])
    assert "$ per 1M inferences" in markdown and "(+100%)" in markdown and "deployment vision" in markdown
    entry = next(u for u in to_json([diff])["stacks"][0]["usdPer1MInferences"] if u["subject"] == "deployment vision")
    assert entry["peak"]["head"] == vision["usdPer1M"]["peak"]


def test_size_refuses_unknown_deployment_and_missing_target():
    runner = CliRunner()
    outcome = runner.invoke(app, ["size", "--stack", "prod", "--deployment", "nope", "--project-dir", str(ROOT)])
    assert outcome.exit_code == 1 and "has no Triton deployment 'nope'" in outcome.output
    assert "Traceback" not in outcome.output


@pytest.mark.parametrize(("name", "shown"), [("Resnet-50", "did you mean resnet50?"), ("[/x]", "no published benchmark '[/x]'")])
def test_size_refuses_a_benchmark_the_catalog_does_not_publish(name, shown):
    """An unknown --benchmark-model once ranked nothing but the measured GPU and exited 0."""
    outcome = CliRunner().invoke(app, ["size", "--stack", "prod", "--deployment", "llm", "--benchmark-model", name, "--project-dir", str(ROOT)])
    assert outcome.exit_code == 1 and shown in one_line(outcome.output) and "(it has: llama2-70b, resnet50)" in one_line(outcome.output)
