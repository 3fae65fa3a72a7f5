"""The result document of `tritonfleet loadtest`: written by the load generator, read by sizing and the plan as a
deployment's measured per-replica capacity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

RESULT_FORMAT = "tritonfleet-loadtest/1"


class Latency(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    p50: float | None
    p95: float | None
    p99: float | None
    max: float | None


class LoadtestResult(BaseModel):
    """One load test of one model. Latencies in ms, rates per second, over successful requests."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)

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

    @property
    def inferences_per_second_per_replica(self) -> float:
        return self.achieved_inferences_per_second / self.replicas

    def dumps(self) -> str:
        return json.dumps(self.model_dump(by_alias=True, mode="json"), indent=2, sort_keys=True) + "\n"


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
