"""Grafana dashboards (Triton, GPU, cost, LLM) built with Grafana's own typed builders (grafana-foundation-sdk) and
serialized by its encoder; never edit the JSON by hand.

A dashboard is a list of panels (time series, stat or text) laid out two per row by the SDK's dashboard builder. Every
panel and query names the one Prometheus datasource that kube-prometheus-stack provisions (uid `prometheus`). Units follow
the metric family: `nv_gpu_utilization` is 0-1 (`percentunit`), DCGM utilisation 0-100 (`percent`), DCGM framebuffer
MiB (`mbytes`, Grafana's MiB), Triton durations are recorded in seconds (`s`).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from grafana_foundation_sdk.builders import dashboard as gd
from grafana_foundation_sdk.builders import prometheus, stat, text, timeseries
from grafana_foundation_sdk.builders.common import VizLegendOptions, VizTooltipOptions
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import (
    DataSourceRef,
    LegendDisplayMode,
    LegendPlacement,
    SortOrder,
    TooltipDisplayMode,
)
from grafana_foundation_sdk.models.dashboard import (
    Panel,
    Threshold,
    ThresholdsMode,
    VariableOption,
    VariableRefresh,
    VariableSort,
)
from grafana_foundation_sdk.models.text import TextMode

from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import GRAFANA_DASHBOARD_LABEL, GRAFANA_DATASOURCE_UID, HOURS_PER_MONTH
from tritonfleet.monitoring import autoscaling as a
from tritonfleet.monitoring import llm_rules as llm
from tritonfleet.monitoring import rules as r
from tritonfleet.monitoring.llm_rules import llm_deployments

DATASOURCE = DataSourceRef(type_val="prometheus", uid=GRAFANA_DATASOURCE_UID)
TAGS = ["tritonfleet"]
W = r.RATE_WINDOW
PANEL_WIDTH, PANEL_HEIGHT = 12, 8  # two panels a row on Grafana's 24-column grid
Steps = tuple[tuple[str, float | None], ...]
DataPanel = TypeVar("DataPanel", timeseries.Panel, stat.Panel)


def _query(expr: str, legend: str) -> prometheus.Dataquery:
    """A range query on the stack's Prometheus; refIds are given in panel order (A, B, ...) by `_with_queries`."""
    return prometheus.Dataquery().expr(expr).legend_format(legend).range().datasource(DATASOURCE)


def _with_queries(
    panel: DataPanel, title: str, unit: str, queries: tuple[prometheus.Dataquery, ...], description: str, steps: Steps
) -> DataPanel:
    """A panel of Prometheus queries, in the unit given, with absolute thresholds ((color, from value) steps)."""
    thresholds = gd.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps([Threshold(value=v, color=c) for c, v in steps])
    panel = panel.title(title).description(description).span(PANEL_WIDTH).height(PANEL_HEIGHT).datasource(DATASOURCE)
    panel = panel.unit(unit).thresholds(thresholds)
    for i, query in enumerate(queries):
        panel = panel.with_target(query.ref_id(chr(ord("A") + i)))
    return panel


def _timeseries(
    title: str, unit: str, queries: tuple[prometheus.Dataquery, ...], description: str = "", steps: Steps = (("green", None),)
) -> timeseries.Panel:
    legend = VizLegendOptions().display_mode(LegendDisplayMode.TABLE).placement(LegendPlacement.BOTTOM).show_legend(True)
    # Grafana's own tooltip default (the SDK's model defaults to sorting series ascending).
    tooltip = VizTooltipOptions().mode(TooltipDisplayMode.SINGLE).sort(SortOrder.NONE)
    return _with_queries(timeseries.Panel().legend(legend).tooltip(tooltip), title, unit, queries, description, steps)


def _stat(
    title: str, unit: str, queries: tuple[prometheus.Dataquery, ...], description: str = "", steps: Steps = (("green", None),)
) -> stat.Panel:
    return _with_queries(stat.Panel(), title, unit, queries, description, steps)


def _text(title: str, markdown: str) -> text.Panel:
    return text.Panel().title(title).span(PANEL_WIDTH).height(PANEL_HEIGHT).mode(TextMode.MARKDOWN).content(markdown)


