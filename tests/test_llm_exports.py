"""Every series an LLM deployment's HPA, recording rules and alerts read is one its layout exports on the pinned
release (tritonfleet/core/llm_exports.py): an HPA that reads one its pods lack never scales down (tests/hpa_model.py),
and a rule over a missing family is silent."""

from __future__ import annotations

import re

import pytest

from components.k8s.autoscaling import triton_adapter_rules
from components.k8s.triton import autoscaling_values
from tests.serving_helpers import by_kind, render, with_layout
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.llm_exports import EXPORTS, LLMAPI, TRITON, VLLM, exports_of, serving_layout
from tritonfleet.monitoring import llm_rules

# A series selector: a metric name followed by its label matchers (every query here selects with matchers).
SELECTOR = re.compile(r"(?<![\w:\"])([A-Za-z_:][\w:]*)\{")
RECORDED = re.compile(r"^\w+:tritonfleet_")  # our own records, which the alerts and the dashboard read


def _read(query: str, series: str = "") -> set[str]:
    """The metric names a PromQL query (or an adapter template, `<<.Series>>` being `series`) selects."""
    return set(SELECTOR.findall(query.replace("<<.Series>>", series)))


def _deployment(backend: str, layout: str | None) -> TritonDeployment:
    llm = {"backend": backend, "model": "Llama-3.1-8B", "precision": "bf16", "maxContext": 4096, "maxSequences": 16}
    return TritonDeployment.model_validate({
        "name": "llm", "pool": "h200", "minReplicas": 1, "maxReplicas": 4, "throughputPerReplica": 10,
        "queueTimeTarget": "50ms", "llm": llm | ({"layout": layout} if layout else {}),
    })  # fmt: skip


DEPLOYMENTS = {"vllm": ("vllm", None), "llmapi": ("tensorrtllm", None), "engine": ("tensorrtllm", "engine")}


def _hpa_reads(deployment: TritonDeployment) -> set[str]:
    """The series behind every metric of the HPA the chart renders for the deployment, through the adapter's rules."""
    values = {"modelRepository": "s3://models", "replicas": {"min": 1, "max": 4},
              "autoscaling": autoscaling_values(deployment, monitoring=True)}  # fmt: skip
    spec = by_kind(render(values))["HorizontalPodAutoscaler"]["spec"]
    rules = {r["name"]["as"]: r for r in triton_adapter_rules()}
    read = set()
    for metric in spec["metrics"]:
        rule = rules[metric["pods"]["metric"]["name"]]
        series = rule["seriesQuery"].split("{")[0]
        read |= {series} | _read(rule["metricsQuery"], series)
    return read


@pytest.mark.parametrize("layout", DEPLOYMENTS)
def test_the_hpa_reads_only_what_the_layout_exports(layout):
    deployment = _deployment(*DEPLOYMENTS[layout])
    assert serving_layout(deployment.llm) == layout
    read = _hpa_reads(deployment)
    assert read and all(exports_of(deployment.llm).exports(s) for s in read), sorted(read)


@pytest.mark.parametrize(("stack", "layout"), [("gcp-prod", None), ("prod", None), ("prod", "engine")])
def test_the_llm_rules_and_alerts_read_only_what_the_layout_exports(stack, layout, stack_config):
    config = with_layout(stack_config(stack), layout)
    deployment = next(d for d in config.triton_deployments if d.llm is not None)
    for rule in llm_rules.llm_rules(config):
        read = {s for s in _read(rule["expr"]) if not RECORDED.match(s)}
        assert all(exports_of(deployment.llm).exports(s) for s in read), (rule, sorted(read))


def test_the_shipped_llm_deployments_layouts():
    """prod serves TensorRT-LLM in its default LLM API layout, gcp-prod vLLM."""
    from tests.conftest import engine_config
    from tritonfleet.core.config import load_stack_config

    layouts = {s: [serving_layout(d.llm) for d in load_stack_config(engine_config(s), s).triton_deployments if d.llm]
               for s in ("prod", "gcp-prod")}  # fmt: skip
    assert layouts == {"prod": ["llmapi"], "gcp-prod": ["vllm"]}


def test_the_table_holds_what_the_sources_say():
    """vLLM's scheduler gauges are not in any vllm_backend release (only vllm_backend#92, open); the LLM API model
    exports nothing of TensorRT-LLM's; every layout has Triton's own families, histograms with their series."""
    assert not VLLM.exports("vllm:num_requests_running") and not VLLM.exports("vllm:gpu_cache_usage_perc")
    assert VLLM.exports("vllm:e2e_request_latency_seconds_sum") and not VLLM.exports("vllm:e2e_request_latency_seconds_x")
    assert not any(LLMAPI.exports(s) for s in ("nv_trt_llm_request_metrics", "nv_llm_output_token_len_sum"))
    assert EXPORTS["engine"].exports("nv_trt_llm_kv_cache_block_metrics")
    for exports in EXPORTS.values():
        assert exports.exports("nv_inference_first_response_histogram_ms_bucket") and exports.exports("nv_inference_count")
        assert TRITON.source in exports.source and "2026-12-05" in exports.source


def test_a_series_the_layout_lacks_is_caught():
    """The check itself: the vLLM HPA of before (its scheduler gauges) would fail it."""
    gauges = _read("sum(avg_over_time(vllm:num_requests_running{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)")
    assert gauges == {"vllm:num_requests_running"} and not VLLM.exports("vllm:num_requests_running")
