"""Grafana dashboards (Triton, GPU, cost) generated as JSON from Python; never edit the JSON by hand.

A dashboard is a list of `Panel`s laid out two per row. Every panel and query names the one Prometheus datasource that
kube-prometheus-stack provisions (uid `prometheus`). Units follow the metric family: `nv_gpu_utilization` is 0-1
(`percentunit`), DCGM utilisation 0-100 (`percent`), DCGM framebuffer MiB (`mbytes`, Grafana's MiB), Triton durations
are recorded in seconds (`s`). A small builder beats a dashboard library here: four dashboards of plain time series.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import GRAFANA_DASHBOARD_LABEL, GRAFANA_DATASOURCE_UID, HOURS_PER_MONTH
from tritonfleet.monitoring import autoscaling as a
from tritonfleet.monitoring import llm_rules as llm
from tritonfleet.monitoring import rules as r
from tritonfleet.monitoring.llm_rules import llm_deployments

DATASOURCE = {"type": "prometheus", "uid": GRAFANA_DATASOURCE_UID}
SCHEMA_VERSION = 39
TAGS = ["tritonfleet"]
W = r.RATE_WINDOW


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True)
class Panel:
    title: str
    unit: str
    queries: tuple[Query, ...] = ()
    description: str = ""
    kind: str = "timeseries"  # timeseries, stat or text
    text: str = ""  # markdown, for text panels
    thresholds: tuple[tuple[str, float | None], ...] = (("green", None),)
    options: dict[str, Any] = field(default_factory=dict)


def _variable(name: str, label: str, query: str, all_value: str | None = ".*") -> dict[str, Any]:
    """A multi-value query variable; `all_value` None makes "All" the variable's own values (Grafana joins them into a
    regex), so a panel filtering another metric on it stays within those values."""
    variable = {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": f"{name}-values"},
        "definition": query,
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
    }
    if all_value is not None:
        variable["allValue"] = all_value
    return variable


def _panel_json(panel_id: int, panel: Panel) -> dict[str, Any]:
    width, height = 12, 8
    grid = {"x": ((panel_id - 1) % 2) * width, "y": ((panel_id - 1) // 2) * height, "w": width, "h": height}
    out: dict[str, Any] = {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "gridPos": grid,
        "description": panel.description,
    }
    if panel.kind == "text":
        out["options"] = {"mode": "markdown", "content": panel.text}
        return out
    steps = [{"color": color, "value": value} for color, value in panel.thresholds]
    out["datasource"] = DATASOURCE
    out["fieldConfig"] = {"defaults": {"unit": panel.unit, "thresholds": {"mode": "absolute", "steps": steps}}, "overrides": []}
    out["options"] = panel.options or (
        {"legend": {"displayMode": "table", "placement": "bottom"}} if panel.kind == "timeseries" else {}
    )
    out["targets"] = [
        {"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": q.expr, "legendFormat": q.legend, "range": True}
        for i, q in enumerate(panel.queries)
    ]
    return out


def dashboard(uid: str, title: str, description: str, panels: list[Panel], variables: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": TAGS,
        "editable": False,
        "schemaVersion": SCHEMA_VERSION,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "timezone": "browser",
        "templating": {"list": variables},
        "panels": [_panel_json(i, p) for i, p in enumerate(panels, 1)],
    }


def _autoscaling_panels() -> list[Panel]:
    """The HPA's own signal per deployment, from the autoscaling recording rules (deployments with a stated capacity)."""
    sel = 'namespace=~"$namespace", deployment=~"$deployment"'
    # The HPA carries its Deployment's name (both are the Helm release's fullname).
    hpa = 'namespace=~"$namespace", horizontalpodautoscaler=~"$deployment"'
    return [
        Panel(
            "Replicas wanted by load vs running vs HPA, by deployment",
            "short",
            (
                Query(f"{a.WANTED}{{{sel}}}", "{{deployment}} wanted by load"),
                Query(f"{a.RUNNING}{{{sel}}}", "{{deployment}} running"),
                Query(
                    f"kube_horizontalpodautoscaler_status_desired_replicas{{{hpa}}}", "{{horizontalpodautoscaler}} HPA desired"
                ),
                Query(f"kube_horizontalpodautoscaler_spec_max_replicas{{{hpa}}}", "{{horizontalpodautoscaler}} maxReplicas"),
            ),
            "Wanted: offered inferences/s ÷ (capacity per replica × targetUtilization), before min/max, the HPA's own "
            "signal. HPA desired below wanted: capped by maxReplicas or still scaling; running below desired: pods "
            f"pending (no GPU node yet). Alert TritonLoadAboveMaxReplicas fires when wanted > maxReplicas for "
            f"{a.AT_MAXIMUM_FOR}. Deployments scaled on the queue-time guard alone have no wanted series.",
        ),
        Panel(
            "Capacity headroom by deployment",
            "percentunit",
            (Query(f"{a.HEADROOM}{{{sel}}}", "{{deployment}}"),),
            "1 − served inferences/s ÷ (running replicas × capacity per replica). Alert TritonCapacityHeadroomLow fires "
            f"below {a.HEADROOM_LOW:.0%} for {a.HEADROOM_LOW_FOR}.",
            thresholds=(("red", None), ("green", a.HEADROOM_LOW)),
        ),
        Panel(
            "Inferences/s by deployment (the HPA's signal)",
            "ops",
            (Query(f"{a.SERVED}{{{sel}}}", "{{deployment}}"),),
            f"rate({a.SIGNAL_COUNTER}[{a.SIGNAL_WINDOW}]) over the deployment's pods, the rate prometheus-adapter serves "
            "to the HPA (canary and other releases excluded).",
        ),
    ]


