"""The HPA's per-replica target comes from the measured capacity where a usable loadtestResult exists (else from
throughputPerReplica), and it counts only the models clients call: an ensemble once, not its steps."""

from __future__ import annotations

import json

import pytest
import yaml

from components.k8s.autoscaling import INFERENCES_PER_SECOND
from components.k8s.triton import autoscaling_values
from tests.conftest import engine_config
from tests.hpa_model import quantity
from tests.monitoring_support import close_to, run, series, tool, write_rules
from tests.serving_helpers import by_kind, render
from tests.test_sizing_measurements import result
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import CONFIG_NAMESPACE
from tritonfleet.monitoring import autoscaling, rules
from tritonfleet.plan.sizing import with_measured_capacities


def _dev(tmp_path, doc: dict | None = None, **changes):
    """The dev stack's resnet deployment autoscaled 1..4, with `changes`; its loadtest result in tmp_path."""
    if doc is not None:
        (tmp_path / "result.json").write_text(json.dumps(doc))
    raw = dict(engine_config("dev"))
    key = f"{CONFIG_NAMESPACE}:tritonDeployments"
    deployments = json.loads(raw[key])
    deployments[0].update({"maxReplicas": 4, **changes})
    for name in [k for k, v in changes.items() if v is None]:
        del deployments[0][name]
    raw[key] = json.dumps(deployments)
    pools = json.loads(raw[f"{CONFIG_NAMESPACE}:gpuPools"])
    pools[0]["maxNodes"] = 4
    raw[f"{CONFIG_NAMESPACE}:gpuPools"] = json.dumps(pools)
    return with_measured_capacities(load_stack_config(raw, "dev"), tmp_path)


MEASURED = {"loadtestResult": {"path": "result.json", "model": "resnet"}}


def test_a_deployment_with_only_a_loadtest_result_is_autoscaled_on_it(tmp_path):
    config = _dev(tmp_path, result(), throughputPerReplica=None, **MEASURED)
    deployment = config.triton_deployments[0]
    assert deployment.throughput_per_replica is None and deployment.capacity_per_replica == 1000.0
    values = autoscaling_values(deployment, monitoring=True)
    assert quantity(values["inferencesPerSecond"]["target"]) == 800  # 1000 measured × targetUtilization 0.8
    assert values["models"] == ["resnet"]  # the measured model's inferences, not every model of the pod


def test_the_measurement_wins_over_the_stated_figure_as_in_sizing(tmp_path):
    deployment = _dev(tmp_path, result(), throughputPerReplica=2000, **MEASURED).triton_deployments[0]
    assert deployment.capacity_per_replica == 1000.0
    stated = _dev(tmp_path, throughputPerReplica=2000).triton_deployments[0]
    assert stated.capacity_per_replica == 2000 and autoscaling_values(stated, True)["models"] == []


def test_a_refused_measurement_never_reaches_the_hpa(tmp_path):
    with pytest.raises(ConfigError, match="p99 80 ms is above the latency target"):
        _dev(tmp_path, result(p99=80.0), throughputPerReplica=None, **MEASURED)


def test_the_rendered_hpa_counts_the_client_models_only(tmp_path):
    deployment = _dev(tmp_path, clientModels=["pipeline", "ocr.v2"], queueTimeTarget="20ms").triton_deployments[0]
    values = {"modelRepository": "s3://models", "replicas": {"min": 1, "max": 4}, "autoscaling": autoscaling_values(deployment, True)}
    metrics = by_kind(render(values))["HorizontalPodAutoscaler"]["spec"]["metrics"]
    load = next(m["pods"]["metric"] for m in metrics if m["pods"]["metric"]["name"] == INFERENCES_PER_SECOND)
    assert load["selector"] == {"matchExpressions": [{"key": "model", "operator": "In", "values": ["pipeline", "ocr.v2"]}]}
    guard = next(m["pods"]["metric"] for m in metrics if m["pods"]["metric"]["name"] != INFERENCES_PER_SECOND)
    assert "selector" not in guard  # a step queueing is the saturation the guard is for


POD = {"namespace": "triton", "pod": "triton-resnet-5d9c7b-x2x9k", "version": "1"}


def test_an_ensemble_is_counted_once_not_with_its_step(tmp_path, stack_config):
    """10 requests/s to a one-step ensemble report 10 for the ensemble and 10 for its step: the rules read 10."""
    config = _dev(tmp_path, clientModels=["pipeline"], throughputPerReplica=10)
    served = f'sum({autoscaling.SERVED}{{deployment="triton-resnet"}})'
    wanted = f'sum({autoscaling.WANTED}{{deployment="triton-resnet"}})'
    test = {
        "interval": "1m",
        "input_series": [
            series("nv_inference_count", {**POD, "model": "pipeline"}, "0+600x40"),
            series("nv_inference_count", {**POD, "model": "resnet"}, "0+600x40"),
        ],
        "promql_expr_test": [
            close_to(served, "{}", 10, "20m", within="1e-6"),
            # 10/s against 10 × 0.8 per replica: 2 wanted (summing the step too would ask for 3)
            {"expr": f"{wanted} == bool 2", "eval_time": "20m", "exp_samples": [{"labels": "{}", "value": 1}]},
        ],
    }
    write_rules(rules.rule_groups(config), tmp_path)
    (tmp_path / "test.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [test]}, sort_keys=False)
    )
    outcome = run(tool("promtool"), "test", "rules", str(tmp_path / "test.yaml"))
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr


def test_a_model_name_with_a_dot_is_matched_literally(tmp_path):
    config = _dev(tmp_path, clientModels=["ocr.v2"], throughputPerReplica=10)
    (served,) = [r["expr"] for r in autoscaling.autoscaling_rules(config) if r.get("record") == autoscaling.SERVED]
    assert 'model=~"ocr\\\\.v2"' in served


def test_client_models_must_count_the_measured_model(tmp_path):
    with pytest.raises(ConfigError) as error:
        _dev(tmp_path, result(), clientModels=["pipeline"], **MEASURED)
    message = str(error.value)
    assert "tritonfleet:tritonDeployments[0].clientModels[1] = (missing)" in message and "'resnet' in clientModels" in message
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].clientModels[1]' resnet --stack dev" in message
    assert _dev(tmp_path, clientModels=["pipeline", "resnet"], **MEASURED).triton_deployments[0].counted_models == [
        "pipeline", "resnet"
    ]  # fmt: skip
