"""The result document of `tritonfleet loadtest --llm`: a streaming load test of one LLM, in tokens.

What a user of an LLM feels is the time to the first token (TTFT) and the time between tokens (ITL, inter-token
latency: per request (end-to-end - TTFT) / (output tokens - 1), as NVIDIA's GenAI-Perf defines it); what a replica
carries is output tokens per second. Goodput counts the requests that met both targets (GenAI-Perf's goodput).

Token counts are what the server streamed: one streamed response is one output token (Triton's decoupled LLM backends
stream one response per generated token when asked to stream). Input lengths are words of the prompt, an estimate of
its tokens (no tokenizer is loaded here), and are labelled so.

A result is a usable per-replica capacity in output tokens/s only where it met its TTFT and ITL targets without
saturating or failing (`usable_token_capacity`); sizing refuses any other result with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from tritonfleet.core.loadtest_result import Latency, Refused, ResultError, Saturation, _Doc, saturation_reasons

LLM_RESULT_FORMAT = "tritonfleet-loadtest-llm/1"
TOKEN_COUNTING = "one streamed response = one output token; input tokens = words of the prompt (an estimate)"


class Lengths(_Doc):
    """A token-length distribution as asked for, and the mean of what was sent (input) or streamed (output)."""

    distribution: str  # "fixed 128", "uniform 64..256", "prompts file prompts.jsonl"
    mean: float | None = Field(None, ge=0)


class Goodput(_Doc):
    """Requests per second that met both targets (GenAI-Perf's goodput), and their share of the measured requests."""

    ttft_target_ms: float | None = Field(None, alias="ttftTargetMs", gt=0)
    itl_target_ms: float | None = Field(None, alias="itlTargetMs", gt=0)
    requests_per_second: float = Field(alias="requestsPerSecond", ge=0)
    share: float = Field(ge=0, le=1)


class LlmLoadtestResult(_Doc):
    """One streaming load test of one LLM. Latencies in ms over successful requests; rates per second."""

    format: Literal["tritonfleet-loadtest-llm/1"] = LLM_RESULT_FORMAT
    model: str
    model_version: str = Field("", alias="modelVersion")
    gpu: str | None = None  # the accelerator that served it (--gpu), so a profile is not applied to another
    url: str
    protocol: Literal["http", "grpc", "openai"]
    mode: Literal["rate", "concurrency"]
    offered_rate: float | None = Field(None, alias="offeredRate")
    concurrency: int | None = None
    arrivals: Literal["poisson", "uniform", "closed-loop"]
    replicas: int = Field(1, ge=1)
    started_at: str = Field(alias="startedAt")
    warmup_s: float = Field(0.0, alias="warmupS", ge=0)
    duration_s: float = Field(alias="durationS", ge=0)
    requests: int = Field(ge=0)
    succeeded: int = Field(ge=0)
    errors: int = Field(ge=0)
    error_samples: list[str] = Field(default_factory=list, alias="errorSamples")
    token_counting: str = Field(TOKEN_COUNTING, alias="tokenCounting")
    input_tokens: Lengths = Field(alias="inputTokens")
    output_tokens: Lengths = Field(alias="outputTokens")
    ttft_ms: Latency = Field(alias="ttftMs")
    ttft_min_ms: float | None = Field(None, alias="ttftMinMs", ge=0)  # the fastest first token: a target's floor
    itl_ms: Latency = Field(alias="itlMs")
    e2e_ms: Latency = Field(alias="e2eMs")
    latency_measured_from: str = Field(alias="latencyMeasuredFrom")
    requests_per_second: float = Field(alias="requestsPerSecond", ge=0)
    output_tokens_per_second: float = Field(alias="outputTokensPerSecond", ge=0)
    total_tokens_per_second: float = Field(alias="totalTokensPerSecond", ge=0)
    percentile: Literal[50, 90, 95, 99] = 99  # the percentile held against the targets
    goodput: Goodput
    saturation: Saturation

    @property
    def output_tokens_per_second_per_replica(self) -> float:
        return self.output_tokens_per_second / self.replicas

    def dumps(self) -> str:
        return json.dumps(self.model_dump(by_alias=True, mode="json"), indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class TokenCapacity:
    """What sizing may use from an LLM result: output tokens/s per replica at the targets, and what was seen there."""

    output_tokens_per_second: float
    ttft_ms: float
    itl_ms: float
    percentile: int
    mean_output_tokens: float | None
    mean_input_tokens: float | None
    at: str  # the load point, for the plan's source line


def _at(result: LlmLoadtestResult) -> str:
    if result.offered_rate is not None:
        return f"{result.offered_rate:,.2f} requests/s offered"
    return f"concurrency {result.concurrency}"


def usable_token_capacity(
    result: LlmLoadtestResult, ttft_target_ms: float | None, itl_target_ms: float | None
) -> TokenCapacity:
    """Output tokens/s per replica of `result` where it met both targets at its percentile without saturating or
    failing; raise Refused with every reason (and the fix) otherwise. A TTFT target below the fastest first token the
    run saw cannot be met at any load: the message says so rather than asking for a lower load."""
    p = result.percentile
    ttft, itl = result.ttft_ms.at(p), result.itl_ms.at(p)
    if ttft is None or itl is None or result.output_tokens_per_second <= 0:
        raise Refused([f"no request streamed tokens ({result.errors} errors of {result.requests} requests)"])
    problems = list(result.saturation.reasons) or saturation_reasons(
        result.offered_rate, result.requests_per_second, result.requests, result.errors
    )
    if ttft_target_ms is not None and ttft > ttft_target_ms:
        problems.append(_missed("TTFT", p, ttft, ttft_target_ms, result.ttft_min_ms))
    if itl_target_ms is not None and itl > itl_target_ms:
        problems.append(_missed("inter-token latency", p, itl, itl_target_ms, None))
    if problems:
        raise Refused(problems)
    return TokenCapacity(
        result.output_tokens_per_second_per_replica, ttft, itl, p, result.output_tokens.mean, result.input_tokens.mean,
        _at(result),
    )  # fmt: skip


def _missed(what: str, p: int, seen: float, target: float, fastest: float | None) -> str:
    text = f"{what} p{p} {seen:,.1f} ms is above the target of {target:g} ms"
    if fastest is not None and fastest > target:
        return (f"{text}, and even the fastest request took {fastest:,.1f} ms: the target is below the measured "
                "minimum, which no load meets (raise the target, or use a faster GPU or shorter inputs)")  # fmt: skip
    return f"{text}: rerun `tritonfleet loadtest --llm` at a lower --rate or --concurrency"


def is_llm_result(document: object) -> bool:
    return isinstance(document, dict) and document.get("format") == LLM_RESULT_FORMAT


def read_llm_result(path: Path) -> LlmLoadtestResult:
    from tritonfleet.core.strict_json import StrictJsonError, read_json

    try:
        return LlmLoadtestResult.model_validate(read_json(path))
    except StrictJsonError as error:
        raise ResultError(str(error)) from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise ResultError(f"{path} is not a `tritonfleet loadtest --llm` result ({where}: {first['msg']})") from None
