"""Idle capacity to zero (docs/serving.md "Idle capacity to zero"): the config rules (prod refuses without an
accepted first-request wait), the first request's wait in the plan, and the chart's KEDA ScaledObject and HTTP
add-on InterceptorRoute rendered by the real Helm engine and checked against the vendored CRD schemas."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import UPSTREAM_CHARTS, engine_config, one_line

from components.k8s.keda import CONCURRENCY_PER_REPLICA, prometheus_triggers
from components.k8s.triton import triton_values
from tests.kube_validate import validate_strict
from tests.serving_helpers import by_kind, render
from tests.test_triton_chart import _strict
from tritonfleet.core import conventions, pins
from tritonfleet.core.catalog import FAST_SAFE_LOADER
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import triton_release_name
from tritonfleet.core.scheduling import pool_facts
from tritonfleet.core.startup import budget_lines, first_request_wait
from tritonfleet.plan.document import startup_section

CRDS = {
    "ScaledObject": UPSTREAM_CHARTS / f"keda-{pins.KEDA_CHART['version']}" / "crds" / "keda.sh_scaledobjects.yaml",
    "InterceptorRoute": UPSTREAM_CHARTS / f"keda-add-ons-http-{pins.KEDA_HTTP_ADD_ON_CHART['version']}" / "crds"
    / "http.keda.sh_interceptorroutes.yaml",
}


def _config(stack: str = "dev", environment: str | None = None, **scale_to_zero: Any):
    """A shipped stack with its first deployment scaled to zero (`scale_to_zero`: the section's keys)."""
    data = dict(engine_config(stack))
    deployments = json.loads(data["tritonfleet:tritonDeployments"])
    deployments[0]["scaleToZero"] = scale_to_zero
    data["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    if environment:
        data["tritonfleet:environment"] = environment
    if environment == "prod":  # what prod asks of dev's cluster besides this (docs/access.md)
        cluster = json.loads(data["tritonfleet:cluster"])
        cluster.update(adminPrincipals=["arn:aws:iam::123456789012:role/platform-admin"],
                       controlPlaneCidrs=["0.0.0.0/0"], acknowledgePublicControlPlane=True)  # fmt: skip
        data["tritonfleet:cluster"] = json.dumps(cluster)
    return load_stack_config(data, stack)


def _problems(error: ConfigError) -> str:
    return one_line(str(error))


def test_dev_may_scale_to_zero_and_the_plan_shows_the_first_request_wait():
    config = _config(idleMinutes=20)
    deployment = config.triton_deployments[0]
    pool = config.pool(deployment.pool)
    assert pool.min_nodes == 0  # dev's GPU pool may empty: KEDA's zero takes the node with it
    row = startup_section(config)["deployments"][0]
    wait = first_request_wait(deployment, config.instance_type(pool), new_node=True)
    assert row["scaleToZero"] == {"idleMinutes": 20, "seconds": wait.seconds, "complete": wait.complete, "newNode": True}
    # The wait is the startup budget's start from a new node: every known step of it.
    assert wait.seconds == row["totals"]["no cache"] > 0
    text = "\n".join(budget_lines(row))
    assert "scale to zero after 20 min idle" in text and f"{wait.seconds} s (at least), a replica's start on a new" in text
    assert all(len(line) <= 80 for line in budget_lines(row))


def test_a_running_node_skips_the_node_launch():
    config = _config(idleMinutes=20)
    deployment = config.triton_deployments[0]
    instance_type = config.instance_type(config.pool(deployment.pool))
    data = json.loads(json.dumps(deployment.model_dump(by_alias=True)))
    data["startup"]["measured"]["nodeSeconds"] = 90
    measured = type(deployment).model_validate(data)
    on_new = first_request_wait(measured, instance_type, new_node=True)
    on_running = first_request_wait(measured, instance_type, new_node=False)
    assert on_new.seconds - on_running.seconds == 90 and "node" not in on_running.steps.split(",")[0]


def test_a_pool_that_keeps_nodes_is_warned_about_with_the_fix():
    from tritonfleet.core.startup import startup_warnings

    assert not any("scaleToZero" in w for w in startup_warnings(_config(idleMinutes=20)))
    data = dict(engine_config("dev"))
    pools = json.loads(data["tritonfleet:gpuPools"])
    pools[0]["minNodes"] = 1
    data["tritonfleet:gpuPools"] = json.dumps(pools)
    deployments = json.loads(data["tritonfleet:tritonDeployments"])
    deployments[0]["scaleToZero"] = {"idleMinutes": 20}
    data["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    config = load_stack_config(data, "dev")
    (warning,) = [w for w in startup_warnings(config) if "scaleToZero" in w]
    assert "keeps minNodes 1 GPU nodes running and billed" in warning
    assert warning.endswith("pulumi config set --path 'tritonfleet:gpuPools[0].minNodes' 0 (the first request then "
                            "waits for a new node too)")  # fmt: skip
    # On a node the pool keeps, the first request skips the node's launch.
    assert startup_section(config)["deployments"][0]["scaleToZero"]["newNode"] is False


def test_shipped_stacks_do_not_scale_to_zero(stack_config):
    from conftest import STACKS

    for stack in STACKS:
        config = stack_config(stack)
        assert not any(d.scale_to_zero for d in config.triton_deployments)
        assert all("scaleToZero" not in row for row in startup_section(config)["deployments"])


def test_prod_refuses_scale_to_zero_without_an_accepted_wait():
    with pytest.raises(ConfigError) as error:
        _config(environment="prod", idleMinutes=30)
    text = _problems(error.value)
    key = "tritonDeployments[0].scaleToZero.acceptedFirstRequestSeconds"
    assert f"tritonfleet:{key} = (missing)" in text
    assert "in prod, the wait you accept for the first request after idle" in text
    assert "latencyTarget 50ms does not hold for it" in text
    assert f"fix: pulumi config set --path 'tritonfleet:{key}' 180 --stack dev" in text


def test_prod_accepts_a_wait_that_covers_the_cold_start_and_refuses_a_shorter_one():
    config = _config(environment="prod", idleMinutes=30, acceptedFirstRequestSeconds=900)
    assert config.triton_deployments[0].scale_to_zero.accepted_first_request_seconds == 900
    with pytest.raises(ConfigError) as error:
        _config(environment="prod", idleMinutes=30, acceptedFirstRequestSeconds=30)
    text = _problems(error.value)
    assert "scaleToZero.acceptedFirstRequestSeconds = 30 allowed: at least 119:" in text
    # Staging users are the team: no acknowledgement needed, but one given must hold.
    assert _config(environment="staging", idleMinutes=30).triton_deployments[0].scale_to_zero is not None


@pytest.mark.parametrize(
    ("change", "allowed"),
    [
        ({"access": {"exposure": "internal"}}, "only with access.exposure cluster (this deployment is internal)"),
        ({"rollout": {"steps": [50, 100]}, "minReplicas": 2, "maxReplicas": 2}, "not with a rollout"),
    ],
)
def test_scale_to_zero_needs_the_interceptor_in_the_request_path(change, allowed):
    data = dict(engine_config("dev"))
    deployments = json.loads(data["tritonfleet:tritonDeployments"])
    deployments[0].update(change, scaleToZero={"idleMinutes": 10})
    data["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    with pytest.raises(ConfigError) as error:
        load_stack_config(data, "dev")
    text = _problems(error.value)
    assert allowed in text and "fix: pulumi config rm --path 'tritonfleet:tritonDeployments[0].scaleToZero'" in text


@pytest.mark.parametrize("value", [{"idleMinutes": 1}, {"idleMinutes": 30, "acceptedFirstRequestSeconds": 0}, {"idle": 5}])
def test_bad_scale_to_zero_values_are_refused(value):
    with pytest.raises(ConfigError) as error:
        _config(**value)
    assert "tritonDeployments[0].scaleToZero" in _problems(error.value)


def _values(monitoring: bool = True, **changes: Any) -> tuple[dict[str, Any], str]:
    config = _config(idleMinutes=20)
    deployment = config.triton_deployments[0]
    if changes:
        deployment = deployment.model_copy(update=changes)
    pool = config.pool(deployment.pool)
    values = triton_values(
        deployment, pool_facts(config, pool), config.instance_type(pool), "s3://models", {}, {}, monitoring
    )
    return values, triton_release_name(deployment.name)


@cache
def _crd_schema(kind: str) -> dict[str, Any]:
    doc = yaml.load(CRDS[kind].read_text(), Loader=FAST_SAFE_LOADER)
    assert doc["spec"]["names"]["kind"] == kind
    return _strict(doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


def _crd_errors(obj: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(_crd_schema(obj["kind"]))
    return [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(obj)]


@pytest.mark.parametrize("monitoring", [True, False])
def test_chart_renders_a_scaled_object_and_route_that_match_kedas_crds(monitoring):
    values, name = _values(monitoring)
    objects = by_kind(render(values, name=name))
    scaled, route = objects["ScaledObject"], objects["InterceptorRoute"]
    assert _crd_errors(scaled) == [] and _crd_errors(route) == []
    # KEDA owns the HPA: the chart's own is gone, and the Deployment leaves its replica count to KEDA.
    assert "HorizontalPodAutoscaler" not in objects and "replicas" not in objects["Deployment"]["spec"]
    spec = scaled["spec"]
    assert (spec["idleReplicaCount"], spec["minReplicaCount"], spec["maxReplicaCount"]) == (
        0, values["replicas"]["min"], values["replicas"]["max"])  # fmt: skip
    assert spec["cooldownPeriod"] == 20 * 60
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    push = spec["triggers"][0]
    assert push["type"] == "external-push"
    assert push["metadata"] == {"scalerAddress": conventions.KEDA_HTTP_SCALER_ADDRESS, "interceptorRoute": name}
    prometheus = [t for t in spec["triggers"] if t["type"] == "prometheus"]
    assert bool(prometheus) == monitoring
    for trigger in prometheus:
        assert trigger["metadata"]["serverAddress"] == conventions.PROMETHEUS_URL
        assert f'namespace="triton",pod=~"{name}-.*"' in trigger["metadata"]["query"]
    # The same scale-up and scale-down behaviour as the chart's HPA.
    hpa_values = dict(values, scaleToZero={**values["scaleToZero"], "enabled": False})
    hpa = by_kind(render(hpa_values, name=name)).get("HorizontalPodAutoscaler")
    if hpa:
        assert spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"] == hpa["spec"]["behavior"]
    # The route: the release's Service by its HTTP port, the in-cluster names as hosts, the start as readiness.
    assert route["spec"]["target"] == {"service": name, "portName": "http"}
    assert f"{name}.triton.svc.cluster.local" in route["spec"]["rules"][0]["hosts"]
    assert route["spec"]["scalingMetric"] == {"concurrency": {"targetValue": CONCURRENCY_PER_REPLICA}}
    assert route["spec"]["timeouts"]["readiness"] == f"{values['scaleToZero']['readinessTimeoutSeconds']}s"
    # The interceptor may reach the HTTP port through the NetworkPolicy (a valid one).
    validate_strict(objects["NetworkPolicy"], pins.KUBERNETES_VERSION)
    rules = objects["NetworkPolicy"]["spec"]["ingress"]
    assert any(
        r["from"][0].get("namespaceSelector", {}).get("matchLabels") == {"kubernetes.io/metadata.name": "keda"}
        and r["ports"] == [{"port": "http", "protocol": "TCP"}]
        for r in rules
    )


def test_prometheus_triggers_carry_the_hpas_targets():
    config = _config(idleMinutes=20)
    deployment = config.triton_deployments[0].model_copy(
        update={"throughput_per_replica": 500.0, "queue_time_target": "20ms", "client_models": ["resnet"]}
    )
    by_name = {t["name"]: t for t in prometheus_triggers(deployment)}
    load, guard = by_name["inferences-per-second"], by_name["queue-ms-per-request"]
    assert (load["metricType"], load["threshold"]) == ("AverageValue", f"{500 * deployment.target_utilization:g}")
    assert load["query"].startswith("sum(rate(nv_inference_count{") and 'model=~"resnet"' in load["query"]
    assert (guard["metricType"], guard["threshold"]) == ("Value", "20")


def test_crd_check_catches_a_typo():
    values, name = _values()
    scaled = by_kind(render(values, name=name))["ScaledObject"]
    bad = copy.deepcopy(scaled)
    bad["spec"]["cooldownPeriods"] = 60
    assert _crd_errors(bad)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("idleSeconds", 5),
        ("readinessTimeoutSeconds", -1),
        ("scalerAddress", "http://scaler"),
        ("prometheus", {"serverAddress": "", "triggers": [{"name": "x", "metricType": "Max", "query": "q", "threshold": "1"}]}),
        ("prometheus", {"serverAddress": "", "triggers": [{"name": "x", "metricType": "Value", "query": "q", "threshold": "1m"}]}),
        ("idle", 60),
    ],
)
def test_chart_schema_rejects_bad_scale_to_zero_values(path, value):
    values, name = _values()
    values["scaleToZero"][path] = value
    with pytest.raises(Exception, match="values don't meet the specifications of the schema|scaleToZero"):
        render(values, name=name)


def test_chart_refuses_scale_to_zero_with_a_rollout():
    values, name = _values()
    values["rollout"] = {**values["rollout"], "enabled": True, "steps": [{"setWeight": 50}],
                        "analysis": {"prometheusAddress": "http://p:9090"}}
    with pytest.raises(Exception, match="scaleToZero.enabled and rollout.enabled exclude each other"):
        render(values, name=name)
