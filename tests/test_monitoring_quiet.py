"""A healthy managed cluster raises no alert: every rule group the stack ships (kube-prometheus-stack's default rules,
rendered by the Helm engine from the pinned chart with OUR values, plus tritonfleet's) runs in promtool over the series of
a healthy EKS or GKE cluster (Triton, DCGM, kube-state-metrics, node-exporter, kubelet and the API server up; no
control-plane targets), and only the Watchdog heartbeat fires. The same series with the chart's default values make
the control-plane alerts fire: the test can tell the difference."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.conftest import engine_config
from tests.monitoring_support import chart_rule_groups, gpu_node, pod_on, run, series, tool, write_rules
from tritonfleet.clouds.aws.monitoring import aws_monitoring_facts
from tritonfleet.clouds.gcp.monitoring import gcp_monitoring_facts
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.conventions import MONITORING_NAMESPACE
from tritonfleet.monitoring import rules
from tritonfleet.monitoring.sizing import prometheus_sizing
from tritonfleet.monitoring.stack_values import kube_prometheus_stack_values

FACTS = {"aws": aws_monitoring_facts(), "gcp": gcp_monitoring_facts()}
STACK_OF_CLOUD = {"aws": "dev", "gcp": "gcp-dev"}
MINUTES = 260  # longer than every `for:` of every rule (GpuUtilizationLow waits 3h)
EVAL_AT = f"{MINUTES - 5}m"
CONTROL_PLANE_ALERTS = ("KubeControllerManagerDown", "KubeSchedulerDown")
# The control needs only the chart's absent() alerts to fire (`for: 15m`); promtool evaluates up to the latest
# eval_time, so the control stops there instead of at EVAL_AT.
CONTROL_EVAL_AT = "25m"
# The rules are evaluated every 5 minutes (Prometheus here: 30 s), the series are sampled every minute. The healthy
# series are steady, so a rule's state at EVAL_AT does not depend on the step: a condition true throughout fires once
# its `for:` has passed at any step, one false throughout never does; range functions still see 1-minute samples.
EVALUATION_INTERVAL = "5m"


def _config(cloud: str):
    stack = STACK_OF_CLOUD[cloud]
    return load_stack_config(engine_config(stack), stack)


def _steady(value: float) -> str:
    return f"{value:g}x{MINUTES}"


def _rising(per_minute: float) -> str:
    return f"0+{per_minute:g}x{MINUTES}"


def _up(job: str, namespace: str, instance: str, value: int = 1, **labels: str) -> dict[str, str]:
    return series("up", {"job": job, "namespace": namespace, "service": job, "instance": instance, **labels}, _steady(value))


def healthy_cluster(config, cloud: str) -> list[dict[str, str]]:
    """Series of a healthy managed cluster: one system node and one GPU node of a priced pool, Triton serving."""
    gpu_pool = rules.node_prices(config)[0]  # priced on AWS; GCP prices are unknown to the catalog (the plan says so)
    nodes = {"system-0": None, "gpu-0": gpu_pool}
    dns_job = "kube-dns" if cloud == "gcp" else "coredns"
    out = [
        _up("apiserver", "default", "10.0.0.1:443"),
        _up(dns_job, "kube-system", "10.1.0.5:9153"),
        _up("kube-state-metrics", MONITORING_NAMESPACE, "10.1.0.6:8080"),
        _up("kube-prometheus-stack-prometheus", MONITORING_NAMESPACE, "10.1.0.7:9090"),
        _up("kube-prometheus-stack-alertmanager", MONITORING_NAMESPACE, "10.1.0.8:9093"),
        _up("kube-prometheus-stack-operator", MONITORING_NAMESPACE, "10.1.0.9:10250"),
        _up("nvidia-dcgm-exporter", "gpu-operator", "10.1.1.2:9400"),
        _up("resnet-triton", "triton", "10.1.1.3:8002"),
        series("prometheus_operator_ready", {"job": "kube-prometheus-stack-operator", "namespace": MONITORING_NAMESPACE, "controller": "prometheus"}, _steady(1)),
        series("prometheus_config_last_reload_successful", {"job": "kube-prometheus-stack-prometheus", "namespace": MONITORING_NAMESPACE}, _steady(1)),
        series("prometheus_notifications_alertmanagers_discovered", {"job": "kube-prometheus-stack-prometheus", "namespace": MONITORING_NAMESPACE}, _steady(1)),
        series("alertmanager_config_last_reload_successful", {"job": "kube-prometheus-stack-alertmanager", "namespace": MONITORING_NAMESPACE}, _steady(1)),
        series("kube_state_metrics_list_total", {"job": "kube-state-metrics", "result": "success", "resource": "v1.Pod"}, _rising(2)),
        series("kube_state_metrics_list_total", {"job": "kube-state-metrics", "result": "error", "resource": "v1.Pod"}, _steady(0)),
    ]
    for i, (node, price) in enumerate(nodes.items()):
        ip = f"10.0.1.{10 + i}"
        out += [
            _up("kubelet", "kube-system", f"{ip}:10250", metrics_path="/metrics", node=node),
            _up("kubelet", "kube-system", f"{ip}:10250", metrics_path="/metrics/cadvisor", node=node),
            _up("node-exporter", MONITORING_NAMESPACE, f"{ip}:9100"),
            series("kube_node_info", {"job": "kube-state-metrics", "node": node, "kubelet_version": "v1.33.5"}, _steady(1)),
            series("kubernetes_build_info", {"job": "kubelet", "node": node, "git_version": "v1.33.5-eks"}, _steady(1)),
            series("kube_node_spec_unschedulable", {"job": "kube-state-metrics", "node": node}, _steady(0)),
            series("kube_node_status_condition", {"job": "kube-state-metrics", "node": node, "condition": "Ready", "status": "true"}, _steady(1)),
            series("kube_node_status_condition", {"job": "kube-state-metrics", "node": node, "condition": "Ready", "status": "false"}, _steady(0)),
            series("kube_node_status_condition", {"job": "kube-state-metrics", "node": node, "condition": "MemoryPressure", "status": "true"}, _steady(0)),
            series("kube_node_status_condition", {"job": "kube-state-metrics", "node": node, "condition": "DiskPressure", "status": "true"}, _steady(0)),
            series("node_filesystem_avail_bytes", {"job": "node-exporter", "instance": f"{ip}:9100", "device": "/dev/nvme0n1p1", "fstype": "xfs", "mountpoint": "/"}, _steady(60e9)),
            series("node_filesystem_size_bytes", {"job": "node-exporter", "instance": f"{ip}:9100", "device": "/dev/nvme0n1p1", "fstype": "xfs", "mountpoint": "/"}, _steady(100e9)),
            series("node_filesystem_readonly", {"job": "node-exporter", "instance": f"{ip}:9100", "device": "/dev/nvme0n1p1", "fstype": "xfs", "mountpoint": "/"}, _steady(0)),
            series("node_filesystem_files_free", {"job": "node-exporter", "instance": f"{ip}:9100", "device": "/dev/nvme0n1p1", "fstype": "xfs", "mountpoint": "/"}, _steady(5e6)),
            series("node_filesystem_files", {"job": "node-exporter", "instance": f"{ip}:9100", "device": "/dev/nvme0n1p1", "fstype": "xfs", "mountpoint": "/"}, _steady(6e6)),
            series("node_memory_MemAvailable_bytes", {"job": "node-exporter", "instance": f"{ip}:9100"}, _steady(20e9)),
            series("node_memory_MemTotal_bytes", {"job": "node-exporter", "instance": f"{ip}:9100"}, _steady(32e9)),
            series("node_cpu_seconds_total", {"job": "node-exporter", "instance": f"{ip}:9100", "cpu": "0", "mode": "idle"}, _rising(45)),
            series("node_cpu_seconds_total", {"job": "node-exporter", "instance": f"{ip}:9100", "cpu": "0", "mode": "user"}, _rising(15)),
            series("node_load1", {"job": "node-exporter", "instance": f"{ip}:9100"}, _steady(0.5)),
            series("node_timex_sync_status", {"job": "node-exporter", "instance": f"{ip}:9100"}, _steady(1)),
            series("node_timex_offset_seconds", {"job": "node-exporter", "instance": f"{ip}:9100"}, _steady(0.001)),
            series("node_timex_maxerror_seconds", {"job": "node-exporter", "instance": f"{ip}:9100"}, _steady(0.1)),
            series("kubelet_running_pods", {"job": "kubelet", "metrics_path": "/metrics", "node": node, "instance": f"{ip}:10250"}, _steady(12)),
            series("kube_node_status_capacity", {"job": "kube-state-metrics", "node": node, "resource": "pods", "unit": "integer"}, _steady(110)),
        ]
        if price is not None:
            out.append(gpu_node(node, price.pool, price.capacity, _steady(1)))
            out.append(series("kube_node_created", {"job": "kube-state-metrics", "node": node}, _steady(1_700_000_000)))
    gpu = {"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-a", "gpu": "0", "UUID": "GPU-0001", "Hostname": "gpu-0"}
    out += [
        pod_on("gpu-operator", "nvidia-dcgm-exporter-a", "gpu-0", _steady(1)),
        pod_on("triton", "resnet-0", "gpu-0", _steady(1)),
        series("DCGM_FI_DEV_GPU_UTIL", gpu, _steady(55)),
        series("DCGM_FI_DEV_FB_USED", gpu, _steady(30_000)),
        series("DCGM_FI_DEV_FB_FREE", gpu, _steady(15_000)),
        series("DCGM_FI_DEV_POWER_USAGE", gpu, _steady(210)),
        series("DCGM_FI_DEV_XID_ERRORS", gpu, _steady(0)),
        series("kube_pod_status_phase", {"job": "kube-state-metrics", "namespace": "triton", "pod": "resnet-0", "phase": "Running"}, _steady(1)),
        series("kube_pod_status_ready", {"job": "kube-state-metrics", "namespace": "triton", "pod": "resnet-0", "condition": "true"}, _steady(1)),
        series("kube_pod_container_status_restarts_total", {"job": "kube-state-metrics", "namespace": "triton", "pod": "resnet-0", "container": "triton"}, _steady(0)),
    ]
    for deployment in config.triton_deployments:
        labels = {"job": "kube-state-metrics", "namespace": deployment.namespace, "deployment": deployment.name}
        out += [
            series(metric, labels, _steady(deployment.min_replicas))
            for metric in (
                "kube_deployment_spec_replicas",
                "kube_deployment_status_replicas_available",
                "kube_deployment_status_replicas_updated",
                "kube_deployment_status_replicas",
            )
        ]
        out += [series(metric, labels, _steady(3)) for metric in ("kube_deployment_metadata_generation", "kube_deployment_status_observed_generation")]
        hpa = {"job": "kube-state-metrics", "namespace": deployment.namespace, "horizontalpodautoscaler": deployment.name}
        out += [
            series("kube_horizontalpodautoscaler_spec_max_replicas", hpa, _steady(deployment.max_replicas + 1)),
            series("kube_horizontalpodautoscaler_spec_min_replicas", hpa, _steady(deployment.min_replicas)),
            series("kube_horizontalpodautoscaler_status_current_replicas", hpa, _steady(deployment.min_replicas)),
            series("kube_horizontalpodautoscaler_status_desired_replicas", hpa, _steady(deployment.min_replicas)),
        ]
    model = {"namespace": "triton", "pod": "resnet-0", "model": "resnet", "version": "1"}
    out += [
        series("nv_inference_request_success", model, _rising(6000)),
        series("nv_inference_request_failure", {**model, "reason": "BACKEND"}, _steady(0)),
        series("tritonfleet_triton_model_ready", {**model, "state": "READY"}, _steady(1)),
        series("tritonfleet_triton_model_state_up", {"namespace": "triton", "pod": "resnet-0"}, _steady(1)),
        series("nv_inference_count", model, _rising(24000)),
        series("nv_inference_exec_count", model, _rising(3000)),
        series("nv_inference_request_duration_us", model, _rising(6000 * 20_000)),
        series("nv_inference_queue_duration_us", model, _rising(6000 * 1_000)),
        series("nv_inference_compute_infer_duration_us", model, _rising(6000 * 15_000)),
    ]
    return out


def _values(config, cloud: str, chart_defaults: bool) -> dict[str, Any]:
    if chart_defaults:
        return {}
    return kube_prometheus_stack_values(config.monitoring, FACTS[cloud], prometheus_sizing(config))


def _alert_names(groups: list[dict[str, Any]]) -> list[str]:
    return sorted({r["alert"] for g in groups for r in g["rules"] if "alert" in r})


def _promtool_test(groups, input_series, expectations, tmp_path, expressions=()) -> str:
    promtool = tool("promtool")
    write_rules(groups, tmp_path)
    test: dict[str, Any] = {"interval": "1m", "input_series": input_series}
    if expectations:
        test["alert_rule_test"] = expectations
    if expressions:
        test["promql_expr_test"] = list(expressions)
    (tmp_path / "test.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": EVALUATION_INTERVAL, "tests": [test]}, sort_keys=False)
    )
    result = run(promtool, "test", "rules", str(tmp_path / "test.yaml"), timeout=240)
    return result.stdout + result.stderr if result.returncode else ""


def _watchdog(groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The heartbeat that must always fire (promtool compares annotations too)."""
    rule = next(r for g in groups for r in g["rules"] if r.get("alert") == "Watchdog")
    return {"exp_labels": {"alertname": "Watchdog", **rule["labels"]}, "exp_annotations": rule["annotations"]}


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_a_healthy_managed_cluster_raises_no_alert(cloud, tmp_path):
    config = _config(cloud)
    chart = chart_rule_groups(_values(config, cloud, chart_defaults=False), tmp_path)
    ours = rules.rule_groups(config)
    names = _alert_names(chart + ours)
    assert len(_alert_names(chart)) > 100, "the chart's default alerts were not rendered"
    for hidden in CONTROL_PLANE_ALERTS + ("KubeProxyDown",):
        assert hidden not in names, f"{hidden} is still shipped on {cloud}"
    expectations = [
        {"eval_time": EVAL_AT, "alertname": name, "exp_alerts": [_watchdog(chart)] if name == "Watchdog" else []}
        for name in names
    ]
    # The series reach the rules: the GPU pool's utilisation is recorded, so the GPU alerts saw data.
    pool = rules.node_prices(config)[0].pool
    recorded = [{"expr": "pool:tritonfleet_gpu_util:avg_percent", "eval_time": EVAL_AT, "exp_samples": [{"labels": f'pool:tritonfleet_gpu_util:avg_percent{{pool="{pool}"}}', "value": 55}]}]
    failures = _promtool_test(chart + ours, healthy_cluster(config, cloud), expectations, tmp_path, recorded)
    assert failures == "", failures


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_the_chart_defaults_page_forever_on_the_same_healthy_cluster(cloud, tmp_path):
    """The control: the chart's defaults keep scraping the hidden control plane, and its absent() alerts fire."""
    config = _config(cloud)
    chart = chart_rule_groups(_values(config, cloud, chart_defaults=True), tmp_path)
    firing = {
        "expr": f'count by (alertname) (ALERTS{{alertstate="firing", alertname=~"{"|".join(CONTROL_PLANE_ALERTS)}"}})',
        "eval_time": CONTROL_EVAL_AT,
        "exp_samples": [{"labels": f'{{alertname="{name}"}}', "value": 1} for name in CONTROL_PLANE_ALERTS],
    }
    failures = _promtool_test(chart, healthy_cluster(config, cloud), [], tmp_path, [firing])
    assert failures == "", failures


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_every_hidden_component_is_switched_off_with_a_source(cloud):
    facts = FACTS[cloud]
    values = _values(_config(cloud), cloud, chart_defaults=False)
    keys = {f.chart_key for f in facts.hidden}
    assert {"kubeControllerManager", "kubeScheduler", "kubeEtcd", "kubeProxy"} <= keys
    for fact in facts.hidden:
        assert values[fact.chart_key] == {"enabled": False}
    for fact in facts.extra:
        assert values[fact.chart_key] == {"enabled": True}
    for fact in facts.hidden + facts.extra:
        assert fact.source.startswith("https://") and fact.as_of and fact.why
    assert facts.log_destination