def triton_dashboard() -> dict[str, Any]:
    sel = 'namespace=~"$namespace", model=~"$model"'
    pod = f"namespace_pod_model:{{metric}}:rate{W}"
    per_model = f"namespace_model:tritonfleet_triton_{{what}}:avg{W}"
    panels = [
        Panel(
            "Successful requests/s by model",
            "reqps",
            (Query(f"sum by (model) ({pod.format(metric='nv_inference_request_success')}{{{sel}}})", "{{model}}"),),
        ),
        Panel(
            "Failed requests/s by model and reason",
            "reqps",
            (
                Query(
                    f"sum by (model, reason) (rate(nv_inference_request_failure{{{sel}}}[$__rate_interval]))",
                    "{{model}} {{reason}}",
                ),
            ),
        ),
        Panel(
            "Failure ratio by model",
            "percentunit",
            (Query(f"namespace_model:tritonfleet_triton_failure:ratio{W}{{{sel}}}", "{{namespace}}/{{model}}"),),
            f"Failed / all requests. Alert TritonFailureRatioHigh fires above {r.FAILURE_RATIO_HIGH:.0%} for 10 minutes.",
        ),
        Panel(
            "Inferences/s by pod",
            "ops",
            (Query(f"sum by (pod) ({pod.format(metric='nv_inference_count')}{{{sel}}})", "{{pod}}"),),
            "A batch of n counts n.",
        ),
        Panel(
            "Average request latency by model",
            "s",
            (Query(f"{per_model.format(what='request_seconds')}{{{sel}}}", "{{namespace}}/{{model}}"),),
            "End-to-end time per successful request, from Triton's cumulative duration counters.",
        ),
        Panel(
            "Queue vs compute time per request by model",
            "s",
            (
                Query(f"{per_model.format(what='queue_seconds')}{{{sel}}}", "queue {{model}}"),
                Query(f"{per_model.format(what='compute_seconds')}{{{sel}}}", "compute {{model}}"),
            ),
            "Queue time growing while compute time stays flat means too few replicas; "
            f"alert TritonQueueTimeHigh fires above {r.QUEUE_SECONDS_HIGH * 1000:.0f} ms.",
        ),
        Panel(
            "Request latency percentiles by pod",
            "s",
            (
                Query(
                    f'max by (pod, model, quantile) (nv_inference_request_summary_us{{{sel}, quantile=~"0.5|0.99"}}) / 1e6',
                    "{{pod}} {{model}} p{{quantile}}",
                ),
            ),
            "From Triton's latency summaries (Triton flag --metrics-config summary_latencies=true). Quantiles of "
            "different pods cannot be combined, so they are shown per pod.",
        ),
        Panel(
            "Time to first response p95 by model (decoupled models)",
            "s",
            (
                Query(
                    "histogram_quantile(0.95, sum by (le, model) "
                    f"(rate(nv_inference_first_response_histogram_ms_bucket{{{sel}}}[$__rate_interval]))) / 1000",
                    "{{model}}",
                ),
            ),
            "Triton's only latency histogram (flag --metrics-config histogram_latencies=true); it is exported for "
            "decoupled (streaming) models, so this panel is empty for the others.",
        ),
        Panel(
            "Average batch size by model",
            "none",
            (Query(f"{per_model.format(what='batch_size')}{{{sel}}}", "{{namespace}}/{{model}}"),),
            "Inferences / executions (nv_inference_count / nv_inference_exec_count).",
        ),
        Panel(
            "Pending requests by pod and model",
            "short",
            (Query(f"sum by (pod, model) (nv_inference_pending_request_count{{{sel}}})", "{{pod}} {{model}}"),),
        ),
        Panel(
            "GPU utilisation reported by Triton, by pod",
            "percentunit",
            (Query('avg by (pod) (nv_gpu_utilization{namespace=~"$namespace"})', "{{pod}}"),),
            "nv_gpu_utilization is a 0-1 ratio (DCGM's utilisation on the GPU dashboard is 0-100).",
        ),
        Panel(
            "GPU memory used by Triton, by pod",
            "bytes",
            (Query('sum by (pod) (nv_gpu_memory_used_bytes{namespace=~"$namespace"})', "{{pod}}"),),
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
        Panel(
            "GPU utilisation by pool (DCGM)",
            "percent",
            (Query(f"pool:tritonfleet_gpu_util:avg_percent{{{sel}}}", "{{pool}}"),),
            f"DCGM_FI_DEV_GPU_UTIL (0-100) averaged over the pool. Alert GpuUtilizationLow fires below {r.GPU_UTIL_LOW_PERCENT}% "
            f"for {r.GPU_UTIL_LOW_FOR}.",
        ),
        Panel(
            "GPU utilisation by node and GPU (DCGM)",
            "percent",
            (Query(f"{r.gpu_series('DCGM_FI_DEV_GPU_UTIL')}{{{sel}}}", per_gpu),),
        ),
        Panel(
            "GPU memory used by node and GPU",
            "mbytes",
            (Query(f"{r.gpu_series('DCGM_FI_DEV_FB_USED')}{{{sel}}}", per_gpu),),
            "DCGM_FI_DEV_FB_USED is in MiB.",
        ),
        Panel(
            "GPU memory used, share of the GPU's memory",
            "percentunit",
            (Query(f"node_gpu_pool:tritonfleet_gpu_memory_used:ratio{{{sel}}}", per_gpu),),
            f"Used / (used + free). Alert GpuMemoryNearFull fires above {r.GPU_MEMORY_FULL_RATIO:.0%}.",
        ),
        Panel(
            "Power draw by node and GPU",
            "watt",
            (Query(f"{r.gpu_series('DCGM_FI_DEV_POWER_USAGE')}{{{sel}}}", per_gpu),),
        ),
        Panel(
            "XID errors by node and GPU (last 10 min)",
            "none",
            (
                Query(
                    f"max by (node, pool, gpu) (max_over_time(DCGM_FI_DEV_XID_ERRORS[10m]) "
                    f"* on (namespace, pod) group_left (node, pool) {r.POD_POOL_INFO}{{{sel}}})",
                    per_gpu,
                ),
            ),
            "The last XID code a GPU reported (0: none). Alert GpuXidErrors fires on any.",
        ),
        Panel(
            "GPUs by pool",
            "short",
            (
                Query(f"pool:tritonfleet_gpus:count{{{sel}}}", "{{pool}} GPUs"),
                Query(f"pool:tritonfleet_idle_gpus:count{{{sel}}}", "{{pool}} idle"),
            ),
            f"Idle: DCGM utilisation below {r.GPU_IDLE_PERCENT}%.",
        ),
        Panel(
            "Nodes by pool and purchase option",
            "short",
            (Query(f"pool_capacity:tritonfleet_nodes:count{{{sel}}}", "{{pool}} {{capacity}}"),),
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
        Panel(
            "Running cost by pool",
            "currencyUSD",
            (Query(f"pool:tritonfleet_usd_per_hour:sum{{{sel}}}", "{{pool}} $/hour"),),
            "GPU nodes counted from kube-state-metrics (node labels tritonfleet.io/pool and tritonfleet.io/capacity) "
            "times the catalog price the plan uses. A pool with a node of unknown price shows no figure.",
        ),
        Panel(
            "Monthly run rate (GPU pools)",
            "currencyUSD",
            (Query("stack:tritonfleet_usd_per_month:run_rate", "USD/month"),),
            f"$/hour now x {HOURS_PER_MONTH}. Budget {budget.monthly_usd} USD; warning at {budget.warn_fraction:.0%}.",
            kind="stat",
            thresholds=budget_steps,
        ),
        Panel(
            "Cost per 1M inferences by pool",
            "currencyUSD",
            (Query(f"pool:tritonfleet_usd_per_1m_inferences:ratio{{{sel}}}", "{{pool}}"),),
            "$/hour / (inferences per second x 3600) x 1e6, over the last 5 minutes; includes idle capacity.",
        ),
        Panel(
            "Cost per 1M inferences, whole stack",
            "currencyUSD",
            (Query("stack:tritonfleet_usd_per_1m_inferences:ratio", "USD per 1M"),),
            kind="stat",
        ),
        Panel(
            "Inferences/s by pool",
            "ops",
            (Query(f"pool:tritonfleet_inferences_per_second:rate{W}{{{sel}}}", "{{pool}}"),),
        ),
        Panel(
            "Idle GPU-hours by pool, last 24 h",
            "short",
            (Query(f"avg_over_time(pool:tritonfleet_idle_gpus:count{{{sel}}}[24h]) * 24", "{{pool}}"),),
            f"GPU-hours spent below {r.GPU_IDLE_PERCENT}% DCGM utilisation.",
            kind="stat",
        ),
        Panel(
            "Estimated cost of idle GPUs",
            "currencyUSD",
            (Query(f"pool:tritonfleet_idle_usd_per_hour:estimate{{{sel}}}", "{{pool}} $/hour idle"),),
            "The pool's $/hour times its share of idle GPUs.",
        ),
        Panel(
            "Nodes without a catalog price",
            "short",
            (Query("pool_capacity:tritonfleet_nodes_without_price:count", "{{pool}} {{capacity}}"),),
            "Nodes whose price is unknown; their pools and the stack total show no cost rather than a wrong one.",
            kind="stat",
            thresholds=(("green", None), ("orange", 1)),
        ),
        Panel(
            "Showback: $/hour by Triton deployment",
            "currencyUSD",
            (Query("deployment:tritonfleet_usd_per_hour:gpu_share", "{{namespace}}/{{deployment}}"),),
            "Each pod pays its node's $/hour times the GPUs it requests over the node's allocatable GPUs, summed per "
            "release; what no pod requests is idle (next panels).",
        ),
        Panel(
            "Showback: $/hour by model",
            "currencyUSD",
            (Query(f"sum by (model) ({r.MODEL_USD})", "{{model}}"),),
            "A replica's share split by each model's compute time on it.",
        ),
        Panel(
            "Cost per 1M inferences by model (production)",
            "currencyUSD",
            (Query("model:tritonfleet_usd_per_1m_inferences:ratio", "{{model}}"),),
            "Compare with the plan's $/1M per deployment (tritonfleet plan, Sizing).",
        ),
        Panel(
            "Unrequested GPUs by node ($/hour idle)",
            "currencyUSD",
            (Query(f"node:tritonfleet_idle_usd_per_hour:unrequested{{{sel}}}", "{{node}} ({{pool}})"),),
        ),
        Panel(
            "Showback by team and cost center",
            "currencyUSD",
            (Query("team:tritonfleet_usd_per_hour:gpu_share", "{{team}} {{cost_center}}"),),
            "The stack's GPU nodes under its team and cost-center tags.",
            kind="stat",
        ),
        Panel("Catalog prices used", "", kind="text", text=_price_table(config)),
    ]
    variables = [_variable("pool", "Pool", f"label_values({r.POOL_INFO}, pool)")]
    return dashboard("tritonfleet-cost", "GPU cost", "Running cost, cost per 1M inferences and idle GPUs.", panels, variables)


def llm_dashboard(config: StackConfig) -> dict[str, Any]:
    """Token-level view of the LLM deployments, from the tritonfleet-llm recording rules (monitoring/llm_rules.py): a
    panel for each record some deployment's layout gets (every layout gets the time to first token)."""
    sel = 'deployment=~"$deployment", model=~"$model"'
    per_model = "{{deployment}} {{model}}"
    per_pod = "{{deployment}} {{pod}} {{model}}"
    targets = ", ".join(f"{d.name} {d.llm.ttft_target}" for d in llm_deployments(config) if d.llm is not None)
    panels = [
        Panel(
            "Time to first token, p95",
            "s",
            (Query(f"{llm.TTFT}{{{sel}}}", per_model),),
            f"Alert LlmTimeToFirstTokenHigh fires above each deployment's ttftTarget ({targets}) for {llm.TTFT_HIGH_FOR}. "
            "vLLM: vllm:time_to_first_token_seconds; TensorRT-LLM: Triton's first-response histogram.",
        ),
        Panel(
            "Time between output tokens, p95",
            "s",
            (Query(f"{llm.INTER_TOKEN}{{{sel}}}", per_model),),
            "vLLM's vllm:time_per_output_token_seconds (TensorRT-LLM's layouts do not export it).",
        ),
        Panel(
            "Output tokens per second",
            "short",
            (Query(f"{llm.OUTPUT_TOKENS}{{{sel}}}", per_model),),
            "vLLM: vllm:generation_tokens_total; TensorRT-LLM's engine layout: nv_llm_output_token_len (its LLM API "
            "layout exports none).",
        ),
        Panel(
            "KV cache in use",
            "percentunit",
            (Query(f"{llm.KV_CACHE}{{{sel}}}", per_pod),),
            f"Alert LlmKvCacheSaturated fires above {llm.KV_CACHE_FULL_RATIO:.0%} for {llm.KV_CACHE_FULL_FOR}. "
            "TensorRT-LLM's engine layout only (vLLM's backend and the LLM API layout export no KV-cache use).",
            thresholds=(("green", None), ("red", llm.KV_CACHE_FULL_RATIO)),
        ),
        Panel(
            "Requests waiting for a sequence slot",
            "short",
            (Query(f"{llm.WAITING}{{{sel}}}", per_pod),),
            f"Alert LlmRequestsWaiting fires when requests wait for {llm.WAITING_FOR}. TensorRT-LLM's engine layout only.",
        ),
    ]
    recorded = {record for d in llm_deployments(config) for record in llm.records_of(d)}
    panels = [p for p in panels if p.queries[0].expr.split("{", 1)[0] in recorded]
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