def _variable(name: str, label: str, query: str, all_value: str | None = ".*") -> gd.QueryVariable:
    """A multi-value query variable; `all_value` None makes "All" the variable's own values (Grafana joins them into a
    regex), so a panel filtering another metric on it stays within those values."""
    variable = (
        gd.QueryVariable(name)
        .label(label)
        .datasource(DATASOURCE)
        .query({"query": query, "refId": f"{name}-values"})
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .include_all(True)
        .multi(True)
        .current(VariableOption(selected=True, text=["All"], value=["$__all"]))
        .sort(VariableSort.ALPHABETICAL_ASC)
    )
    return variable.all_value(all_value) if all_value is not None else variable


def encoded(model: Any) -> Any:
    """A built SDK object as plain JSON data, through the SDK's own encoder."""
    return json.loads(json.dumps(model, cls=JSONEncoder))


def dashboard(
    uid: str, title: str, description: str, panels: list[Builder[Panel]], variables: list[gd.QueryVariable]
) -> dict[str, Any]:
    board = (
        gd.Dashboard(title)
        .uid(uid)
        .description(description)
        .tags(TAGS)
        .readonly()
        .time("now-6h", "now")
        .refresh("1m")
        .timezone("browser")
        .variables(variables)
    )
    for panel_id, panel in enumerate(panels, 1):
        board = board.with_panel(panel.id(panel_id))
    return encoded(board.build())


def _autoscaling_panels() -> list[Builder[Panel]]:
    """The HPA's own signal per deployment, from the autoscaling recording rules (deployments with a stated capacity)."""
    sel = 'namespace=~"$namespace", deployment=~"$deployment"'
    # The HPA carries its Deployment's name (both are the Helm release's fullname).
    hpa = 'namespace=~"$namespace", horizontalpodautoscaler=~"$deployment"'
    return [
        _timeseries(
            "Replicas wanted by load vs running vs HPA, by deployment",
            "short",
            (
                _query(f"{a.WANTED}{{{sel}}}", "{{deployment}} wanted by load"),
                _query(f"{a.RUNNING}{{{sel}}}", "{{deployment}} running"),
                _query(
                    f"kube_horizontalpodautoscaler_status_desired_replicas{{{hpa}}}", "{{horizontalpodautoscaler}} HPA desired"
                ),
                _query(f"kube_horizontalpodautoscaler_spec_max_replicas{{{hpa}}}", "{{horizontalpodautoscaler}} maxReplicas"),
            ),
            "Wanted: offered inferences/s ÷ (capacity per replica × targetUtilization), before min/max, the HPA's own "
            "signal. HPA desired below wanted: capped by maxReplicas or still scaling; running below desired: pods "
            f"pending (no GPU node yet). Alert TritonLoadAboveMaxReplicas fires when wanted > maxReplicas for "
            f"{a.AT_MAXIMUM_FOR}. Deployments scaled on the queue-time guard alone have no wanted series.",
        ),
        _timeseries(
            "Capacity headroom by deployment",
            "percentunit",
            (_query(f"{a.HEADROOM}{{{sel}}}", "{{deployment}}"),),
            "1 − served inferences/s ÷ (running replicas × capacity per replica). Alert TritonCapacityHeadroomLow fires "
            f"below {a.HEADROOM_LOW:.0%} for {a.HEADROOM_LOW_FOR}.",
            steps=(("red", None), ("green", a.HEADROOM_LOW)),
        ),
        _timeseries(
            "Inferences/s by deployment (the HPA's signal)",
            "ops",
            (_query(f"{a.SERVED}{{{sel}}}", "{{deployment}}"),),
            f"rate({a.SIGNAL_COUNTER}[{a.SIGNAL_WINDOW}]) over the deployment's pods, the rate prometheus-adapter serves "
            "to the HPA (canary and other releases excluded).",
        ),
    ]


