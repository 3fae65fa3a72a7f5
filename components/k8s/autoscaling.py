"""prometheus-adapter: serves the Triton HPAs' load signal and their latency guard as custom Pods metrics.

Primary signal, `triton_inferences_per_second`: the inferences a pod served per second, from `nv_inference_count`
(batch rows, so a request of 8 rows counts 8; `nv_inference_request_success` counts it once and would under-read a
batched model by its batch size). Its target per pod is the deployment's stated capacity (`throughputPerReplica`,
inferences/s) times `targetUtilization`, so the HPA's `desired = ceil(current × average / target)` becomes
offered load ÷ usable capacity per replica, which is what an SRE sizes by. Zero traffic reads 0 (→ minReplicas).

Latency guard, `triton_queue_ms_per_request`: the mean time a request waited in Triton's queue. Served throughput
cannot exceed what the running pods can do, so past saturation the primary signal stops rising with load; queue time
does, and the HPA takes the larger of the two proposals. The guard is a guard, not the signal: below saturation it
stays near 0 whatever the load (docs/serving.md, "Why not the queue/compute ratio").

Every rule sums numerators and denominators over the models of a pod before dividing (request-weighted; averaging
per-model series would under-report; triton-inference-server/server#8979). An HPA narrows to one model with a
`model` label selector. Triton's counters have no `_total` suffix, so the adapter's default rules are off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.values import pinned_chart
from tritonfleet.core import pins
from tritonfleet.core.conventions import MONITORING_NAMESPACE, PROMETHEUS_ADAPTER_RELEASE, PROMETHEUS_PORT, PROMETHEUS_SERVICE_URL
from tritonfleet.monitoring.autoscaling import SIGNAL_COUNTER, SIGNAL_WINDOW, hpa_target

INFERENCES_PER_SECOND = "triton_inferences_per_second"
QUEUE_MS_PER_REQUEST = "triton_queue_ms_per_request"
# LLM deployments: what saturates a replica is its batch of sequences and its KV cache, and what users feel is the
# first token. Per backend, from the gauges and histograms it exports through Triton's metrics port
# (monitoring/llm_rules.py): vLLM's vllm:time_to_first_token_seconds (vllm_backend src/utils/metrics.py, r24.08 to
# r26.01) and its scheduler gauges vllm:num_requests_running/_waiting and vllm:gpu_cache_usage_perc (0-1), which only
# triton-inference-server/vllm_backend#92 adds (open as of r26.01: README VERIFY); TensorRT-LLM's
# nv_trt_llm_request_metrics{request_type="active"} and nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=
# "used"|"max"} (blocks; tensorrtllm_backend r26.07 README, "Triton Metrics"; labels in r25.05
# inflight_batcher_llm/src/custom_metrics_reporter/custom_metrics_reporter.cc) and Triton's first-response histogram
# of the decoupled model (ms). TensorRT-LLM's "waiting" is active minus scheduled (r25.05 model_instance_state.cc),
# so it is inside "active"; the requests its executor queues past its max sequences (TensorRT-LLM
# cpp/tensorrt_llm/executor/executorImpl.cpp, mMaxNumActiveRequests) are not exported: that signal tops out at the
# batch, and the TTFT guard sees the queue.
LLM_SEQUENCES = {"vllm": "triton_vllm_sequences", "tensorrtllm": "triton_trtllm_sequences"}
LLM_TTFT_MS = {"vllm": "triton_vllm_ttft_ms", "tensorrtllm": "triton_trtllm_ttft_ms"}
LLM_KV_CACHE = {"vllm": "triton_vllm_kv_cache_usage", "tensorrtllm": "triton_trtllm_kv_cache_usage"}
RATE_WINDOW = SIGNAL_WINDOW
# prometheus-adapter's own API server port (its chart's default); the control plane calls it for every HPA sync.
ADAPTER_PORT = 6443

_POD_RESOURCES = {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}}
_POD_SERIES = '{namespace!="",pod!=""}'


def _rate(series: str) -> str:
    return f"sum(rate({series}{{<<.LabelMatchers>>}}[{RATE_WINDOW}])) by (<<.GroupBy>>)"


def triton_adapter_rules() -> list[dict[str, Any]]:
    """prometheus-adapter custom rules (templates with <<.Series>>, <<.LabelMatchers>> and <<.GroupBy>>)."""
    count, queue = SIGNAL_COUNTER, "nv_inference_queue_duration_us"
    return [
        {
            "seriesQuery": count + _POD_SERIES,
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{count}$", "as": INFERENCES_PER_SECOND},
            "metricsQuery": _rate("<<.Series>>"),
        },
        *_llm_rules(),
        {
            "seriesQuery": queue + _POD_SERIES,
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{queue}$", "as": QUEUE_MS_PER_REQUEST},
            # clamp_min(…, 1e-9): an idle pod (no request in the window) reads 0 ms, never NaN.
            "metricsQuery": f"{_rate('<<.Series>>')} / clamp_min({_rate('nv_inference_request_success')}, 1e-9) / 1000",
        },
    ]


def _llm_rules() -> list[dict[str, Any]]:
    """Sequences in a pod (running + waiting, averaged over the window: a gauge read once is one instant of a batch
    that changes every token), the share of its KV cache in use (0-1, averaged likewise) and its mean time to first
    token in ms, per LLM backend."""
    window = f"[{RATE_WINDOW}]"

    def vllm_gauge(name: str) -> str:  # one sum per gauge: avg_over_time drops the name, so two would collide
        return f"sum(avg_over_time(vllm:num_requests_{name}{{<<.LabelMatchers>>}}{window})) by (<<.GroupBy>>)"

    def trtllm_blocks(kind: str) -> str:
        series = f'nv_trt_llm_kv_cache_block_metrics{{kv_cache_block_type="{kind}",<<.LabelMatchers>>}}'
        return f"sum(avg_over_time({series}{window})) by (<<.GroupBy>>)"

    trtllm_sequences = 'nv_trt_llm_request_metrics{request_type="active",<<.LabelMatchers>>}'
    vllm_kv_cache = "vllm:gpu_cache_usage_perc"
    vllm_ttft, trt_ttft = "vllm:time_to_first_token_seconds", "nv_inference_first_response_histogram_ms"
    return [
        {
            "seriesQuery": f"vllm:num_requests_running{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": "^vllm:num_requests_running$", "as": LLM_SEQUENCES["vllm"]},
            "metricsQuery": f"{vllm_gauge('running')} + {vllm_gauge('waiting')}",
        },
        {
            "seriesQuery": f"nv_trt_llm_request_metrics{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": "^nv_trt_llm_request_metrics$", "as": LLM_SEQUENCES["tensorrtllm"]},
            "metricsQuery": f"sum(avg_over_time({trtllm_sequences}{window})) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": f"{vllm_kv_cache}{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{vllm_kv_cache}$", "as": LLM_KV_CACHE["vllm"]},
            # one engine per model; a pod of several models is as full as its fullest cache
            "metricsQuery": f"max(avg_over_time(<<.Series>>{{<<.LabelMatchers>>}}{window})) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": f"nv_trt_llm_kv_cache_block_metrics{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": "^nv_trt_llm_kv_cache_block_metrics$", "as": LLM_KV_CACHE["tensorrtllm"]},
            # blocks in use over the cache's blocks (clamp_min: a pod that reports no capacity reads 0, never NaN)
            "metricsQuery": f"{trtllm_blocks('used')} / clamp_min({trtllm_blocks('max')}, 1)",
        },
        {
            "seriesQuery": f"{vllm_ttft}_count{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{vllm_ttft}_count$", "as": LLM_TTFT_MS["vllm"]},
            "metricsQuery": f"{_rate(vllm_ttft + '_sum')} / clamp_min({_rate(vllm_ttft + '_count')}, 1e-9) * 1000",
        },
        {
            "seriesQuery": f"{trt_ttft}_count{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{trt_ttft}_count$", "as": LLM_TTFT_MS["tensorrtllm"]},
            "metricsQuery": f"{_rate(trt_ttft + '_sum')} / clamp_min({_rate(trt_ttft + '_count')}, 1e-9)",
        },
    ]


def _milli_quantity(value: float) -> str:
    """A Kubernetes quantity in milli-units, never rounded down to 0."""
    return f"{max(1, math.floor(value * 1000))}m"


def target_sequences(max_sequences: int, target_utilization: float) -> str:
    """The HPA's AverageValue for an LLM's sequences per pod: its batch capacity (llm.maxSequences) times
    targetUtilization."""
    return _milli_quantity(hpa_target(max_sequences, target_utilization))


def target_kv_cache(target_utilization: float) -> str:
    """The HPA's AverageValue for an LLM's KV-cache use per pod (a share, 0-1): the whole cache times
    targetUtilization, as for its sequences."""
    return _milli_quantity(hpa_target(1.0, target_utilization))


def target_inferences_per_second(throughput_per_replica: float, target_utilization: float) -> str:
    """The HPA's AverageValue for the primary signal: the per-replica capacity times targetUtilization."""
    return _milli_quantity(hpa_target(throughput_per_replica, target_utilization))


def prometheus_adapter_values() -> dict[str, Any]:
    return {
        "prometheus": {"url": PROMETHEUS_SERVICE_URL, "port": PROMETHEUS_PORT},
        # The default rules expose Triton's suffix-less counters as raw cumulative values: off, ours only.
        "rules": {"default": False, "custom": triton_adapter_rules()},
        "metricsRelistInterval": "1m",
        # The HPAs of every Triton deployment read through this APIService: two replicas and a disruption budget.
        "replicas": 2,
        "podDisruptionBudget": {"enabled": True, "maxUnavailable": 1},
    }


class PrometheusAdapter(pulumi.ComponentResource):
    """prometheus-adapter: serves Triton's queue metrics as custom metrics, so the Triton HPAs can scale on them."""

    def __init__(
        self,
        name: str,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:k8s:PrometheusAdapter", name, None, opts)
        self.release = k8s.helm.v3.Release(
            name,
            name=PROMETHEUS_ADAPTER_RELEASE,
            **pinned_chart(pins.PROMETHEUS_ADAPTER_CHART),
            namespace=MONITORING_NAMESPACE,
            create_namespace=True,
            values=prometheus_adapter_values(),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"status": self.release.status})
