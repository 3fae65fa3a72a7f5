"""LLM signals as recording rules and alerts, checked by the real promtool over synthetic series of each backend's
metric families: a healthy series keeps every LLM alert quiet, a failing one fires it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from monitoring_support import firing, run, series, silent, tool, value_is, write_rules

from tests.serving_helpers import with_layout
from tritonfleet.monitoring import llm_rules, rules

POD = {"namespace": "triton", "pod": "triton-llm-7d9f-abcde", "model": "llm", "version": "1"}
ALERTS = ("LlmTimeToFirstTokenHigh", "LlmKvCacheSaturated", "LlmRequestsWaiting")


def _histogram(metric: str, cumulative: dict[str, float]) -> list[dict[str, str]]:
    """Bucket counters rising by `per minute` each, le -> per minute."""
    return [series(f"{metric}_bucket", {**POD, "le": le}, f"0+{n:g}x40") for le, n in cumulative.items()]


def _vllm(healthy: bool) -> list[dict[str, str]]:
    """What the vLLM backend exports (tritonfleet/core/llm_exports.py): no KV-cache or waiting gauge."""
    ttft = {"0.1": 30, "0.5": 60, "2.5": 60, "5.0": 60, "+Inf": 60} if healthy else {"0.5": 0, "2.5": 0, "5.0": 60, "+Inf": 60}
    return [
        *_histogram("vllm:time_to_first_token_seconds", ttft),
        *_histogram("vllm:time_per_output_token_seconds", {"0.025": 6000, "0.05": 6000, "+Inf": 6000}),
        series("vllm:generation_tokens_total", POD, "0+6000x40"),  # 100 tokens/s
    ]


def _first_response(healthy: bool) -> list[dict[str, str]]:
    ttft = {"100": 30, "500": 60, "5000": 60, "+Inf": 60} if healthy else {"500": 0, "2500": 0, "5000": 60, "+Inf": 60}
    return _histogram("nv_inference_first_response_histogram_ms", ttft)


def _engine(healthy: bool) -> list[dict[str, str]]:
    blocks = "nv_trt_llm_kv_cache_block_metrics"
    return [
        *_first_response(healthy),
        series("nv_llm_output_token_len_sum", POD, "0+6000x40"),
        series(blocks, {**POD, "kv_cache_block_type": "used"}, f"{600 if healthy else 990}x40"),
        series(blocks, {**POD, "kv_cache_block_type": "max"}, "1000x40"),
        series("nv_trt_llm_request_metrics", {**POD, "request_type": "waiting"}, f"{0 if healthy else 3}x40"),
    ]


# per layout: its synthetic series, and whether it gets the output-token and KV-cache/waiting records and alerts
LAYOUTS = {"vllm": (_vllm, True, False), "engine": (_engine, True, True), "llmapi": (_first_response, False, False)}


def _firing(alertname: str, labels: dict[str, str]) -> dict[str, Any]:
    return firing(alertname, {"deployment": "llm", **labels, "severity": "warning"}, "30m")


def _value(metric: str, labels: dict[str, str], value: float) -> dict[str, Any]:
    return value_is(metric, {**labels, "deployment": "llm"}, value, "30m")


def _test(input_series: list[dict[str, str]], healthy: bool, tokens: bool, kv_cache: bool) -> dict[str, Any]:
    model = {"namespace": "triton", "model": "llm"}
    pod = {"namespace": "triton", "pod": POD["pod"], "model": "llm"}
    if healthy:
        quiet = [silent(name, "30m") for name in ALERTS]
        values = [_value(llm_rules.OUTPUT_TOKENS, model, 100)] if tokens else []
        values += [_value(llm_rules.KV_CACHE, pod, 0.6)] if kv_cache else []
        cost = series(rules.DEPLOYMENT_USD, {"namespace": "triton", "deployment": "triton-llm"}, "36x40")
        if tokens:  # the release's GPU share at $36/hour over 100 output tokens/s: $100 per 1M output tokens
            values.append(_value("deployment:tritonfleet_usd_per_1m_output_tokens:ratio", {}, 100))
        return {"interval": "1m", "input_series": [*input_series, cost], "alert_rule_test": quiet,
                "promql_expr_test": values}
    fired = [_firing("LlmTimeToFirstTokenHigh", model)]
    if kv_cache:
        fired += [_firing("LlmKvCacheSaturated", pod), _firing("LlmRequestsWaiting", pod), _value(llm_rules.WAITING, pod, 3)]
    # alerts on what the layout does not export are not rendered, so they never fire
    quiet = [] if kv_cache else [silent(name, "30m") for name in ("LlmKvCacheSaturated", "LlmRequestsWaiting")]
    return {"interval": "1m", "input_series": input_series, "alert_rule_test": quiet, "promql_expr_test": fired}


@pytest.mark.parametrize(("stack", "layout"), [("gcp-prod", None), ("prod", "engine"), ("prod", None)],
                         ids=["vllm", "engine", "llmapi"])
def test_llm_alerts_are_quiet_when_healthy_and_fire_when_failing(stack, layout, stack_config, tmp_path):
    promtool = tool("promtool")
    config = with_layout(stack_config(stack), layout)
    backend_series, tokens, kv_cache = LAYOUTS[layout or {"gcp-prod": "vllm", "prod": "llmapi"}[stack]]
    write_rules(rules.rule_groups(config), tmp_path)
    tests = [_test(backend_series(True), True, tokens, kv_cache), _test(backend_series(False), False, tokens, kv_cache)]
    path = tmp_path / "llm-test.yaml"
    path.write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}))
    result = run(promtool, "test", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_only_stacks_with_llm_deployments_get_the_llm_group(stack_config):
    assert "tritonfleet-llm" not in {g["name"] for g in rules.rule_groups(stack_config("dev"))}
    group = next(g for g in rules.rule_groups(stack_config("prod")) if g["name"] == "tritonfleet-llm")
    assert {r["alert"] for r in group["rules"] if "alert" in r} == {"LlmTimeToFirstTokenHigh"}  # the LLM API layout
    engine = next(g for g in rules.rule_groups(with_layout(stack_config("prod"), "engine")) if g["name"] == "tritonfleet-llm")
    assert {r["alert"] for r in engine["rules"] if "alert" in r} == set(ALERTS)
    ttft = next(r for r in group["rules"] if r.get("alert") == "LlmTimeToFirstTokenHigh")
    assert ttft["expr"].endswith("> 2")  # the default ttftTarget, 2s


def test_llm_dashboard_reads_the_recorded_llm_series(stack_config):
    from tritonfleet.monitoring.dashboards import dashboard_queries, dashboards

    assert "llm" not in dashboards(stack_config("dev"))
    ttft, inter_token, tokens = "Time to first token, p95", "Time between output tokens, p95", "Output tokens per second"
    kv_cache, waiting = "KV cache in use", "Requests waiting for a sequence slot"
    expected = {  # a panel for each record the layout gets
        ("prod", None): [ttft],
        ("prod", "engine"): [ttft, tokens, kv_cache, waiting],
        ("gcp-prod", None): [ttft, inter_token, tokens],
    }
    for (stack, layout), titles in expected.items():
        config = with_layout(stack_config(stack), layout)
        board = dashboards(config)["llm"]
        assert [p["title"] for p in board["panels"]] == titles
        recorded = {r["record"] for g in rules.rule_groups(config) for r in g["rules"] if "record" in r}
        for _, expr in dashboard_queries(board):
            assert expr.split("{")[0] in recorded, expr
        units = {p["title"]: p["fieldConfig"]["defaults"]["unit"] for p in board["panels"]}
        assert units[ttft] == "s" and units.get(kv_cache, "percentunit") == "percentunit"
