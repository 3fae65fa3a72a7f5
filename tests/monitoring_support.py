"""Helpers for the monitoring tests: the real promtool, rule files on disk, synthetic kube-state-metrics series."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import UPSTREAM_CHARTS
from tritonfleet.core.conventions import CAPACITY_LABEL, GPU_LABEL, POOL_LABEL
from tritonfleet.monitoring.rules import kube_state_label


def upstream_chart(name: str) -> Path:
    """The pinned upstream chart data of `name` (a folder under tests/upstream)."""
    return UPSTREAM_CHARTS / name


KPS_CHART = "kube-prometheus-stack-88.5.3"


def tool(name: str, package: str = "prometheus") -> str:
    """The path of a real binary, or skip the test saying which one is missing. CI (.ci/run) installs them and sets
    TRITONFLEET_REQUIRE_TOOLS=1, so there a missing binary fails instead of skipping silently."""
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not installed (Debian package {package}; .ci/install-system-packages installs it)"
        if os.environ.get("TRITONFLEET_REQUIRE_TOOLS") == "1":
            pytest.fail(message + " and TRITONFLEET_REQUIRE_TOOLS=1 forbids skipping")
        pytest.skip(message)
    return found


def write_rules(groups: list[dict[str, Any]], directory: Path, name: str = "rules.yaml") -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    return path


def run(*args: str, timeout: int = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


def matchers(labels: dict[str, str]) -> str:
    """A label set as PromQL and promtool write it inside braces: k="v", ..."""
    return ", ".join(f'{k}="{v}"' for k, v in labels.items())


def series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    return {"series": f"{metric}{{{matchers(labels)}}}", "values": values}


# ---------------------------------------------------------------- promtool test expectations


def firing(alertname: str, labels: dict[str, str], at: str) -> dict[str, Any]:
    """A promql_expr_test: ALERTS says the alert fires at `at` with exactly these labels (annotations, with their
    values, are not compared)."""
    every = {"alertname": alertname, "alertstate": "firing", **labels}
    return {
        "expr": f'ALERTS{{alertname="{alertname}", alertstate="firing"}}',
        "eval_time": at,
        "exp_samples": [{"labels": f"ALERTS{{{matchers(every)}}}", "value": 1}],
    }


def silent(alertname: str, at: str) -> dict[str, Any]:
    """An alert_rule_test: the alert does not fire at `at`."""
    return {"eval_time": at, "alertname": alertname, "exp_alerts": []}


def value_is(metric: str, labels: dict[str, str], value: float, at: str) -> dict[str, Any]:
    """A promql_expr_test: `metric` has one series, with these labels and this value."""
    inner = matchers(labels)
    return {
        "expr": metric,
        "eval_time": at,
        "exp_samples": [{"labels": f"{metric}{{{inner}}}" if inner else metric, "value": value}],
    }


def close_to(expr: str, labels: str, value: float, at: str, within: str = "1e-9") -> dict[str, Any]:
    """A promql_expr_test: `expr` is within `within` of `value` (figures with floating-point noise); `labels` is the
    result's label set as text ("{}" for an aggregate)."""
    return {"expr": f"abs({expr} - {value!r}) < bool {within}", "eval_time": at, "exp_samples": [{"labels": labels, "value": 1}]}


def absent(metric: str, at: str) -> dict[str, Any]:
    """A promql_expr_test: `metric` has no series at `at`."""
    return {"expr": metric, "eval_time": at, "exp_samples": []}


def gpu_node(node: str, pool: str, capacity: str, values: str, gpu: str = "L40S") -> dict[str, str]:
    """kube_node_labels of a GPU node as kube-state-metrics exports it with our allowlist."""
    labels = {
        "node": node,
        kube_state_label(POOL_LABEL): pool,
        kube_state_label(CAPACITY_LABEL): capacity,
        kube_state_label(GPU_LABEL): gpu,
    }
    return series("kube_node_labels", labels, values)


def pod_on(namespace: str, pod: str, node: str, values: str) -> dict[str, str]:
    return series("kube_pod_info", {"namespace": namespace, "pod": pod, "node": node}, values)


# The chart's default rule templates, vendored with their origin (tests/upstream/README.md).
VENDORED_RULE_TEMPLATES = UPSTREAM_CHARTS / KPS_CHART / "templates"


def chart_rule_groups(values: dict[str, Any], directory: Path) -> list[dict[str, Any]]:
    """Every PrometheusRule group kube-prometheus-stack (as pinned) renders with these values, by the Helm engine."""
    import helm_python

    from tritonfleet.core.conventions import KUBE_PROMETHEUS_STACK_RELEASE, MONITORING_NAMESPACE

    chart = directory / "kube-prometheus-stack"
    shutil.copytree(VENDORED_RULE_TEMPLATES, chart / "templates")
    meta = yaml.safe_load((upstream_chart(KPS_CHART) / "Chart.yaml").read_text())
    meta.pop("dependencies", None)  # sub-charts render no rules; the parent's values.yaml carries every rule switch
    (chart / "Chart.yaml").write_text(yaml.safe_dump(meta))
    shutil.copy(upstream_chart(KPS_CHART) / "values.yaml", chart / "values.yaml")
    rendered = helm_python.Chart.load(str(chart)).render(
        values, name=KUBE_PROMETHEUS_STACK_RELEASE, namespace=MONITORING_NAMESPACE
    )
    documents = [d for path, text in sorted(rendered.items()) if path.endswith(".yaml") for d in yaml.safe_load_all(text) if d]
    assert all(d["kind"] == "PrometheusRule" for d in documents)
    return [group for d in documents for group in d["spec"]["groups"]]