def triton_dashboard() -> dict[str, Any]:
    sel = 'namespace=~"$namespace", model=~"$model"'
    pod = f"namespace_pod_model:{{metric}}:rate{W}"
    per_model = f"namespace_model:tritonfleet_triton_{{what}}:avg{W}"
    panels = [
        _timeseries(
            "Successful requests/s by model",
            "reqps",
            (_query(f"sum by (model) ({pod.format(metric='nv_inference_request_success')}{{{sel}}})", "{{model}}"),),
        ),
        _timeseries(
            "Failed requests/s by model and reason",
            "reqps",
            (
                _query(
                    f"sum by (model, reason) (rate(nv_inference_request_failure{{{sel}}}[$__rate_interval]))",
                    "{{model}} {{reason}}",
                ),
            ),
        ),
        _timeseries(
            "Failure ratio by model",
            "percentunit",
            (_query(f"namespace_model:tritonfleet_triton_failure:ratio{W}{{{sel}}}", "{{namespace}}/{{model}}"),),
            f"Failed / all requests. Alert TritonFailureRatioHigh fires above {r.FAILURE_RATIO_HIGH:.0%} for 10 minutes.",
        ),
        _timeseries(
            "Inferences/s by pod",
            "ops",
            (_query(f"sum by (pod) ({pod.format(metric='nv_inference_count')}{{{sel}}})", "{{pod}}"),),
            "A batch of n counts n.",
        ),
        _timeseries(
            "Average request latency by model",
            "s",
            (_query(f"{per_model.format(what='request_seconds')}{{{sel}}}", "{{namespace}}/{{model}}"),),
            "End-to-end time per successful request, from Triton's cumulative duration counters.",
        ),
        _timeseries(
            "Queue vs compute time per request by model",
            "s",
            (
                _query(f"{per_model.format(what='queue_seconds')}{{{sel}}}", "queue {{model}}"),
                _query(f"{per_model.format(what='compute_seconds')}{{{sel}}}", "compute {{model}}"),
            ),
            "Queue time growing while compute time stays flat means too few replicas; "
            f"alert TritonQueueTimeHigh fires above {r.QUEUE_SECONDS_HIGH * 1000:.0f} ms.",
        ),
        _timeseries(
            "Request latency percentiles by pod",
            "s",
            (
                _query(
                    f'max by (pod, model, quantile) (nv_inference_request_summary_us{{{sel}, quantile=~"0.5|0.99"}}) / 1e6',
                    "{{pod}} {{model}} p{{quantile}}",
                ),
            ),
            "From Triton's latency summaries (Triton flag --metrics-config summary_latencies=true). Quantiles of "
            "different pods cannot be combined, so they are shown per pod.",
        ),
        _timeseries(
            "Time to first response p95 by model (decoupled models)",
            "s",
            (
                _query(
                    "histogram_quantile(0.95, sum by (le, model) "
                    f"(rate(nv_inference_first_response_histogram_ms_bucket{{{sel}}}[$__rate_interval]))) / 1000",
                    "{{model}}",
                ),
            ),
            "Triton's only latency histogram (flag --metrics-config histogram_latencies=true); it is exported for "
            "decoupled (streaming) models, so this panel is empty for the others.",
        ),
        _timeseries(
            "Average batch size by model",
            "none",
            (_query(f"{per_model.format(what='batch_size')}{{{sel}}}", "{{namespace}}/{{model}}"),),
            "Inferences / executions (nv_inference_count / nv_inference_exec_count).",
        ),
        _timeseries(
            "Pending requests by pod and model",
            "short",
            (_query(f"sum by (pod, model) (nv_inference_pending_request_count{{{sel}}})", "{{pod}} {{model}}"),),
        ),
        _timeseries(
            "GPU utilisation reported by Triton, by pod",
            "percentunit",
            (_query('avg by (pod) (nv_gpu_utilization{namespace=~"$namespace"})', "{{pod}}"),),
            "nv_gpu_utilization is a 0-1 ratio (DCGM's utilisation on the GPU dashboard is 0-100).",
        ),
        _timeseries(
            "GPU memory used by Triton, by pod",
            "bytes",
            (_query('sum by (pod) (nv_gpu_memory_used_bytes{namespace=~"$namespace"})', "{{pod}}"),),
            "nv_gpu_memory_used_bytes is in bytes (DCGM's framebuffer metrics are MiB).",
        ),
    ] + _autoscaling_panels()
    variables = [
        _variable("namespace", "Namespace", "label_values(nv_inference_count, namespace)"),
        _variable("model", "Model", 'label_values(nv_inference_count{namespace=~"$namespace"}, model)'),
        # "All" = the autoscaled deployments, so the HPA panels do not show other workloads' HPAs.
        _variable("deployment", "Deployment", f'label_values({a.RUNNING}{{namespace=~"$namespace"}}, deployment)', None),
    ]
    return dashboard(
        "tritonfleet-triton",
        "Triton Inference Server",
        "Requests, latency, queueing and batching per model and pod.",
        panels,
        variables,
    )


