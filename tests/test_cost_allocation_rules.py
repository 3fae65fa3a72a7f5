"""Live cost per pod and Triton deployment (monitoring/rules.py allocation_rules), by the real promtool: a node's
catalog $/hour split by the GPUs each pod requests, the unrequested rest idle, and the parts adding up to the node."""

from __future__ import annotations

import yaml

from tests.conftest import engine_config
from tests.monitoring_support import close_to, gpu_node, run, series, tool, write_rules
from tritonfleet.core.config import load_stack_config
from tritonfleet.monitoring import rules

GPU = {"resource": "nvidia_com_gpu", "unit": "integer"}


def _pod(pod: str, gpus: int, release: str) -> list[dict[str, str]]:
    labels = {"namespace": "triton", "pod": pod}
    return [
        series("kube_pod_container_resource_requests", {**labels, "container": "triton", "node": "node-a", **GPU}, f"{gpus}x30"),
        series("kube_pod_labels", {**labels, "label_app_kubernetes_io_instance": release}, "1x30"),
    ]


def _compute(pod: str, model: str, us_per_minute: float, inferences_per_minute: float) -> list[dict[str, str]]:
    """Triton's counters of one model on one pod (compute time split as input 0, infer all, output 0)."""
    labels = {"namespace": "triton", "pod": pod, "model": model, "version": "1"}
    return [
        series("nv_inference_compute_input_duration_us", labels, "0x30"),
        series("nv_inference_compute_infer_duration_us", labels, f"0+{us_per_minute:g}x30"),
        series("nv_inference_compute_output_duration_us", labels, "0x30"),
        series("nv_inference_count", labels, f"0+{inferences_per_minute:g}x30"),
    ]


def _check(expr: str, labels: str, value: float) -> dict:
    return close_to(expr, labels, value, "10m")


def test_gpu_shares_idle_and_deployments_add_up_to_the_node(tmp_path):
    config = load_stack_config(engine_config("dev"), "dev")
    price = next(p for p in rules.node_prices(config) if p.pool == "l40s" and p.capacity == "spot").usd_per_hour
    write_rules(rules.rule_groups(config), tmp_path)
    inputs = [
        gpu_node("node-a", "l40s", "spot", "1x30"),
        series("kube_node_status_allocatable", {"node": "node-a", **GPU}, "4x30"),  # 4 GPUs: 1 + 2 requested, 1 idle
        *_pod("resnet-0", 1, "resnet"),
        *_pod("resnet-1", 2, "resnet"),
        # resnet-1 serves two models: a 3:1 split of its compute time splits its share 3:1
        *_compute("resnet-1", "resnet", 3_000_000, 6000),
        *_compute("resnet-1", "bert", 1_000_000, 600),
    ]
    pod = "namespace_pod:tritonfleet_usd_per_hour:gpu_share"
    idle = "node:tritonfleet_idle_usd_per_hour:unrequested"
    parts = f"(sum({pod}) + sum({idle})) / sum(node:tritonfleet_usd_per_hour:catalog)"
    test = {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [
            _check(f'{pod}{{pod="resnet-0"}}', '{namespace="triton", node="node-a", pod="resnet-0", pool="l40s"}', price / 4),
            _check(f'{pod}{{pod="resnet-1"}}', '{namespace="triton", node="node-a", pod="resnet-1", pool="l40s"}', price / 2),
            _check(idle, '{node="node-a", pool="l40s"}', price / 4),
            _check("deployment:tritonfleet_usd_per_hour:gpu_share", '{deployment="resnet", namespace="triton"}', price * 3 / 4),
            _check('namespace_pod_model:tritonfleet_usd_per_hour:compute_share{model="resnet"}',
                   '{model="resnet", namespace="triton", node="node-a", pod="resnet-1", pool="l40s"}', price / 2 * 3 / 4),
            # bert: price / 8 an hour over 600 inferences a minute -> $ per 1M inferences
            _check('model:tritonfleet_usd_per_1m_inferences:ratio{model="bert"}', '{model="bert"}',
                   price / 8 / (10 * 3600) * 1e6),
            _check("team:tritonfleet_usd_per_hour:gpu_share", '{cost_center="ml-dev", team="ml-platform"}', price),
            # the parts add up to the node's cost within 1 %
            {"expr": f"abs({parts} - 1) < bool 0.01", "eval_time": "10m", "exp_samples": [{"labels": "{}", "value": 1}]},
        ],
    }
    path = tmp_path / "test.yaml"
    path.write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [test]}))
    result = run(tool("promtool"), "test", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
