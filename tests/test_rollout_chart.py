"""The rendered rollout objects: the Rollout and AnalysisTemplate pass the Argo Rollouts v1.9.1 CRD schemas (vendored
in tests/upstream, unknown fields made errors), the Deployment, HPA and ServiceMonitor they change pass
kubernetes-validate and the Prometheus Operator CRD, and each shipped query is valid PromQL (promtool)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import jsonschema
import pytest
import yaml

from components.k8s.rollout import canary_steps, rollout_values
from tests.access_helpers import ACCESS_CASES, FACTS, chart_values, deployment
from tests.conftest import UPSTREAM_CHARTS
from tests.kube_validate import CUSTOM_RESOURCE_GROUPS, validate_strict
from tests.serving_helpers import by_kind, planned_values, render
from tests.test_rollout import ROLLOUT, vision
from tests.test_triton_chart import _strict, _strict_crd_schema
from tritonfleet.core import pins

ARGO_CRDS = UPSTREAM_CHARTS / f"argo-rollouts-{pins.ARGO_ROLLOUTS_VERSION}" / "crds"


@cache
def argo_schema(file: str) -> dict[str, Any]:
    crd = yaml.safe_load((ARGO_CRDS / file).read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return _strict(version["schema"]["openAPIV3Schema"])


@cache
def argo_validator(file: str) -> jsonschema.protocols.Validator:
    """A validator for an Argo CRD's schema, the schema checked against its metaschema once per test process
    (`jsonschema.validate` checks it again on every call: 1-2 s of CPU for the Rollout CRD)."""
    schema = argo_schema(file)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def rendered(**changes) -> dict[str, dict[str, Any]]:
    deployment = vision(rollout=ROLLOUT, queueTimeTarget="20ms", **changes)
    values = copy.deepcopy(planned_values("prod", "triton-vision"))
    values["rollout"] = rollout_values(deployment, monitoring=True)
    return by_kind(render(values, name="triton-vision"))


def test_rollout_and_analysis_template_pass_their_crd_schemas():
    objects = rendered()
    argo_validator("rollout-crd.yaml").validate(objects["Rollout"])
    argo_validator("analysis-template-crd.yaml").validate(objects["AnalysisTemplate"])
    canary = objects["Rollout"]["spec"]["strategy"]["canary"]
    assert canary["steps"] == [
        {"setWeight": 10}, {"pause": {"duration": "5m"}}, {"setWeight": 50}, {"pause": {"duration": "5m"}},
    ]
    assert objects["Rollout"]["spec"]["workloadRef"]["name"] == objects["Deployment"]["metadata"]["name"]
    metrics = objects["AnalysisTemplate"]["spec"]["metrics"]
    assert {m["name"] for m in metrics} == {"error-ratio", "latency-vs-stable", "queue-ms"}
    assert all(m["inconclusiveLimit"] == 0 and m["failureLimit"] == 0 and m["initialDelay"] == "5m" for m in metrics)


def test_the_crd_check_catches_a_typo():
    objects = rendered()
    objects["Rollout"]["spec"]["strategy"]["canary"]["stepz"] = []
    with pytest.raises(jsonschema.ValidationError):
        argo_validator("rollout-crd.yaml").validate(objects["Rollout"])


def test_the_hpa_scales_the_rollout_and_the_deployment_leaves_the_count_to_it():
    objects = rendered(maxReplicas=6, throughputPerReplica=100)
    assert objects["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["kind"] == "Rollout"
    assert "replicas" not in objects["Deployment"]["spec"]
    assert objects["ServiceMonitor"]["spec"]["podTargetLabels"] == ["tritonfleet.io/track"]
    jsonschema.validate(objects["ServiceMonitor"], _strict_crd_schema("ServiceMonitor"))
    for kind in ("HorizontalPodAutoscaler", "Deployment"):
        validate_strict(objects[kind], pins.KUBERNETES_VERSION)


def test_without_a_rollout_nothing_changes():
    values = planned_values("prod", "triton-vision")
    values = {**values, "rollout": rollout_values(vision(rollout=None), monitoring=True)}
    objects = by_kind(render(values, name="triton-vision"))
    assert "Rollout" not in objects and objects["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["kind"] == "Deployment"
    assert rollout_values(vision(rollout=ROLLOUT), monitoring=False) == {"enabled": False}


def test_steps_end_before_the_promotion():
    assert canary_steps(vision(rollout={**ROLLOUT, "steps": [100]})) == []


def test_chart_refuses_a_rollout_without_steps_or_prometheus():
    values = copy.deepcopy(planned_values("prod", "triton-vision"))
    values["rollout"] = {**rollout_values(vision(rollout=ROLLOUT), monitoring=True), "steps": []}
    with pytest.raises(Exception, match="rollout.enabled needs rollout.steps"):
        render(values, name="triton-vision")


def test_every_shipped_query_is_valid_promql(tmp_path):
    from tests.monitoring_support import run, tool, write_rules

    metrics = rendered()["AnalysisTemplate"]["spec"]["metrics"]
    records = [{"record": f"q:{m['name'].replace('-', '_')}", "expr": m["provider"]["prometheus"]["query"]} for m in metrics]
    result = run(tool("promtool"), "check", "rules", str(write_rules([{"name": "q", "rules": records}], tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_pins_reach_the_container_as_its_model_config_name():
    from tritonfleet.core.rollout import pinned_config_name

    deployment = vision(rollout=ROLLOUT, modelVersions={"resnet50": 3})
    values = copy.deepcopy(planned_values("prod", "triton-vision"))
    values["modelConfigName"] = pinned_config_name(deployment)
    args = by_kind(render(values, name="triton-vision"))["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--model-config-name={pinned_config_name(deployment)}" in args
    unpinned = by_kind(render(planned_values("prod", "triton-vision"), name="triton-vision"))["Deployment"]
    assert not any(a.startswith("--model-config-name") for a in unpinned["spec"]["template"]["spec"]["containers"][0]["args"])


def routed(cloud: str, access: dict) -> tuple[str | None, list[dict[str, Any]]]:
    """The router the cloud's facts give the access config's exposure mode, and the chart rendered with a rollout."""
    router = FACTS[cloud].rollout_traffic_routers.get(deployment(access).access.mode)
    values = chart_values(cloud, access)
    values["rollout"] = rollout_values(vision(rollout=ROLLOUT), monitoring=True, router=router)
    return router, render(values, name="triton-llm")


@pytest.mark.parametrize(("label", "cloud", "access"), ACCESS_CASES, ids=[c[0] for c in ACCESS_CASES])
def test_the_alb_splits_rest_by_weight_and_every_other_mode_keeps_the_replica_ratio(label, cloud, access):
    from tests.test_triton_chart import KUBERNETES_VERSIONS

    router, objects = routed(cloud, access)
    (rollout_object,) = [o for o in objects if o["kind"] == "Rollout"]
    argo_validator("rollout-crd.yaml").validate(rollout_object)
    for obj in objects:
        if obj["apiVersion"].startswith(CUSTOM_RESOURCE_GROUPS):  # validated against their CRDs elsewhere
            continue
        for version in KUBERNETES_VERSIONS:
            validate_strict(obj, version)
    canary = rollout_object["spec"]["strategy"]["canary"]
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    ingresses = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Ingress"}
    alb_mode = cloud == "aws" and deployment(access).access.mode in ("public", "internal-application")
    assert router == ("alb" if alb_mode else None)
    if router is None:
        assert "trafficRouting" not in canary and canary["maxSurge"] == 1
        assert {"triton-llm-canary", "triton-llm-stable"}.isdisjoint(services)
        return
    alb = canary["trafficRouting"]["alb"]
    assert (canary["canaryService"], canary["stableService"]) == ("triton-llm-canary", "triton-llm-stable")
    assert alb == {"ingress": "triton-llm-http", "rootService": "triton-llm", "servicePort": 8000}
    for track in ("canary", "stable"):
        assert services[f"triton-llm-{track}"]["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}]
        assert services[f"triton-llm-{track}"]["spec"]["selector"] == services["triton-llm"]["spec"]["selector"]
    assert 8000 in [p["port"] for p in services[alb["rootService"]]["spec"]["ports"]]
    backends = {
        name: {p["backend"]["service"]["name"] + ":" + p["backend"]["service"]["port"]["name"]
               for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]}
        for name, ingress in ingresses.items()
    }
    # REST goes to the action Argo Rollouts writes for the root Service; gRPC keeps the Service of all pods.
    assert backends[alb["ingress"]] == {"triton-llm:use-annotation"}
    assert backends.get("triton-llm-grpc", {"triton-llm:grpc"}) == {"triton-llm:grpc"}


def test_chart_refuses_alb_weights_without_the_ingress_that_carries_them():
    values = copy.deepcopy(planned_values("prod", "triton-vision"))
    values["rollout"] = rollout_values(vision(rollout=ROLLOUT), monitoring=True, router="alb")
    with pytest.raises(Exception, match="rollout.trafficRouting alb needs ingress.enabled"):
        render(values, name="triton-vision")
    values["rollout"]["trafficRouting"] = "nginx"
    with pytest.raises(Exception, match="trafficRouting"):
        render(values, name="triton-vision")
