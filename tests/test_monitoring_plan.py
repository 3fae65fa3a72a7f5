"""The Monitoring component under the Pulumi mock runtime: what the real program registers for monitoring."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import ROOT, STACKS, engine_config, run_program
from tritonfleet.core import pins

RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
RULE_TYPE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
SLACK_URL = "https://hooks.slack.example/T0/B0/secret-path"


def _by_type(resources: list[dict[str, Any]], typ: str) -> list[dict[str, Any]]:
    return [r for r in resources if r["type"] == typ]


def _kps(resources: list[dict[str, Any]]) -> dict[str, Any]:
    [release] = [r for r in _by_type(resources, RELEASE_TYPE) if r["inputs"]["chart"] == "kube-prometheus-stack"]
    return release


@pytest.fixture(scope="module")
def dev_plan(stock_plan) -> dict[str, Any]:
    return stock_plan("dev")


def _run(stack: str, monitoring: dict[str, Any], secret: bool) -> list[dict[str, Any]]:
    from tritonfleet.plan.project import load_project, stack_config

    raw, secret_keys = stack_config(load_project(ROOT), stack)
    raw = {**raw, "tritonfleet:monitoring": json.dumps(monitoring)}
    keys = [*secret_keys, "tritonfleet:monitoring"] if secret else secret_keys
    return [r.document() for r in run_program(ROOT, "tritonfleet", stack, raw, keys).resources]


def test_release_is_pinned_and_named(dev_plan):
    release = _kps(dev_plan["resources"])
    inputs = release["inputs"]
    assert inputs["name"] == "kube-prometheus-stack"
    assert inputs["namespace"] == "monitoring"
    assert inputs["version"] == pins.KUBE_PROMETHEUS_STACK_CHART["version"]
    assert inputs["repositoryOpts"] == {"repo": pins.KUBE_PROMETHEUS_STACK_CHART["repo"]}
    spec = inputs["values"]["prometheus"]["prometheusSpec"]
    assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False
    assert spec["ruleSelectorNilUsesHelmValues"] is False
    config = json.loads(engine_config("dev")["tritonfleet:monitoring"])
    assert spec["retention"] == f"{config['retentionDays']}d"
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == f"{config['storageGi']}Gi"
    assert release["parent"].endswith("tritonfleet:k8s:Monitoring::tf-monitoring")
    assert release["provider"], "the release goes through the cluster's Kubernetes provider"


def test_grafana_password_is_generated_and_never_in_clear(dev_plan):
    resources = dev_plan["resources"]
    [password] = [r for r in _by_type(resources, "random:index/randomPassword:RandomPassword") if "monitoring" in r["name"]]
    [secret] = [
        r
        for r in _by_type(resources, "kubernetes:core/v1:Secret")
        if r["inputs"]["metadata"]["name"] == "tritonfleet-grafana-admin"
    ]
    assert secret["inputs"]["stringData"] == "[secret]"
    assert password["urn"] in secret["dependsOn"]
    release = _kps(resources)
    assert release["inputs"]["values"]["grafana"]["admin"]["existingSecret"] == "tritonfleet-grafana-admin"
    assert secret["urn"] in release["dependsOn"]
    # The offline plan's stand-in password (fake_state) appears nowhere in the plan document.
    assert f"offline-{password['name']}" not in json.dumps(dev_plan)


def test_dashboards_and_rules_are_registered(dev_plan):
    resources = dev_plan["resources"]
    maps = [
        r
        for r in _by_type(resources, "kubernetes:core/v1:ConfigMap")
        if r["inputs"]["metadata"].get("labels") == {"grafana_dashboard": "1"}
    ]
    assert sorted(r["inputs"]["metadata"]["name"] for r in maps) == [
        "tritonfleet-dashboard-cost",
        "tritonfleet-dashboard-gpu",
        "tritonfleet-dashboard-triton",
    ]
    [rule] = _by_type(resources, RULE_TYPE)
    assert rule["inputs"]["metadata"]["namespace"] == "monitoring"
    assert _kps(resources)["urn"] in rule["dependsOn"], "the PrometheusRule CRD comes with the release"
    assert {g["name"] for g in rule["inputs"]["spec"]["groups"]} >= {
        "tritonfleet-triton",
        "tritonfleet-cost",
        "tritonfleet-alerts",
    }


def test_no_monitoring_resources_when_disabled():
    resources = _run("dev", {"enabled": False}, secret=False)
    # (the EKS node monitoring agent add-on reports node health, GPU faults among them: not the monitoring stack)
    assert not [r for r in resources if "monitoring" in r["name"] and "node-monitoring-agent" not in r["name"]]
    assert not _by_type(resources, RULE_TYPE)
    assert not [r for r in _by_type(resources, "random:index/randomPassword:RandomPassword") if "monitoring" in r["name"]]
    assert all(r["inputs"]["chart"] != "kube-prometheus-stack" for r in _by_type(resources, RELEASE_TYPE))


def test_alert_receivers_go_to_a_secret_not_the_values():
    monitoring = {"alertReceivers": [{"name": "chat", "kind": "slack", "url": SLACK_URL, "channel": "#gpu"}]}
    resources = _run("staging", monitoring, secret=True)
    [config] = [
        r for r in _by_type(resources, "kubernetes:core/v1:Secret") if r["inputs"]["metadata"]["name"].startswith("alertmanager-")
    ]
    assert config["inputs"]["metadata"]["name"] == "alertmanager-kube-prometheus-stack-alertmanager"
    assert config["inputs"]["stringData"] == "[secret]"
    release = _kps(resources)
    assert release["inputs"]["values"]["alertmanager"] == {"alertmanagerSpec": {"useExistingSecret": True}}
    assert config["urn"] in release["dependsOn"]
    assert "secret-path" not in json.dumps(resources)


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_plans_with_monitoring(stack, stock_plan):
    resources = stock_plan(stack)["resources"]
    assert len(_by_type(resources, RULE_TYPE)) == 1
    assert _kps(resources)["inputs"]["name"] == "kube-prometheus-stack"
