"""Dashboards: unique uids, one datasource, units that match each metric family, every query accepted by Prometheus'
parser (promtool), and every recorded series a panel reads actually recorded by our rules."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.builders import common, dashboard, prometheus, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models import common as c
from grafana_foundation_sdk.models.dashboard import Dashboard, Threshold, ThresholdsMode

from tests.conftest import STACKS, engine_config, one_line
from tests.monitoring_support import run, series, tool, write_rules
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.conventions import GRAFANA_DATASOURCE_UID
from tritonfleet.monitoring import autoscaling, rules
from tritonfleet.monitoring.dashboards import dashboard_configmap, dashboard_queries, dashboards, llm_dashboard

# Grafana's value for the variables and the rate interval when a query is checked outside Grafana.
GRAFANA_SUBSTITUTIONS = {"$__rate_interval": "5m", "$namespace": ".*", "$model": ".*", "$pool": ".*", "$deployment": ".*"}

# Metric family (a name fragment) -> the one Grafana unit its panels must use.
UNITS = {
    "nv_gpu_utilization": "percentunit",  # Triton: 0-1
    "DCGM_FI_DEV_GPU_UTIL": "percent",  # DCGM: 0-100
    "tritonfleet_gpu_util:avg_percent": "percent",
    "DCGM_FI_DEV_FB_USED": "mbytes",  # MiB
    "nv_gpu_memory_used_bytes": "bytes",
    "memory_used:ratio": "percentunit",
    "DCGM_FI_DEV_POWER_USAGE": "watt",
    "_seconds:": "s",
    "_summary_us": "s",  # divided by 1e6 in the query
    "first_response_histogram_ms": "s",  # divided by 1000 in the query
    "usd_per": "currencyUSD",
    "failure:ratio": "percentunit",
    "nv_inference_request_success": "reqps",
    "nv_inference_request_failure": "reqps",
    "tritonfleet_replicas_": "short",
    "_replicas{": "short",  # kube-state-metrics' HPA replica counts
    "capacity_headroom": "percentunit",
    "tritonfleet_inferences_per_second": "ops",
}


def config_of(stack: str):
    return load_stack_config(engine_config(stack), stack)


def _all(stack: str = "prod") -> dict[str, dict[str, Any]]:
    return dashboards(config_of(stack))


def _walk(node: Any, key: str) -> list[Any]:
    if isinstance(node, dict):
        return ([node[key]] if key in node else []) + [v for child in node.values() for v in _walk(child, key)]
    if isinstance(node, list):
        return [v for child in node for v in _walk(child, key)]
    return []


def _substituted(expr: str) -> str:
    for variable, value in GRAFANA_SUBSTITUTIONS.items():
        expr = expr.replace(variable, value)
    assert "$" not in expr.replace("$1", ""), f"unknown Grafana variable in {expr}"
    return expr


def test_uids_and_panel_ids_are_unique():
    boards = _all()
    uids = [b["uid"] for b in boards.values()]
    assert len(uids) == len(set(uids))
    for board in boards.values():
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids))
        assert len({p["title"] for p in board["panels"]}) == len(ids)


def test_one_datasource_uid_everywhere():
    for board in _all().values():
        uids = {d["uid"] for d in _walk(board, "datasource")}
        assert uids == {GRAFANA_DATASOURCE_UID}
        for panel in board["panels"]:
            if panel["type"] != "text":
                assert panel["datasource"]["uid"] == GRAFANA_DATASOURCE_UID
                assert all(t["datasource"]["uid"] == GRAFANA_DATASOURCE_UID for t in panel["targets"])


def test_units_match_each_metric_family():
    checked = 0
    for board in _all().values():
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                for fragment, unit in UNITS.items():
                    if fragment in target["expr"]:
                        assert panel["fieldConfig"]["defaults"]["unit"] == unit, (panel["title"], fragment)
                        checked += 1
    assert checked >= 15


@pytest.mark.parametrize("stack", STACKS)
def test_every_panel_query_is_accepted_by_prometheus(stack, tmp_path):
    """promtool parses each query (variables replaced as Grafana does) as the expression of a recording rule."""
    promtool = tool("promtool")
    queries = [expr for board in dashboards(config_of(stack)).values() for _, expr in dashboard_queries(board)]
    variables = [v["query"]["query"] for board in dashboards(config_of(stack)).values() for v in board["templating"]["list"]]
    assert all(re.fullmatch(r"label_values\((.+, )?\w+\)", _substituted(v)) for v in variables)
    selectors = [re.fullmatch(r"label_values\((.+), \w+\)", _substituted(v)).group(1) for v in variables]
    checks = [{"record": f"check:query_{i}:value", "expr": _substituted(e)} for i, e in enumerate(queries + selectors)]
    path = write_rules([{"name": "dashboard-queries", "rules": checks}], tmp_path)
    result = run(promtool, "check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_recorded_series_read_by_panels_exist():
    config = config_of("prod")
    recorded = {r["record"] for g in rules.rule_groups(config) for r in g["rules"] if "record" in r}
    used = set()
    for board in dashboards(config).values():
        for _, expr in dashboard_queries(board):
            used |= {name for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*:[A-Za-z0-9_:]+", expr)}
        used |= {name for v in board["templating"]["list"] for name in re.findall(r"[A-Za-z_]+:[A-Za-z0-9_:]+", v["query"]["query"])}
    assert used, "the dashboards read recorded series"
    assert used <= recorded, sorted(used - recorded)


def test_cost_dashboard_lists_prices_and_budget_thresholds():
    config = config_of("gcp-prod")
    cost = dashboards(config)["cost"]
    text = next(p for p in cost["panels"] if p["type"] == "text")["options"]["content"]
    for unknown in rules.unknown_prices(config):
        pool, option = unknown.split("/")
        assert re.search(rf"\| {re.escape(pool)} \| {re.escape(option)} \| [^|]+ \| \*\*unknown\*\*", text)
    stat = next(p for p in cost["panels"] if p["title"].startswith("Monthly run rate"))
    steps = [s["value"] for s in stat["fieldConfig"]["defaults"]["thresholds"]["steps"]]
    assert steps == [None, round(config.budget.monthly_usd * config.budget.warn_fraction, 2), config.budget.monthly_usd]


def test_configmaps_are_labelled_for_grafanas_sidecar():
    for key, board in _all().items():
        manifest = dashboard_configmap(key, board, "monitoring")
        assert manifest["metadata"]["labels"] == {"grafana_dashboard": "1"}
        [(filename, text)] = manifest["data"].items()
        assert filename.endswith(".json") and json.loads(text) == board


def test_dashboards_are_what_grafanas_sdk_encodes():
    """A panel written out with grafana-foundation-sdk's builders, encoded by its encoder, is the dashboard's panel; the
    SDK reads every dashboard back into its typed model with the same uid, panels and variables."""
    source = c.DataSourceRef(type_val="prometheus", uid=GRAFANA_DATASOURCE_UID)
    query = 'pool:tritonfleet_gpu_util:avg_percent{pool=~"$pool"}'
    panel = (
        timeseries.Panel()
        .id(1)
        .title("GPU utilisation by pool (DCGM)")
        .description(_panel(_all()["gpu"], "GPU utilisation by pool")["description"])
        .span(12)
        .height(8)
        .datasource(source)
        .unit("percent")
        .thresholds(dashboard.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps([Threshold(None, "green")]))
        .legend(common.VizLegendOptions().display_mode(c.LegendDisplayMode.TABLE).show_legend(True))
        .tooltip(common.VizTooltipOptions().mode(c.TooltipDisplayMode.SINGLE).sort(c.SortOrder.NONE))
        .with_target(prometheus.Dataquery().expr(query).legend_format("{{pool}}").range().datasource(source).ref_id("A"))
    )
    assert _all()["gpu"]["panels"][0] == json.loads(json.dumps(panel.build(), cls=JSONEncoder))

    register_default_plugins()
    for board in _all().values():
        model = Dashboard.from_json(board)
        assert (model.uid, model.title, model.editable) == (board["uid"], board["title"], False)
        assert [p.title for p in model.panels] == [p["title"] for p in board["panels"]]
        assert [v.name for v in model.templating.list_val] == [v["name"] for v in board["templating"]["list"]]


def test_no_llm_dashboard_without_an_llm_deployment():
    assert "llm" not in dashboards(config_of("dev")) and "llm" in _all("prod")
    with pytest.raises(ValueError) as error:
        llm_dashboard(config_of("dev"))
    assert one_line(str(error.value)) == "stack 'dev' has no LLM deployment (llm: set on a deployment): no LLM dashboard"


def _panel(board: dict[str, Any], title_start: str) -> dict[str, Any]:
    return next(p for p in board["panels"] if p["title"].startswith(title_start))


def test_triton_dashboard_shows_the_hpas_own_signal():
    """The panels read the autoscaling rules by their names (the same constants the alerts use), beside the HPA's own
    desired and maximum replicas from kube-state-metrics."""
    triton = _all()["triton"]
    replicas = [t["expr"] for t in _panel(triton, "Replicas wanted by load")["targets"]]
    assert [e.split("{")[0] for e in replicas] == [
        autoscaling.WANTED,
        autoscaling.RUNNING,
        "kube_horizontalpodautoscaler_status_desired_replicas",
        "kube_horizontalpodautoscaler_spec_max_replicas",
    ]
    assert [t["expr"].split("{")[0] for t in _panel(triton, "Capacity headroom")["targets"]] == [autoscaling.HEADROOM]
    assert [t["expr"].split("{")[0] for t in _panel(triton, "Inferences/s by deployment")["targets"]] == [autoscaling.SERVED]
    variable = next(v for v in triton["templating"]["list"] if v["name"] == "deployment")
    assert variable["query"]["query"].startswith(f"label_values({autoscaling.RUNNING}")
    assert "allValue" not in variable, "All must mean the autoscaled deployments, not every HPA in the namespace"


# The dev stack's resnet (2000 inferences/s per replica × 0.8, 1..2 replicas) at 4000 inferences/s on 2 replicas.
LOADED = [
    series("nv_inference_count", {"namespace": "triton", "pod": "triton-resnet-5d9c7b-x2x9k", "model": "resnet"}, "0+240000x40"),
    series("kube_deployment_status_replicas_available", {"namespace": "triton", "deployment": "triton-resnet"}, "2x40"),
    series(
        "kube_horizontalpodautoscaler_status_desired_replicas",
        {"namespace": "triton", "horizontalpodautoscaler": "triton-resnet"},
        "2x40",
    ),
    series(
        "kube_horizontalpodautoscaler_spec_max_replicas",
        {"namespace": "triton", "horizontalpodautoscaler": "triton-resnet"},
        "2x40",
    ),
    # Another workload's HPA: "All" deployments must not show it.
    series(
        "kube_horizontalpodautoscaler_status_desired_replicas", {"namespace": "apps", "horizontalpodautoscaler": "web"}, "2x40"
    ),
    series("kube_horizontalpodautoscaler_spec_max_replicas", {"namespace": "apps", "horizontalpodautoscaler": "web"}, "2x40"),
]
# Grafana's "All" for a variable without allValue: its values joined into a regex.
ALL_DEPLOYMENTS = "(triton-resnet)"
EXPECTED = {  # panel title start -> the value of each of its queries for that deployment
    "Replicas wanted by load": [3, 2, 2, 2],
    "Capacity headroom": [0],
    "Inferences/s by deployment": [4000],
}


def test_autoscaling_panels_evaluate_per_deployment(tmp_path):
    """promtool evaluates each autoscaling panel's query (variables as Grafana's "All") over the shipped rules: one series
    per deployment, carrying the label its legend names, with the value the HPA sees."""
    promtool = tool("promtool")
    config = config_of("dev")
    write_rules(rules.rule_groups(config), tmp_path)
    triton = dashboards(config)["triton"]
    tests = []
    for title, values in EXPECTED.items():
        targets = _panel(triton, title)["targets"]
        assert len(targets) == len(values), title
        for target, value in zip(targets, values, strict=True):
            label = re.search(r"{{(\w+)}}", target["legendFormat"]).group(1)
            query = _substituted(target["expr"].replace("$deployment", ALL_DEPLOYMENTS))
            expr = f"count by ({label}) (abs({query} - {value}) < 1e-6)"
            tests.append(
                {"expr": expr, "eval_time": "20m", "exp_samples": [{"labels": f'{{{label}="triton-resnet"}}', "value": 1}]}
            )
    test = {"interval": "1m", "input_series": LOADED, "promql_expr_test": tests}
    (tmp_path / "test.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [test]}, sort_keys=False)
    )
    result = run(promtool, "test", "rules", str(tmp_path / "test.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