def gpu_dashboard() -> dict[str, Any]:
    sel = 'pool=~"$pool"'
    per_gpu = "{{pool}} {{node}} GPU {{gpu}}"
    panels = [
        _timeseries(
            "GPU utilisation by pool (DCGM)",
            "percent",
            (_query(f"pool:tritonfleet_gpu_util:avg_percent{{{sel}}}", "{{pool}}"),),
            f"DCGM_FI_DEV_GPU_UTIL (0-100) averaged over the pool. Alert GpuUtilizationLow fires below {r.GPU_UTIL_LOW_PERCENT}% "
            f"for {r.GPU_UTIL_LOW_FOR}.",
        ),
        _timeseries(
            "GPU utilisation by node and GPU (DCGM)",
            "percent",
            (_query(f"{r.gpu_series('DCGM_FI_DEV_GPU_UTIL')}{{{sel}}}", per_gpu),),
        ),
        _timeseries(
            "GPU memory used by node and GPU",
            "mbytes",
            (_query(f"{r.gpu_series('DCGM_FI_DEV_FB_USED')}{{{sel}}}", per_gpu),),
            "DCGM_FI_DEV_FB_USED is in MiB.",
        ),
        _timeseries(
            "GPU memory used, share of the GPU's memory",
            "percentunit",
            (_query(f"node_gpu_pool:tritonfleet_gpu_memory_used:ratio{{{sel}}}", per_gpu),),
            f"Used / (used + free). Alert GpuMemoryNearFull fires above {r.GPU_MEMORY_FULL_RATIO:.0%}.",
        ),
        _timeseries(
            "Power draw by node and GPU",
            "watt",
            (_query(f"{r.gpu_series('DCGM_FI_DEV_POWER_USAGE')}{{{sel}}}", per_gpu),),
        ),
        _timeseries(
            "XID errors by node and GPU (last 10 min)",
            "none",
            (
                _query(
                    f"max by (node, pool, gpu) (max_over_time(DCGM_FI_DEV_XID_ERRORS[10m]) "
                    f"* on (namespace, pod) group_left (node, pool) {r.POD_POOL_INFO}{{{sel}}})",
                    per_gpu,
                ),
            ),
            "The last XID code a GPU reported (0: none). Alert GpuXidErrors fires on any.",
        ),
        _timeseries(
            "GPUs by pool",
            "short",
            (
                _query(f"pool:tritonfleet_gpus:count{{{sel}}}", "{{pool}} GPUs"),
                _query(f"pool:tritonfleet_idle_gpus:count{{{sel}}}", "{{pool}} idle"),
            ),
            f"Idle: DCGM utilisation below {r.GPU_IDLE_PERCENT}%.",
        ),
        _timeseries(
            "Nodes by pool and purchase option",
            "short",
            (_query(f"pool_capacity:tritonfleet_nodes:count{{{sel}}}", "{{pool}} {{capacity}}"),),
        ),
    ]
    variables = [_variable("pool", "Pool", f"label_values({r.POOL_INFO}, pool)")]
    return dashboard(
        "tritonfleet-gpu", "GPUs (DCGM)", "Utilisation, memory, power and XID errors per node and pool.", panels, variables
    )


def _price_table(config: StackConfig) -> str:
    lines = [
        "| Pool | Purchase option | Instance type | USD per node-hour | Source (as of) |",
        "|---|---|---|---|---|",
    ]
    for p in r.node_prices(config):
        price = f"{p.usd_per_hour}" if p.usd_per_hour is not None else "**unknown**: cost series for this pool are omitted"
        source = f"{p.source} ({p.as_of})" if p.source else "-"
        lines.append(f"| {p.pool} | {p.capacity} | {p.instance_type} | {price} | {source} |")
    return "\n".join(lines)


