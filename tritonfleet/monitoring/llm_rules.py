"""Token-level signals of LLM deployments, from what each backend exports through Triton's metrics port, as recording
rules and alerts (docs/monitoring.md "LLM deployments").

vLLM backend (triton-inference-server/vllm_backend src/utils/metrics.py, labels model and version):
vllm:time_to_first_token_seconds and vllm:time_per_output_token_seconds (histograms), vllm:generation_tokens_total;
vllm:num_requests_waiting and vllm:gpu_cache_usage_perc (0-1) only with vllm_backend#92 (open as of r26.01: README
VERIFY). TensorRT-LLM backend (its README, "Triton Metrics"):
nv_trt_llm_request_metrics{request_type="waiting"}, nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used"|"max"},
nv_llm_output_token_len (histogram); its time to first token is Triton's own first-response histogram of the
decoupled model, nv_inference_first_response_histogram_ms (the chart turns on histogram_latencies).
"""

from __future__ import annotations

from typing import Any

from tritonfleet.core.config import StackConfig, TritonDeployment
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.conventions import triton_release_name

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
    if d.llm.backend == "vllm":
        sources = {
            TTFT: _p95("vllm:time_to_first_token_seconds_bucket", pods),
            INTER_TOKEN: _p95("vllm:time_per_output_token_seconds_bucket", pods),
            OUTPUT_TOKENS: f"sum by (namespace, model) (rate(vllm:generation_tokens_total{{{pods}}}[{WINDOW}]))",
            KV_CACHE: f"max by (namespace, pod, model) (vllm:gpu_cache_usage_perc{{{pods}}})",
            WAITING: f"sum by (namespace, pod, model) (vllm:num_requests_waiting{{{pods}}})",
        }
    else:
        blocks = "nv_trt_llm_kv_cache_block_metrics"
        sources = {
            TTFT: _p95("nv_inference_first_response_histogram_ms_bucket", pods, " / 1000"),
            OUTPUT_TOKENS: f"sum by (namespace, model) (rate(nv_llm_output_token_len_sum{{{pods}}}[{WINDOW}]))",
            KV_CACHE: f'max by (namespace, pod, model) ({blocks}{{{pods}, kv_cache_block_type="used"}})'
            f' / (max by (namespace, pod, model) ({blocks}{{{pods}, kv_cache_block_type="max"}}) > 0)',
            WAITING: f'sum by (namespace, pod, model) (nv_trt_llm_request_metrics{{{pods}, request_type="waiting"}})',
        }
    return [{"record": name, "expr": expr, "labels": dict(labels)} for name, expr in sources.items()]


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
        alerts += [
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
    return alerts
