"""The result document of `tritonfleet loadtest`: written by the load generator, read by sizing and the plan as a
deployment's measured per-replica capacity.

A run is a usable capacity only where it met the latency target without saturating and almost without errors
(`usable_capacity`): a saturated open-loop run measures how far the server fell behind, not what it carries; a run
whose requests failed measured failures; a run above its latency target says the rate is too high. Sizing refuses
such a result with the reason, rather than ranking or scaling estimates from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

RESULT_FORMAT = "tritonfleet-loadtest/1"
# Above 1 % failed requests a run measured failures (timeouts, refusals), not capacity.
MAX_ERROR_SHARE = 0.01
# Open loop: achieved under 95 % of the offered rate means the server (or the client) fell behind; its latency then
# grows with the run's length, and the achieved rate is the server's ceiling, not a rate it carries within a target.
SATURATED_BELOW = 0.95


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


class Latency(_Doc):
    p50: float | None
    p90: float | None = None  # absent from results written before percentiles were selectable
    p95: float | None
    p99: float | None
    max: float | None

    def at(self, percentile: int) -> float | None:
        return getattr(self, f"p{percentile}")


class Window(_Doc):
    """One measurement window of a run (perf_analyzer's stability windows)."""

    achieved_requests_per_second: float = Field(alias="achievedRequestsPerSecond", ge=0)
    latency_ms: float | None = Field(alias="latencyMs")  # at the run's percentile


class Saturation(_Doc):
    saturated: bool
    reasons: list[str] = Field(default_factory=list)


class ServerTimes(_Doc):
    """Triton's own view of the run (its Prometheus metrics, differenced over the run): mean ms per request waiting
    in the queue and computing (input + inference + output), and the requests it counted."""

    requests: int = Field(ge=0)
    queue_ms: float = Field(alias="queueMs", ge=0)
    compute_ms: float = Field(alias="computeMs", ge=0)


class CurvePoint(_Doc):
    """One load point of a sweep."""

    offered_rate: float | None = Field(None, alias="offeredRate")
    concurrency: int | None = None
    requests: int = Field(ge=0)
    errors: int = Field(ge=0)
    achieved_requests_per_second: float = Field(alias="achievedRequestsPerSecond", ge=0)
    achieved_inferences_per_second: float = Field(alias="achievedInferencesPerSecond", ge=0)
    latency_ms: Latency = Field(alias="latencyMs")
    stable: bool | None = None
    saturated: bool
    meets_target: bool = Field(alias="meetsTarget")


class SweepCapacity(_Doc):
    """The highest throughput of a sweep whose latency percentile met the target (all replicas together)."""

    achieved_inferences_per_second: float = Field(alias="achievedInferencesPerSecond", gt=0)
    offered_rate: float | None = Field(None, alias="offeredRate")
    concurrency: int | None = None
    latency_ms: float = Field(alias="latencyMs")


class LoadtestResult(_Doc):
    """One load test of one model. Latencies in ms, rates per second, over successful requests."""

    format: Literal["tritonfleet-loadtest/1"] = RESULT_FORMAT
    model: str
    model_version: str = Field("", alias="modelVersion")
    url: str
    protocol: Literal["http", "grpc"]
    mode: Literal["rate", "concurrency"]
    offered_rate: float | None = Field(None, alias="offeredRate")  # requests/s asked for (rate mode)
    concurrency: int | None = None
    batch_size: int = Field(alias="batchSize", ge=1)
    replicas: int = Field(1, ge=1)  # replicas that served the test: capacity per replica = achieved / replicas
    started_at: str = Field(alias="startedAt")
    duration_s: float = Field(alias="durationS", ge=0)
    requests: int = Field(ge=0)  # sent
    succeeded: int = Field(ge=0)
    errors: int = Field(ge=0)
    error_samples: list[str] = Field(default_factory=list, alias="errorSamples")
    achieved_requests_per_second: float = Field(alias="achievedRequestsPerSecond", ge=0)
    achieved_inferences_per_second: float = Field(alias="achievedInferencesPerSecond", ge=0)
    latency_ms: Latency = Field(alias="latencyMs")
    latency_measured_from: str = Field(alias="latencyMeasuredFrom")
    # How requests left (open loop: poisson or uniform intervals, or a schedule file); None in older results.
    arrivals: Literal["poisson", "uniform", "schedule", "closed-loop"] | None = None
    warmup_s: float = Field(0.0, alias="warmupS", ge=0)
    percentile: Literal[50, 90, 95, 99] = 99  # the latency percentile held against the target
    latency_target_ms: float | None = Field(None, alias="latencyTargetMs", gt=0)
    stability_percent: float | None = Field(None, alias="stabilityPercent", gt=0)
    stable: bool | None = None  # the last windows agreed within stabilityPercent
    windows: list[Window] = Field(default_factory=list)
    saturation: Saturation | None = None
    server: ServerTimes | None = None
    curve: list[CurvePoint] = Field(default_factory=list)  # a sweep's load points, lowest load first
    capacity: SweepCapacity | None = None  # a sweep's answer: None when no point met the target

    @property
    def inferences_per_second_per_replica(self) -> float:
        return self.achieved_inferences_per_second / self.replicas

    def dumps(self) -> str:
        return json.dumps(self.model_dump(by_alias=True, mode="json"), indent=2, sort_keys=True) + "\n"


def saturation_reasons(
    offered_rate: float | None, achieved_requests_per_second: float, requests: int, errors: int
) -> list[str]:
    """Why a load point is not a rate the server carries: it fell behind the offered rate, or requests failed."""
    reasons = []
    if offered_rate and achieved_requests_per_second < SATURATED_BELOW * offered_rate:
        reasons.append(
            f"offered {offered_rate:,.1f} requests/s, achieved {achieved_requests_per_second:,.1f} "
            f"(< {SATURATED_BELOW:.0%}): the server fell behind"
        )
    if requests and errors / requests > MAX_ERROR_SHARE:
        reasons.append(f"{errors} of {requests} requests failed ({errors / requests:.1%} > {MAX_ERROR_SHARE:.0%})")
    return reasons


def _point_problems(
    saturation: list[str], achieved: float, requests: int, errors: int, latency: float | None, percentile: int,
    target_ms: float | None,
) -> list[str]:
    if latency is None or achieved <= 0:
        return [f"no request succeeded ({errors} errors of {requests} requests)"]
    problems = list(saturation)
    if target_ms is not None and latency > target_ms:
        problems.append(f"p{percentile} {latency:g} ms is above the latency target of {target_ms:g} ms")
    return problems


@dataclass(frozen=True)
class Usable:
    """The part of a result sizing may use: inferences/s per replica, and the latency percentile seen there."""

    inferences_per_second: float
    latency_ms: float | None
    percentile: int
    at: str  # the load point, for the plan's source line


class Refused(Exception):
    """A result that is no capacity at the target: the reasons say why and what to rerun."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def _at(offered: float | None, concurrency: int | None) -> str:
    return f"{offered:,.1f} requests/s offered" if offered is not None else f"concurrency {concurrency}"


def usable_capacity(result: LoadtestResult, target_ms: float | None) -> Usable:
    """The highest load point of `result` that met `target_ms` (at the result's percentile) without saturating or
    failing; raise Refused with every reason when none did. A sweep's curve is searched again, so a sweep run
    against a looser target still answers for a stricter one."""
    percentile = result.percentile
    if result.curve:
        fits, misses = [], []
        for point in result.curve:
            saturated = ["saturated (the sweep's verdict)"] if point.saturated else []
            saturated += ["its windows never agreed"] if point.stable is False else []
            saturated += saturation_reasons(None, point.achieved_requests_per_second, point.requests, point.errors)
            problems = _point_problems(
                saturated, point.achieved_requests_per_second, point.requests, point.errors,
                point.latency_ms.at(percentile), percentile, target_ms,
            )  # fmt: skip
            if problems:
                misses.append(f"at {_at(point.offered_rate, point.concurrency)}: {problems[0]}")
            else:
                fits.append(point)
        if not fits:
            raise Refused(["no load point of the sweep is usable", *misses[:3]])
        best = max(fits, key=lambda p: p.achieved_inferences_per_second)
        return Usable(best.achieved_inferences_per_second / result.replicas, best.latency_ms.at(percentile), percentile,
                      f"sweep point {_at(best.offered_rate, best.concurrency)}")  # fmt: skip
    if result.saturation is not None:  # the run's own verdict: offered is what was sent (Poisson varies), lag, gate
        saturated = list(result.saturation.reasons)
        if result.stable is False:
            saturated.append(f"its windows never agreed within {result.stability_percent:g} % (rerun with a longer "
                             "--duration, or at a load the server holds)")  # fmt: skip
    else:  # a result from before the verdict was recorded: its nominal rate was sent at fixed intervals
        saturated = saturation_reasons(result.offered_rate, result.achieved_requests_per_second, result.requests,
                                       result.errors)  # fmt: skip
    problems = _point_problems(
        saturated, result.achieved_requests_per_second, result.requests, result.errors,
        result.latency_ms.at(percentile), percentile, target_ms,
    )  # fmt: skip
    if problems:
        raise Refused(problems)
    return Usable(result.inferences_per_second_per_replica, result.latency_ms.at(percentile), percentile,
                  _at(result.offered_rate, result.concurrency))  # fmt: skip


class ResultError(Exception):
    """A result file that cannot be read or is not a loadtest result."""


def read_result(path: Path) -> LoadtestResult:
    from tritonfleet.core.strict_json import StrictJsonError, read_json

    try:
        return LoadtestResult.model_validate(read_json(path))  # strictly: UTF-8, no NaN, no key given twice
    except StrictJsonError as error:
        raise ResultError(str(error)) from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise ResultError(f"{path} is not a `tritonfleet loadtest` result ({where}: {first['msg']})") from None