def cost_dashboard(config: StackConfig) -> dict[str, Any]:
    sel = 'pool=~"$pool"'
    budget = config.budget
    budget_steps = (("green", None), ("orange", round(budget.monthly_usd * budget.warn_fraction, 2)), ("red", budget.monthly_usd))
    panels = [
        _timeseries(
            "Running cost by pool",
            "currencyUSD",
            (_query(f"pool:tritonfleet_usd_per_hour:sum{{{sel}}}", "{{pool}} $/hour"),),
            "GPU nodes counted from kube-state-metrics (node labels tritonfleet.io/pool and tritonfleet.io/capacity) "
            "times the catalog price the plan uses. A pool with a node of unknown price shows no figure.",
        ),
        _stat(
            "Monthly run rate (GPU pools)",
            "currencyUSD",
            (_query("stack:tritonfleet_usd_per_month:run_rate", "USD/month"),),
            f"$/hour now x {HOURS_PER_MONTH}. Budget {budget.monthly_usd} USD; warning at {budget.warn_fraction:.0%}.",
            steps=budget_steps,
        ),
        _timeseries(
            "Cost per 1M inferences by pool",
            "currencyUSD",
            (_query(f"pool:tritonfleet_usd_per_1m_inferences:ratio{{{sel}}}", "{{pool}}"),),
            "$/hour / (inferences per second x 3600) x 1e6, over the last 5 minutes; includes idle capacity.",
        ),
        _stat(
            "Cost per 1M inferences, whole stack",
            "currencyUSD",
            (_query("stack:tritonfleet_usd_per_1m_inferences:ratio", "USD per 1M"),),
        ),
        _timeseries(
            "Inferences/s by pool",
            "ops",
            (_query(f"pool:tritonfleet_inferences_per_second:rate{W}{{{sel}}}", "{{pool}}"),),
        ),
        _stat(
            "Idle GPU-hours by pool, last 24 h",
            "short",
            (_query(f"avg_over_time(pool:tritonfleet_idle_gpus:count{{{sel}}}[24h]) * 24", "{{pool}}"),),
            f"GPU-hours spent below {r.GPU_IDLE_PERCENT}% DCGM utilisation.",
        ),
        _timeseries(
            "Estimated cost of idle GPUs",
            "currencyUSD",
            (_query(f"pool:tritonfleet_idle_usd_per_hour:estimate{{{sel}}}", "{{pool}} $/hour idle"),),
            "The pool's $/hour times its share of idle GPUs.",
        ),
        _stat(
            "Nodes without a catalog price",
            "short",
            (_query("pool_capacity:tritonfleet_nodes_without_price:count", "{{pool}} {{capacity}}"),),
            "Nodes whose price is unknown; their pools and the stack total show no cost rather than a wrong one.",
            steps=(("green", None), ("orange", 1)),
        ),
        _timeseries(
            "Showback: $/hour by Triton deployment",
            "currencyUSD",
            (_query("deployment:tritonfleet_usd_per_hour:gpu_share", "{{namespace}}/{{deployment}}"),),
            "Each pod pays its node's $/hour times the GPUs it requests over the node's allocatable GPUs, summed per "
            "release; what no pod requests is idle (next panels).",
        ),
        _timeseries(
            "Showback: $/hour by model",
            "currencyUSD",
            (_query(f"sum by (model) ({r.MODEL_USD})", "{{model}}"),),
            "A replica's share split by each model's compute time on it.",
        ),
        _timeseries(
            "Cost per 1M inferences by model (production)",
            "currencyUSD",
            (_query("model:tritonfleet_usd_per_1m_inferences:ratio", "{{model}}"),),
            "Compare with the plan's $/1M per deployment (tritonfleet plan, Sizing).",
        ),
        _timeseries(
            "Unrequested GPUs by node ($/hour idle)",
            "currencyUSD",
            (_query(f"node:tritonfleet_idle_usd_per_hour:unrequested{{{sel}}}", "{{node}} ({{pool}})"),),
        ),
        _stat(
            "Showback by team and cost center",
            "currencyUSD",
            (_query("team:tritonfleet_usd_per_hour:gpu_share", "{{team}} {{cost_center}}"),),
            "The stack's GPU nodes under its team and cost-center tags.",
        ),
        _text("Catalog prices used", _price_table(config)),
    ]
    variables = [_variable("pool", "Pool", f"label_values({r.POOL_INFO}, pool)")]
    return dashboard("tritonfleet-cost", "GPU cost", "Running cost, cost per 1M inferences and idle GPUs.", panels, variables)


