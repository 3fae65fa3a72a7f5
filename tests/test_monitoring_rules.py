"""The generated Prometheus rules, checked by the real promtool: syntax for every stack, and unit tests with synthetic
series proving that the recording rules compute the plan's numbers and that every alert fires on the bad series and
stays silent on the good one. The PrometheusRule manifest is validated against the Prometheus Operator CRD schema."""

from __future__ import annotations

import math
from typing import Any

import jsonschema
import pytest
import yaml

from tests.conftest import STACKS, engine_config
from tests.monitoring_support import (
    KPS_CHART,
    absent,
    close_to,
    firing,
    gpu_node,
    matchers,
    pod_on,
    run,
    series,
    silent,
    tool,
    upstream_chart,
    value_is,
    write_rules,
)
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.conventions import HOURS_PER_MONTH
from tritonfleet.core.cost import cost_per_million
from tritonfleet.monitoring import rules
from tritonfleet.plan.document import cost_section


def config_of(stack: str):
    return load_stack_config(engine_config(stack), stack)


@pytest.mark.parametrize("stack", STACKS)
def test_promtool_checks_every_generated_rule_file(stack, tmp_path):
    promtool = tool("promtool")
    path = write_rules(rules.rule_groups(config_of(stack)), tmp_path)
    result = run(promtool, "check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("stack", STACKS)
def test_rule_prices_are_the_plans_prices(stack):
    config = config_of(stack)
    plan_prices = {
        (pool["pool"], option): (price["usdPerHour"] if isinstance(price, dict) else None)
        for pool in cost_section(config)["pools"]
        for option, price in pool["prices"].items()
    }
    rule_prices = {(p.pool, p.capacity): p.usd_per_hour for p in rules.node_prices(config)}
    assert rule_prices == plan_prices
    constants = {
        (r["labels"]["pool"], r["labels"]["capacity"]): float(r["expr"].removeprefix("vector(").removesuffix(")"))
        for r in rules.cost_rules(config)
        if r.get("record") == rules.PRICE
    }
    # Unknown prices are left out, never written as 0.
    assert constants == {k: v for k, v in plan_prices.items() if v is not None}
    assert all(v > 0 for v in constants.values())


def test_unknown_prices_are_named_and_omitted():
    from tests.gcp_helpers import decoded, encoded

    data = decoded("gcp-prod")
    b200 = next(p for p in data["gpuPools"] if p["name"] == "b200")
    b200.update(enabled=True, capacity="mixed", spotShare=1)  # a4-highgpu-8g has no known price
    data["gpuLimit"] = 48
    config = load_stack_config(encoded(data), "gcp-prod")
    unknown = rules.unknown_prices(config)
    assert unknown == ["b200/spot"], "a pool whose machine type the catalog has no price for"
    manifest = rules.prometheus_rule(config, "monitoring")
    assert manifest["metadata"]["annotations"]["tritonfleet.io/unknown-prices"] == ", ".join(unknown)
    priced = {(r["labels"]["pool"], r["labels"]["capacity"]) for r in rules.cost_rules(config) if r.get("record") == rules.PRICE}
    assert not priced & {tuple(u.split("/")) for u in unknown}


def test_prometheus_rule_matches_the_crd_schema():
    crd = yaml.safe_load((upstream_chart(KPS_CHART) / "crds" / "crd-prometheusrules.yaml").read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = version["schema"]["openAPIV3Schema"]
    for stack in STACKS:
        manifest = rules.prometheus_rule(config_of(stack), "monitoring")
        errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(manifest)]
        assert errors == [], stack


def test_record_and_alert_names_are_unique_and_well_formed():
    for stack in STACKS:
        groups = rules.rule_groups(config_of(stack))
        # A name may be recorded once per deployment, told apart by its `deployment` label.
        records = [
            (r["record"], tuple(sorted(r.get("labels", {}).items())))
            for g in groups
            for r in g["rules"]
            if "record" in r and r["record"] not in (rules.PRICE, rules.PRICE_UNKNOWN)
        ]
        alerts = [(r["alert"], tuple(sorted(r["labels"].items()))) for g in groups for r in g["rules"] if "alert" in r]
        assert len(records) == len(set(records))
        assert len(alerts) == len(set(alerts))
        assert all(name.count(":") == 2 for name, _ in records), "level:metric:operations"
        assert all(r["labels"]["severity"] in ("critical", "warning", "info") for g in groups for r in g["rules"] if "alert" in r)


# ---------------------------------------------------------------- promtool unit tests with synthetic series

DCGM_POD = {"namespace": "gpu-operator", "pod": "dcgm-exporter-a"}
GPU = {**DCGM_POD, "gpu": "0", "UUID": "GPU-0001", "Hostname": "node-a"}


def _firing(alertname: str, labels: dict[str, str], severity: str, at: str) -> dict[str, Any]:
    return firing(alertname, {**labels, "severity": severity}, at)


def _close(metric: str, labels: dict[str, str], value: float, at: str) -> dict[str, Any]:
    return close_to(metric, f"{{{matchers(labels)}}}", value, at)


def _triton(metric: str, per_minute: float, minutes: int = 40, **labels: str) -> dict[str, str]:
    return series(
        metric,
        {"namespace": "triton", "pod": "resnet-0", "model": "resnet", "version": "1", **labels},
        f"0+{per_minute:g}x{minutes}",
    )


def _cases(config) -> dict[str, dict[str, Any]]:
    """name -> one promtool test (input series and expectations). Numbers come from the stack config and the catalog."""
    spot = next(p for p in rules.node_prices(config) if p.pool == "l40s" and p.capacity == "spot")
    price = spot.usd_per_hour
    per_second = 100.0
    budget = config.budget
    monthly_per_node = price * HOURS_PER_MONTH
    over_budget_nodes = math.floor(budget.monthly_usd / monthly_per_node) + 1
    under_warning_nodes = math.floor(budget.monthly_usd * budget.warn_fraction / monthly_per_node)
    not_ready_for = rules._not_ready_for(config)
    long_after = f"{int(not_ready_for.removesuffix('m')) + 10}m"

    def nodes(count: int, capacity: str = "spot", prefix: str = "node", minutes: int = 90):
        return [gpu_node(f"{prefix}-{i}", "l40s", capacity, f"1x{minutes}") for i in range(count)]

    def gpu(util: float, used: float | str = 1000, free: float | str = 40000, minutes: int = 300, xid: str | None = None):
        """One GPU on node-a; `used`/`free` are a constant (MiB) or promtool series notation."""
        out = [
            gpu_node("node-a", "l40s", "spot", f"1x{minutes}"),
            pod_on(DCGM_POD["namespace"], DCGM_POD["pod"], "node-a", f"1x{minutes}"),
            series("DCGM_FI_DEV_GPU_UTIL", GPU, f"{util:g}x{minutes}"),
            series("DCGM_FI_DEV_FB_USED", GPU, used if isinstance(used, str) else f"{used:g}x{minutes}"),
            series("DCGM_FI_DEV_FB_FREE", GPU, free if isinstance(free, str) else f"{free:g}x{minutes}"),
        ]
        if xid is not None:
            out.append(series("DCGM_FI_DEV_XID_ERRORS", GPU, xid))
        return out

    pod_model = {"namespace": "triton", "pod": "resnet-0", "version": "1"}
    traffic = [
        gpu_node("node-a", "l40s", "spot", "1x40"),
        pod_on("triton", "resnet-0", "node-a", "1x40"),
        _triton("nv_inference_count", per_second * 60),
    ]
    return {
        "cost per 1M inferences is the plan's formula": {
            "input_series": traffic,
            "promql_expr_test": [
                value_is("pool:tritonfleet_usd_per_hour:sum", {"pool": "l40s"}, price, "20m"),
                value_is("stack:tritonfleet_usd_per_month:run_rate", {}, price * HOURS_PER_MONTH, "20m"),
                value_is("pool:tritonfleet_inferences_per_second:rate5m", {"pool": "l40s"}, per_second, "20m"),
                value_is(
                    "pool:tritonfleet_usd_per_1m_inferences:ratio", {"pool": "l40s"}, cost_per_million(price, per_second), "20m"
                ),
                value_is("stack:tritonfleet_usd_per_1m_inferences:ratio", {}, cost_per_million(price, per_second), "20m"),
            ],
            "alert_rule_test": [silent("NodesWithoutPrice", "35m")],
        },
        "an unpriced node removes the pool's and the stack's cost instead of understating it": {
            "input_series": [*traffic, gpu_node("node-b", "l40s", "on-demand", "1x40")],
            "promql_expr_test": [
                absent("pool:tritonfleet_usd_per_hour:sum", "20m"),
                absent("stack:tritonfleet_usd_per_hour:sum", "20m"),
                absent("pool:tritonfleet_usd_per_1m_inferences:ratio", "20m"),
                value_is(
                    "pool_capacity:tritonfleet_nodes_without_price:count", {"pool": "l40s", "capacity": "on-demand"}, 1, "20m"
                ),
                _firing("NodesWithoutPrice", {"pool": "l40s", "capacity": "on-demand"}, "info", "35m"),
            ],
        },
        "no GPU nodes cost nothing; no kube-state-metrics gives no figure": {
            "input_series": [series("kube_node_labels", {"node": "system-0"}, "1x20")],
            "promql_expr_test": [value_is("stack:tritonfleet_usd_per_hour:sum", {}, 0, "10m")],
        },
        "batch size, latency, queue and compute per request": {
            "input_series": [
                _triton("nv_inference_request_success", 3000),
                _triton("nv_inference_count", 12000),
                _triton("nv_inference_exec_count", 1500),
                _triton("nv_inference_request_duration_us", 3000 * 30_000),
                _triton("nv_inference_queue_duration_us", 3000 * 10_000),
                _triton("nv_inference_compute_input_duration_us", 3000 * 1_000),
                _triton("nv_inference_compute_infer_duration_us", 3000 * 18_000),
                _triton("nv_inference_compute_output_duration_us", 3000 * 1_000),
            ],
            "promql_expr_test": [
                _close(
                    "namespace_model:tritonfleet_triton_batch_size:avg5m", {"namespace": "triton", "model": "resnet"}, 8, "20m"
                ),
                _close(
                    "namespace_model:tritonfleet_triton_request_seconds:avg5m",
                    {"namespace": "triton", "model": "resnet"},
                    0.03,
                    "20m",
                ),
                _close(
                    "namespace_model:tritonfleet_triton_queue_seconds:avg5m",
                    {"namespace": "triton", "model": "resnet"},
                    0.01,
                    "20m",
                ),
                _close(
                    "namespace_model:tritonfleet_triton_compute_seconds:avg5m",
                    {"namespace": "triton", "model": "resnet"},
                    0.02,
                    "20m",
                ),
            ],
        },
        "TritonQueueTimeHigh fires": {
            "input_series": [
                _triton("nv_inference_request_success", 6000),
                _triton("nv_inference_queue_duration_us", 6000 * 200_000),
            ],
            "promql_expr_test": [_firing("TritonQueueTimeHigh", {"namespace": "triton", "model": "resnet"}, "warning", "25m")],
        },
        "TritonQueueTimeHigh stays silent": {
            "input_series": [
                _triton("nv_inference_request_success", 6000),
                _triton("nv_inference_queue_duration_us", 6000 * 20_000),
            ],
            "alert_rule_test": [silent("TritonQueueTimeHigh", "25m")],
        },
        "TritonFailureRatioHigh fires": {
            "input_series": [
                _triton("nv_inference_request_success", 6000),
                _triton("nv_inference_request_failure", 600, reason="BACKEND"),
            ],
            "promql_expr_test": [
                _firing("TritonFailureRatioHigh", {"namespace": "triton", "model": "resnet"}, "critical", "25m")
            ],
        },
        "TritonFailureRatioHigh stays silent": {
            "input_series": [
                _triton("nv_inference_request_success", 6000),
                _triton("nv_inference_request_failure", 60, reason="BACKEND"),
            ],
            "alert_rule_test": [silent("TritonFailureRatioHigh", "25m")],
        },
        "TritonModelNotReady fires for a model that failed to load": {
            "input_series": [
                series("tritonfleet_triton_model_ready", {**pod_model, "model": "resnet", "state": "READY"}, "1x30"),
                series("tritonfleet_triton_model_ready", {**pod_model, "model": "broken", "state": "UNAVAILABLE"}, "0x30"),
            ],
            "promql_expr_test": [
                _firing(
                    "TritonModelNotReady",
                    {"model": "broken", "namespace": "triton", "pod": "resnet-0", "state": "UNAVAILABLE"},
                    "warning",
                    "15m",
                )
            ],
        },
        "TritonModelNotReady stays silent while every model is ready": {
            "input_series": [series("tritonfleet_triton_model_ready", {**pod_model, "model": "resnet", "state": "READY"}, "1x30")],
            "alert_rule_test": [silent("TritonModelNotReady", "15m")],
        },
        "TritonReplicasNotReady fires": {
            "input_series": [
                series("kube_deployment_spec_replicas", {"namespace": "triton", "deployment": "resnet"}, "2x60"),
                series("kube_deployment_status_replicas_available", {"namespace": "triton", "deployment": "resnet"}, "1x60"),
            ],
            "promql_expr_test": [
                _firing("TritonReplicasNotReady", {"namespace": "triton", "deployment": "resnet"}, "warning", long_after)
            ],
        },
        "TritonReplicasNotReady stays silent": {
            "input_series": [
                series("kube_deployment_spec_replicas", {"namespace": "triton", "deployment": "resnet"}, "2x60"),
                series("kube_deployment_status_replicas_available", {"namespace": "triton", "deployment": "resnet"}, "2x60"),
                # other namespaces are not Triton's business
                series("kube_deployment_spec_replicas", {"namespace": "other", "deployment": "web"}, "2x60"),
                series("kube_deployment_status_replicas_available", {"namespace": "other", "deployment": "web"}, "0x60"),
            ],
            "alert_rule_test": [silent("TritonReplicasNotReady", long_after)],
        },
        "GpuUtilizationLow fires": {
            "input_series": gpu(util=3),
            "promql_expr_test": [
                value_is(
                    "node_gpu_pool:DCGM_FI_DEV_GPU_UTIL:max",
                    {"node": "node-a", "pool": "l40s", "gpu": "0", "UUID": "GPU-0001"},
                    3,
                    "10m",
                ),
                _firing("GpuUtilizationLow", {"pool": "l40s"}, "warning", "4h"),
                value_is("pool:tritonfleet_idle_gpus:count", {"pool": "l40s"}, 1, "4h"),
            ],
        },
        "GpuUtilizationLow stays silent": {
            "input_series": gpu(util=60),
            "promql_expr_test": [value_is("pool:tritonfleet_idle_gpus:count", {"pool": "l40s"}, 0, "4h")],
            "alert_rule_test": [silent("GpuUtilizationLow", "4h")],
        },
        "GpuMemoryNearFull fires when nearly full memory keeps growing (a leak)": {
            "input_series": gpu(util=60, used="44700+1x240", free="2300-1x240", minutes=240),
            "promql_expr_test": [_firing("GpuMemoryNearFull", GPU, "warning", "200m")],
            "alert_rule_test": [silent("GpuMemoryNearFull", "150m")],  # growing, but not yet for the whole 2h
        },
        "GpuMemoryNearFull stays silent on memory pre-allocated at load (a KV cache)": {
            "input_series": gpu(util=60, used="1000x10 46000x230", free="46000x10 1000x230", minutes=240),
            "alert_rule_test": [silent("GpuMemoryNearFull", "70m"), silent("GpuMemoryNearFull", "200m")],
        },
        "GpuMemoryNearFull stays silent on half-used memory": {
            "input_series": gpu(util=60, used=20_000, free=27_000, minutes=240),
            "alert_rule_test": [silent("GpuMemoryNearFull", "200m")],
        },
        "GpuXidErrors fires on a new XID, then resolves although the gauge sticks": {
            "input_series": gpu(util=60, minutes=60, xid="0x5 79x55"),
            "promql_expr_test": [_firing("GpuXidErrors", GPU, "critical", "10m")],
            "alert_rule_test": [silent("GpuXidErrors", "40m")],
        },
        "GpuXidErrors stays silent": {
            "input_series": gpu(util=60, minutes=10, xid="0x10"),
            "alert_rule_test": [silent("GpuXidErrors", "5m")],
        },
        "SpotNodeChurn fires": {
            "input_series": [
                *nodes(3, minutes=130),
                *(series("kube_node_created", {"node": f"node-{i}"}, f"{7000 - 100 * i}x130") for i in range(3)),
            ],
            "promql_expr_test": [_firing("SpotNodeChurn", {"pool": "l40s"}, "warning", "2h")],
        },
        "SpotNodeChurn stays silent": {
            "input_series": [
                *nodes(3, minutes=130),
                series("kube_node_created", {"node": "node-0"}, "7000x130"),
                series("kube_node_created", {"node": "node-1"}, "6900x130"),
                series("kube_node_created", {"node": "node-2"}, "100x130"),  # started long ago
            ],
            "alert_rule_test": [silent("SpotNodeChurn", "2h")],
        },
        "Budget alerts fire above the budget": {
            "input_series": nodes(over_budget_nodes),
            "promql_expr_test": [
                _close("stack:tritonfleet_usd_per_month:run_rate", {}, monthly_per_node * over_budget_nodes, "70m"),
                _firing("BudgetRunRateHigh", {}, "warning", "70m"),
                _firing("BudgetRunRateExceeded", {}, "critical", "70m"),
            ],
        },
        "Budget alerts stay silent below the warning": {
            "input_series": nodes(under_warning_nodes),
            "alert_rule_test": [silent("BudgetRunRateHigh", "70m"), silent("BudgetRunRateExceeded", "70m")],
        },
    }


def test_every_alert_has_a_firing_and_a_silent_case(stack_config):
    config = stack_config("dev")
    cases = _cases(config)
    alerts = {r["alert"] for r in rules.alert_rules(config)}
    fired = {
        t["expr"].split('"')[1] for c in cases.values() for t in c.get("promql_expr_test", []) if t["expr"].startswith("ALERTS")
    }
    silenced = {t["alertname"] for c in cases.values() for t in c.get("alert_rule_test", [])}
    assert alerts <= silenced, "every alert needs a case where it stays silent"
    assert alerts <= fired, "every alert needs a case where it fires"


def _minutes(duration: str) -> int:
    return int(duration[:-1]) * {"m": 1, "h": 60}[duration[-1]]


def _evaluation_interval(test: dict[str, Any]) -> str:
    """Every minute; every 5 minutes for a case that looks two hours or more ahead (the alerts held for 2-3 hours):
    promtool evaluates every rule at each step, so those cases cost seconds each at 1m. Each `for`, window and
    eval_time in them is a multiple of 5 minutes, so the coarser steps reach the same verdicts."""
    checks = [*test.get("promql_expr_test", []), *test.get("alert_rule_test", [])]
    return "5m" if max(_minutes(check["eval_time"]) for check in checks) >= 120 else "1m"


def _unit_test_file(folder, name: str, test: dict[str, Any]):
    path = folder / f"{name}.yaml"
    document = {"rule_files": ["rules.yaml"], "evaluation_interval": _evaluation_interval(test), "tests": [test]}
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def dev_unit_results(tmp_path_factory):
    """case -> (passed, promtool's output): every case of _cases in one promtool run (one file each, beside the dev
    stack's rules), which says per file whether it passed; a failing file is run again on its own for its message
    (promtool prints failures to stderr without naming the file)."""
    promtool = tool("promtool")
    folder = tmp_path_factory.mktemp("promtool-unit")
    config = config_of("dev")
    write_rules(rules.rule_groups(config), folder)
    files = {case: _unit_test_file(folder, f"case-{i}", {"interval": "1m", **test}) for i, (case, test) in enumerate(_cases(config).items())}
    result = run(promtool, "test", "rules", *(str(path) for path in files.values()))
    passed = {section.split()[0] for section in result.stdout.split("Unit Testing:")[1:] if "SUCCESS" in section}
    answers = {}
    for case, path in files.items():
        if str(path) in passed:
            answers[case] = (True, "")
        else:
            alone = run(promtool, "test", "rules", str(path))
            answers[case] = (alone.returncode == 0, alone.stdout + alone.stderr)
    return answers


@pytest.mark.parametrize("case", list(_cases(config_of("dev"))))
def test_promtool_unit(case, dev_unit_results):
    """One promtool test per case, against the dev stack's rules (L40S spot nodes, budget from its config)."""
    passed, output = dev_unit_results[case]
    assert passed, output


def test_a_burst_node_that_fell_back_to_on_demand_is_priced_on_demand(tmp_path):
    """On EKS a burst NodePool allows spot and on-demand and its nodes carry tritonfleet.io/capacity=spot (what it
    prefers); Karpenter's karpenter.sh/capacity-type says what each node is. The topology rule takes Karpenter's word,
    so the cost series price a fallen-back node on-demand; GKE nodes (no such label) keep ours."""
    promtool = tool("promtool")
    config = config_of("prod")
    groups = rules.rule_groups(config)
    write_rules(groups, tmp_path)
    labels = {"label_tritonfleet_io_pool": "h200", "label_tritonfleet_io_gpu": "H200", "label_tritonfleet_io_capacity": "spot"}
    test = {
        "interval": "1m",
        "input_series": [
            series("kube_node_labels", {"node": "fell-back", **labels, "label_karpenter_sh_capacity_type": "on-demand"}, "1x10"),
            series("kube_node_labels", {"node": "spot", **labels, "label_karpenter_sh_capacity_type": "spot"}, "1x10"),
            series("kube_node_labels", {"node": "not-karpenter", **labels}, "1x10"),
        ],
        "promql_expr_test": [
            {
                "expr": "count by (node, capacity) (node:tritonfleet_pool:info)",
                "eval_time": "5m",
                "exp_samples": [
                    {"labels": '{node="fell-back", capacity="on-demand"}', "value": 1},
                    {"labels": '{node="spot", capacity="spot"}', "value": 1},
                    {"labels": '{node="not-karpenter", capacity="spot"}', "value": 1},
                ],
            }
        ],
    }
    result = run(promtool, "test", "rules", str(_unit_test_file(tmp_path, "test", test)))
    assert result.returncode == 0, result.stdout + result.stderr
    gcp_topology = next(g for g in rules.rule_groups(config_of("gcp-prod")) if g["name"] == "tritonfleet-topology")
    assert "karpenter" not in yaml.safe_dump(gcp_topology)
