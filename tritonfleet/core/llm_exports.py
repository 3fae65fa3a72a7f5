"""What each LLM serving layout exports on Triton's metrics port (8002) on the pinned release: the one table the HPA's
LLM signals (components/k8s/autoscaling.py), the LLM recording rules and alerts (monitoring/llm_rules.py) and the LLM
dashboard render from. tests/test_llm_exports.py holds every series they read to it, because an HPA that reads one
series its pods do not export can never scale down (Kubernetes' computeReplicasForMetrics: a metric it cannot compute
blocks every scale-down; its ScalingActive condition turns false).

A layout is how the deployment's model is served (`Llm.layout`): `vllm` (the vLLM backend's model.json), `llmapi`
(TensorRT-LLM's LLM API model.py, the pinned 26.07 image's TensorRT-LLM 1.2.1 default) or `engine` (TensorRT-LLM's
deprecated C++ in-flight batcher over a built engine). A histogram family covers its _bucket, _sum and _count series.
"""

from __future__ import annotations

from dataclasses import dataclass

from tritonfleet.core.config.schema import Llm

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass(frozen=True)
class Exports:
    """The metric families a layout's pods export, with where that was read (URL, branch or commit, date)."""

    counters_and_gauges: frozenset[str]
    histograms: frozenset[str]
    source: str

    def exports(self, series: str) -> bool:
        """True for a family it exports, or one of the _bucket/_sum/_count series of a histogram it exports."""
        if series in self.counters_and_gauges or series in self.histograms:
            return True
        return any(series.endswith(s) and series.removesuffix(s) in self.histograms for s in HISTOGRAM_SUFFIXES)

    def __or__(self, other: Exports) -> Exports:
        return Exports(
            self.counters_and_gauges | other.counters_and_gauges,
            self.histograms | other.histograms,
            f"{self.source}; {other.source}",
        )


# Triton's own per-model families, every backend alike (triton-inference-server/server docs/user_guide/metrics.md,
# branch r26.07 at 819ee37, 2026-07-24, read 2026-12-05: https://github.com/triton-inference-server/server/blob/r26.07/
# docs/user_guide/metrics.md). The first-response histogram needs --metrics-config=histogram_latencies=true (the chart
# sets it) and a decoupled model (every LLM layout streams); the summaries need summary_latencies=true (set too).
TRITON = Exports(
    counters_and_gauges=frozenset({
        "nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count",
        "nv_inference_exec_count", "nv_inference_pending_request_count", "nv_inference_request_duration_us",
        "nv_inference_queue_duration_us", "nv_inference_compute_input_duration_us",
        "nv_inference_compute_infer_duration_us", "nv_inference_compute_output_duration_us",
    }),
    histograms=frozenset({"nv_inference_first_response_histogram_ms"}),
    source="https://github.com/triton-inference-server/server/blob/r26.07/docs/user_guide/metrics.md (r26.07 at "
    "819ee37, read 2026-12-05)",
)  # fmt: skip

# The vLLM backend (triton-inference-server/vllm_backend src/utils/metrics.py, the same families on branches r24.08 to
# r26.01 and on main at 8de0c14, 2026-01-09; r26.01 at c70d654, 2026-01-22, is the newest release branch the corpora
# hold, no r26.07 there; read 2026-12-05: https://github.com/triton-inference-server/vllm_backend/blob/r26.01/src/
# utils/metrics.py), labels model and version, only where config.pbtxt sets REPORT_CUSTOM_METRICS "true" (src/model.py
# _setup_metrics). No scheduler gauge (vllm:num_requests_running/_waiting, vllm:gpu_cache_usage_perc): those come with
# triton-inference-server/vllm_backend#92, open. vllm:e2e_request_latency_seconds is observed when a request finishes,
# from its arrival in the engine (vLLM's FinishedRequestStats.e2e_latency: queued and running).
VLLM = TRITON | Exports(
    counters_and_gauges=frozenset({"vllm:prompt_tokens_total", "vllm:generation_tokens_total"}),
    histograms=frozenset({
        "vllm:time_to_first_token_seconds", "vllm:time_per_output_token_seconds", "vllm:e2e_request_latency_seconds",
        "vllm:request_prompt_tokens", "vllm:request_generation_tokens", "vllm:request_params_n",
    }),
    source="https://github.com/triton-inference-server/vllm_backend/blob/r26.01/src/utils/metrics.py (r26.01 at "
    "c70d654, main at 8de0c14, read 2026-12-05)",
)  # fmt: skip

# TensorRT-LLM's LLM API model (NVIDIA/TensorRT-LLM triton_backend/all_models/llmapi/tensorrt_llm/1/model.py at
# 044a90d and b35ac1b, read 2026-12-05): it defines no pb_utils.MetricFamily, so only Triton's own families. Its
# nv_inference_pending_request_count stays near 0 (execute() hands each request to the engine and returns).
LLMAPI = TRITON | Exports(
    counters_and_gauges=frozenset(),
    histograms=frozenset(),
    source="https://github.com/NVIDIA/TensorRT-LLM/blob/main/triton_backend/all_models/llmapi/tensorrt_llm/1/model.py "
    "(044a90d, b35ac1b: no MetricFamily; read 2026-12-05)",
)

# TensorRT-LLM's engine layout, the C++ in-flight batcher's custom metrics reporter (tensorrtllm_backend README
# "Triton Metrics", branch r26.07 at 3bc1153, 2026-07-14, read 2026-12-05: https://github.com/triton-inference-server/
# tensorrtllm_backend/blob/r26.07/README.md#triton-metrics; the token-length histograms in
# inflight_batcher_llm/src/custom_metrics_reporter/custom_metrics_reporter.cc, label response_metric_type).
ENGINE = TRITON | Exports(
    counters_and_gauges=frozenset({
        "nv_trt_llm_request_metrics", "nv_trt_llm_runtime_memory_metrics", "nv_trt_llm_kv_cache_block_metrics",
        "nv_trt_llm_inflight_batcher_metrics", "nv_trt_llm_general_metrics", "nv_trt_llm_disaggregated_serving_metrics",
    }),
    histograms=frozenset({"nv_llm_input_token_len", "nv_llm_output_token_len"}),
    source="https://github.com/triton-inference-server/tensorrtllm_backend/blob/r26.07/README.md#triton-metrics "
    "(r26.07 at 3bc1153, read 2026-12-05)",
)  # fmt: skip

EXPORTS = {"vllm": VLLM, "llmapi": LLMAPI, "engine": ENGINE}


def serving_layout(llm: Llm) -> str:
    """The deployment's layout: vllm, or TensorRT-LLM's llmapi (its default) or engine."""
    return "vllm" if llm.backend == "vllm" else (llm.layout or "llmapi")


def exports_of(llm: Llm) -> Exports:
    return EXPORTS[serving_layout(llm)]
