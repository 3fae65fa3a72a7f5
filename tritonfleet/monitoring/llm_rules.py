"""Token-level signals of LLM deployments, from what each deployment's layout exports through Triton's metrics port
(tritonfleet/core/llm_exports.py, the one table with its sources), as recording rules and alerts (docs/monitoring.md
"LLM deployments"). A record whose families the layout does not export is not rendered, nor is its alert.

vLLM backend: vllm:time_to_first_token_seconds and vllm:time_per_output_token_seconds (histograms),
vllm:generation_tokens_total; no KV-cache or waiting gauge (those come only with the open vllm_backend#92).
TensorRT-LLM, engine layout: nv_trt_llm_request_metrics{request_type="waiting"},
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used"|"max"}, nv_llm_output_token_len (histogram).
TensorRT-LLM, LLM API layout: no family of its own. Both TensorRT-LLM layouts' time to first token is Triton's own
first-response histogram of the decoupled model, nv_inference_first_response_histogram_ms (the chart turns on
histogram_latencies).
"""

from __future__ import annotations

from typing import Any

from tritonfleet.core.config import StackConfig, TritonDeployment
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.conventions import triton_release_name
from tritonfleet.core.llm_exports import serving_layout

WINDOW = "5m"
KV_CACHE_FULL_RATIO = 0.95  # KV-cache blocks in use: above this, new sequences wait or running ones are preempted
KV_CACHE_FULL_FOR = "15m"
WAITING_FOR = "10m"  # requests waiting for a sequence slot this long: the replicas are too few
TTFT_HIGH_FOR = "10m"

TTFT = "namespace_model:tritonfleet_llm_time_to_first_token_seconds:p95"
INTER_TOKEN = "namespace_model:tritonfleet_llm_inter_token_seconds:p95"
OUTPUT_TOKENS = f"namespace_model:tritonfleet_llm_output_tokens:rate{WINDOW}"
KV_CACHE = "namespace_pod_model:tritonfleet_llm_kv_cache_usage:ratio"
WAITING = "namespace_pod_model:tritonfleet_llm_requests_waiting:sum"


def _pods(d: TritonDeployment) -> str:
    """The deployment's pods: its namespace, and pod names of its release (the chart names the Deployment so)."""
    return f'namespace="{d.namespace}", pod=~"{triton_release_name(d.name)}-.+"'


def _p95(bucket: str, pods: str, scale: str = "") -> str:
    return f"histogram_quantile(0.95, sum by (namespace, model, le) (rate({bucket}{{{pods}}}[{WINDOW}]))){scale}"


def _deployment_rules(d: TritonDeployment) -> list[dict[str, Any]]:
    assert d.llm is not None
    pods, labels = _pods(d), {"deployment": d.name}
    layout = serving_layout(d.llm)
    if layout == "vllm":
        sources = {
            TTFT: _p95("vllm:time_to_first_token_seconds_bucket", pods),
            INTER_TOKEN: _p95("vllm:time_per_output_token_seconds_bucket", pods),
            OUTPUT_TOKENS: f"sum by (namespace, model) (rate(vllm:generation_tokens_total{{{pods}}}[{WINDOW}]))",
        }
    else:
        sources = {TTFT: _p95("nv_inference_first_response_histogram_ms_bucket", pods, " / 1000")}
    if layout == "engine":
        blocks = "nv_trt_llm_kv_cache_block_metrics"
        sources |= {
            OUTPUT_TOKENS: f"sum by (namespace, model) (rate(nv_llm_output_token_len_sum{{{pods}}}[{WINDOW}]))",
            KV_CACHE: f'max by (namespace, pod, model) ({blocks}{{{pods}, kv_cache_block_type="used"}})'
            f' / (max by (namespace, pod, model) ({blocks}{{{pods}, kv_cache_block_type="max"}}) > 0)',
            WAITING: f'sum by (namespace, pod, model) (nv_trt_llm_request_metrics{{{pods}, request_type="waiting"}})',
        }
    return [{"record": name, "expr": expr, "labels": dict(labels)} for name, expr in sources.items()]


def records_of(d: TritonDeployment) -> list[str]:
    """The LLM records a deployment gets: those its layout exports the families of."""
    return [rule["record"] for rule in _deployment_rules(d)]


def llm_deployments(config: StackConfig) -> list[TritonDeployment]:
    return [d for d in config.triton_deployments if d.llm is not None]


def llm_rules(config: StackConfig) -> list[dict[str, Any]]:
    """Recording rules per LLM deployment (labelled with its name), then the alerts."""
    rules = [rule for d in llm_deployments(config) for rule in _deployment_rules(d)]
    return rules + llm_alerts(config)


def _alert(name: str, expr: str, duration: str, labels: dict[str, str], summary: str, description: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": duration,
        "labels": {"severity": "warning", **labels},
        "annotations": {"summary": summary, "description": description},
    }


def llm_alerts(config: StackConfig) -> list[dict[str, Any]]:
    alerts = []
    for d in llm_deployments(config):
        assert d.llm is not None
        target = latency_ms(d.llm.ttft_target) / 1000
        selector = f'{{deployment="{d.name}"}}'
        candidates = [
            _alert(
                "LlmTimeToFirstTokenHigh",
                f"{TTFT}{selector} > {target:g}",
                TTFT_HIGH_FOR,
                {"deployment": d.name},
                "LLM time to first token is above its target",
                "p95 time to first token of model {{ $labels.model }} in {{ $labels.namespace }} is {{ $value | "
                f"humanizeDuration }}}}, above the deployment's ttftTarget {d.llm.ttft_target}: prompts wait for "
                "prefill; add replicas, or shorten maxContext.",
            ),
            _alert(
                "LlmKvCacheSaturated",
                f"{KV_CACHE}{selector} > {KV_CACHE_FULL_RATIO:g}",
                KV_CACHE_FULL_FOR,
                {"deployment": d.name},
                "LLM KV cache is full",
                "{{ $value | humanizePercentage }} of the KV cache of model {{ $labels.model }} on {{ $labels.namespace "
                "}}/{{ $labels.pod }} is in use: new sequences wait and running ones may be preempted; add replicas "
                "or lower maxSequences.",
            ),
            _alert(
                "LlmRequestsWaiting",
                f"{WAITING}{selector} >= 1",
                WAITING_FOR,
                {"deployment": d.name},
                "LLM requests are waiting for a slot",
                "{{ $value }} requests for model {{ $labels.model }} on {{ $labels.namespace }}/{{ $labels.pod }} "
                f"have waited for a sequence slot for {WAITING_FOR}: the replicas are too few for the load.",
            ),
        ]
        # each alert reads one record: only those the deployment's layout gets
        alerts += [a for a in candidates if a["expr"].split("{", 1)[0] in records_of(d)]
    return alerts
