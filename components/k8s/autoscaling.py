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
from tritonfleet.monitoring.autoscaling import KV_CACHE, LLM_SIGNALS, SEQUENCES, SIGNAL_COUNTER, SIGNAL_WINDOW, TTFT, hpa_target

INFERENCES_PER_SECOND = "triton_inferences_per_second"
QUEUE_MS_PER_REQUEST = "triton_queue_ms_per_request"
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
    """One adapter rule per LLM signal name of LLM_SIGNALS: sequences in a pod, the share of its KV cache in use (0-1)
    and its mean time to first token in ms."""
    window = f"[{RATE_WINDOW}]"

    def trtllm_blocks(kind: str) -> str:
        series = f'nv_trt_llm_kv_cache_block_metrics{{kv_cache_block_type="{kind}",<<.LabelMatchers>>}}'
        return f"sum(avg_over_time({series}{window})) by (<<.GroupBy>>)"

    trtllm_sequences = 'nv_trt_llm_request_metrics{request_type="active",<<.LabelMatchers>>}'
    vllm_e2e = "vllm:e2e_request_latency_seconds_sum"
    vllm_ttft, trt_ttft = "vllm:time_to_first_token_seconds", "nv_inference_first_response_histogram_ms"
    vllm, engine = LLM_SIGNALS["vllm"], LLM_SIGNALS["engine"]
    return [
        {
            "seriesQuery": f"{vllm_e2e}{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{vllm_e2e}$", "as": vllm[SEQUENCES]},
            # Little's law: the seconds requests spent in the engine (queued and running), summed as each one
            # finishes, per second of the window = the mean requests in the pod over the window. It lags by about a
            # request's duration (a request counts when it ends) and a window that no request ends in reads 0.
            "metricsQuery": _rate("<<.Series>>"),
        },
        {
            "seriesQuery": f"nv_trt_llm_request_metrics{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": "^nv_trt_llm_request_metrics$", "as": engine[SEQUENCES]},
            # averaged over the window: a gauge read once is one instant of a batch that changes every token
            "metricsQuery": f"sum(avg_over_time({trtllm_sequences}{window})) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": f"nv_trt_llm_kv_cache_block_metrics{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": "^nv_trt_llm_kv_cache_block_metrics$", "as": engine[KV_CACHE]},
            # blocks in use over the cache's blocks (clamp_min: a pod that reports no capacity reads 0, never NaN)
            "metricsQuery": f"{trtllm_blocks('used')} / clamp_min({trtllm_blocks('max')}, 1)",
        },
        {
            "seriesQuery": f"{vllm_ttft}_count{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{vllm_ttft}_count$", "as": vllm[TTFT]},
            "metricsQuery": f"{_rate(vllm_ttft + '_sum')} / clamp_min({_rate(vllm_ttft + '_count')}, 1e-9) * 1000",
        },
        {
            "seriesQuery": f"{trt_ttft}_count{_POD_SERIES}",
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{trt_ttft}_count$", "as": engine[TTFT]},
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
