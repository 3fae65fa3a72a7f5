"""The autoscaling rules (tritonfleet/monitoring/autoscaling.py) under the real promtool: replicas wanted from the HPA's
own signal, headroom, and each alert firing and silent (dev stack: resnet, 2000 inferences/s per replica × 0.8, 1..2)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.monitoring_support import close_to, firing, run, series, silent, tool, write_rules
from tritonfleet.monitoring import autoscaling, rules

POD = {"namespace": "triton", "pod": "triton-resnet-5d9c7b-x2x9k", "model": "resnet", "version": "1"}
OTHER = {"namespace": "triton", "pod": "triton-resnet-canary-7f8d9c-abcde", "model": "resnet", "version": "1"}  # deployment resnet-canary
DEPLOYMENT = {"namespace": "triton", "deployment": "triton-resnet"}


def _load(per_second: float, pod: dict[str, str] = POD) -> dict[str, str]:
    return series("nv_inference_count", pod, f"0+{per_second * 60:g}x40")


def _running(count: int) -> dict[str, str]:
    return series("kube_deployment_status_replicas_available", DEPLOYMENT, f"{count}x40")


def _value(expr: str, value: float, at: str = "20m") -> dict[str, Any]:
    return close_to(expr, "{}", value, at, within="1e-6")


def _fires(alert: str, at: str, **labels: str) -> dict[str, Any]:
    return firing(alert, labels, at)


WANTED = f'sum({autoscaling.WANTED}{{deployment="triton-resnet"}})'
HEADROOM = f'sum({autoscaling.HEADROOM}{{deployment="triton-resnet"}})'
CASES = {
    "wanted follows offered load, canary pods excluded": {
        "input_series": [_load(4000), _load(9999, OTHER), _running(2)],
        # 4000 inferences/s against 2000 × 0.8 per replica: ceil(2.5) = 3 wanted; 2 running carry 4000: headroom 0.
        "promql_expr_test": [_value(WANTED, 3), _value(HEADROOM, 0.0)],
    },
    "load above what maxReplicas carries fires, within it stays silent": {
        "input_series": [_load(4000), _running(2)],
        "promql_expr_test": [
            _fires("TritonLoadAboveMaxReplicas", "30m", **DEPLOYMENT, severity="warning"),
            _fires("TritonCapacityHeadroomLow", "30m", **DEPLOYMENT, severity="warning"),
        ],
    },
    "moderate load is silent": {
        "input_series": [_load(1000), _running(2)],
        "promql_expr_test": [_value(WANTED, 1), _value(HEADROOM, 0.75)],
        "alert_rule_test": [silent("TritonLoadAboveMaxReplicas", "30m"), silent("TritonCapacityHeadroomLow", "30m")],
    },
    "zero traffic wants nothing and has full headroom": {
        "input_series": [_load(0), _running(1)],
        "promql_expr_test": [_value(WANTED, 0), _value(HEADROOM, 1.0)],
    },
    "an HPA that cannot read its metrics fires": {
        "input_series": [
            series(
                "kube_horizontalpodautoscaler_status_condition",
                {"namespace": "triton", "horizontalpodautoscaler": "triton-resnet", "condition": "ScalingActive", "status": "false"},
                "1x40",
            )
        ],
        "promql_expr_test": [
            _fires(
                "TritonAutoscalingInactive", "15m", condition="ScalingActive", horizontalpodautoscaler="triton-resnet",
                namespace="triton", status="false", severity="critical",
            )
        ],
    },
    "an HPA that reads its metrics is silent": {
        "input_series": [
            series(
                "kube_horizontalpodautoscaler_status_condition",
                {"namespace": "triton", "horizontalpodautoscaler": "triton-resnet", "condition": "ScalingActive", "status": "false"},
                "0x40",
            )
        ],
        "alert_rule_test": [silent("TritonAutoscalingInactive", "30m")],
    },
}


def test_every_autoscaling_alert_has_a_firing_and_a_silent_case(stack_config):
    alerts = {a["alert"] for a in autoscaling.autoscaling_alerts(stack_config("dev"))}
    fired = {t["expr"].split('"')[1] for c in CASES.values() for t in c.get("promql_expr_test", []) if "ALERTS" in t["expr"]}
    silent = {t["alertname"] for c in CASES.values() for t in c.get("alert_rule_test", [])}
    assert alerts == fired == silent


def test_the_rules_read_the_hpas_signal():
    from components.k8s.autoscaling import INFERENCES_PER_SECOND, RATE_WINDOW, triton_adapter_rules

    primary = next(r for r in triton_adapter_rules() if r["name"]["as"] == INFERENCES_PER_SECOND)
    assert primary["seriesQuery"].startswith(autoscaling.SIGNAL_COUNTER + "{") and RATE_WINDOW == autoscaling.SIGNAL_WINDOW


@pytest.mark.parametrize("case", list(CASES))
def test_promtool_unit(case, tmp_path, stack_config):
    promtool = tool("promtool")
    write_rules(rules.rule_groups(stack_config("dev")), tmp_path)
    test = {"interval": "1m", **CASES[case]}
    (tmp_path / "test.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [test]}, sort_keys=False)
    )
    result = run(promtool, "test", "rules", str(tmp_path / "test.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