def llm_dashboard(config: StackConfig) -> dict[str, Any]:
    """Token-level view of the LLM deployments, from the tritonfleet-llm recording rules (monitoring/llm_rules.py): a
    panel for each record some deployment's layout gets (every layout gets the time to first token)."""
    if not llm_deployments(config):
        raise ValueError(f"stack {config.stack!r} has no LLM deployment (llm: set on a deployment): no LLM dashboard")
    sel = 'deployment=~"$deployment", model=~"$model"'
    per_model = "{{deployment}} {{model}}"
    per_pod = "{{deployment}} {{pod}} {{model}}"
    targets = ", ".join(f"{d.name} {d.llm.ttft_target}" for d in llm_deployments(config) if d.llm is not None)
    panels = [
        _timeseries(
            "Time to first token, p95",
            "s",
            (_query(f"{llm.TTFT}{{{sel}}}", per_model),),
            f"Alert LlmTimeToFirstTokenHigh fires above each deployment's ttftTarget ({targets}) for {llm.TTFT_HIGH_FOR}. "
            "vLLM: vllm:time_to_first_token_seconds; TensorRT-LLM: Triton's first-response histogram.",
        ),
        _timeseries(
            "Time between output tokens, p95",
            "s",
            (_query(f"{llm.INTER_TOKEN}{{{sel}}}", per_model),),
            "vLLM's vllm:time_per_output_token_seconds (TensorRT-LLM's layouts do not export it).",
        ),
        _timeseries(
            "Output tokens per second",
            "short",
            (_query(f"{llm.OUTPUT_TOKENS}{{{sel}}}", per_model),),
            "vLLM: vllm:generation_tokens_total; TensorRT-LLM's engine layout: nv_llm_output_token_len (its LLM API "
            "layout exports none).",
        ),
        _timeseries(
            "KV cache in use",
            "percentunit",
            (_query(f"{llm.KV_CACHE}{{{sel}}}", per_pod),),
            f"Alert LlmKvCacheSaturated fires above {llm.KV_CACHE_FULL_RATIO:.0%} for {llm.KV_CACHE_FULL_FOR}. "
            "TensorRT-LLM's engine layout only (vLLM's backend and the LLM API layout export no KV-cache use).",
            steps=(("green", None), ("red", llm.KV_CACHE_FULL_RATIO)),
        ),
        _timeseries(
            "Requests waiting for a sequence slot",
            "short",
            (_query(f"{llm.WAITING}{{{sel}}}", per_pod),),
            f"Alert LlmRequestsWaiting fires when requests wait for {llm.WAITING_FOR}. TensorRT-LLM's engine layout only.",
        ),
    ]
    recorded = {record for d in llm_deployments(config) for record in llm.records_of(d)}
    panels = [p for p in panels if p.build().targets[0].expr.split("{", 1)[0] in recorded]
    variables = [
        _variable("deployment", "Deployment", f"label_values({llm.TTFT}, deployment)"),
        _variable("model", "Model", f'label_values({llm.TTFT}{{deployment=~"$deployment"}}, model)'),
    ]
    description = "Time to first token and between tokens, output tokens/s, KV-cache use and waiting requests."
    return dashboard("tritonfleet-llm", "LLM serving", description, panels, variables)


def dashboards(config: StackConfig) -> dict[str, dict[str, Any]]:
    """Short name -> dashboard JSON."""
    boards = {"triton": triton_dashboard(), "gpu": gpu_dashboard(), "cost": cost_dashboard(config)}
    return {**boards, "llm": llm_dashboard(config)} if llm_deployments(config) else boards


def dashboard_queries(board: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, PromQL) for every query of a dashboard."""
    return [(p["title"], t["expr"]) for p in board["panels"] for t in p.get("targets", [])]


def dashboard_configmap(key: str, board: dict[str, Any], namespace: str) -> dict[str, Any]:
    """A ConfigMap Grafana's sidecar loads (label grafana_dashboard: "1")."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"tritonfleet-dashboard-{key}", "namespace": namespace, "labels": dict(GRAFANA_DASHBOARD_LABEL)},
        "data": {f"tritonfleet-{key}.json": json.dumps(board, indent=1, sort_keys=True)},
    }
