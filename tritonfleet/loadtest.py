"""A bounded load generator for one Triton model, on tritonclient (HTTP, or gRPC where tritonclient.grpc imports).

Two modes, as NVIDIA's perf_analyzer has them: a request rate (open loop: requests leave on a schedule whatever the
server does; latency counts from the scheduled send time, so a server that falls behind shows it) or a concurrency
(closed loop: N clients, each sending its next request when the last one returns, backing off after a failure).

Open-loop arrivals are Poisson by default (independent clients: exponential gaps, which queue more than a fixed
interval does and show the p99 production sees), uniform, or a schedule of intervals (perf_analyzer's
--request-intervals: microseconds per line, cycled). A run warms up first (not measured), then measures in windows;
with a stability percentage it stops once the last three windows agree within it (perf_analyzer's stability windows):
on the pace (open loop: completed / sent per window, so a Poisson count's own noise does not count; closed loop:
throughput) and on the median latency. It says when they never did; such a result is not sized on. The result carries a saturation verdict (offered vs
achieved, the client's own lag, errors) and Triton's own queue vs compute time per request (its statistics API,
differenced over the run). Inputs are a pool of distinct tensors (random, `--shape` for variable dimensions, BYTES as
random strings) or perf_analyzer's `--input-data` JSON. An error-rate gate stops a run whose requests mostly fail.

`sweep` runs the load at rising rates (or concurrencies), then bisects, and records as capacity the highest throughput
whose latency percentile met the target, with the whole curve.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonfleet.core.loadtest_result import (
    CurvePoint,
    Latency,
    LoadtestResult,
    Saturation,
    ServerTimes,
    SweepCapacity,
    Window,
    saturation_reasons,
)
from tritonfleet.deadline import DeadlineExceeded, call_within

MAX_DURATION_S = 3600
MAX_IN_FLIGHT = 512  # open loop: requests outstanding at once before the generator itself would be the bottleneck
ERROR_SAMPLES = 5
STABLE_WINDOWS = 3  # perf_analyzer's: the last three windows must agree
LATE_S = 0.050  # open loop: a request starting this much after its scheduled time is the client falling behind
LATE_SHARE = 0.05  # more than this share of late requests (and more than 2): the client, not the server, set the pace
GATE_MIN_REQUESTS = 20  # the error-rate gate judges only after this many requests
BACKOFF_S = (0.01, 1.0)  # closed loop: first and longest pause after a failed request
MAX_SWEEP_POINTS = 12
SWEEP_RESOLUTION = 0.1  # bisect until the last good and first bad rate are within 10 %
MAX_DISTINCT = 1024
TRITON_DTYPES = {
    "FP32": "float32",
    "FP16": "float16",
    "FP64": "float64",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "BOOL": "bool",
    "BYTES": "object",
}


class LoadtestError(Exception):
    """The test cannot run: no server, no such model, an input it cannot generate, bad arguments."""


class LoadtestUsageError(LoadtestError):
    """The arguments do not say which test to run (a usage error: exit 64)."""


def grpc_available() -> bool:
    try:
        import tritonclient.grpc  # noqa: F401
    except Exception:  # an import-time protobuf/grpcio mismatch shows as any exception
        return False
    return True


@dataclass(frozen=True)
class Plan:
    url: str
    model: str
    model_version: str = ""
    protocol: str = "http"
    rate: float | None = None  # requests/s (open loop)
    concurrency: int | None = None  # closed loop
    duration_s: float = 10.0  # the longest measurement, after the warm-up
    max_requests: int | None = None
    batch_size: int = 1
    replicas: int = 1
    timeout_s: float = 30.0  # per request, on both protocols
    arrivals: str = "poisson"  # open loop: poisson or uniform (a schedule replaces both)
    schedule_us: tuple[int, ...] = ()  # open loop: intervals in microseconds, cycled (perf_analyzer --request-intervals)
    warmup_s: float = 0.0
    window_s: float = 0.0  # 0: one measurement over the duration, no windows
    stability_percent: float | None = None  # with window_s: stop once the last 3 windows agree within this
    percentile: int = 99
    latency_target_ms: float | None = None
    shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # input -> dims without the batch
    input_data: Path | None = None  # perf_analyzer's --input-data JSON
    distinct: int = 16  # distinct random tensors, cycled (so a response cache cannot answer them all)
    string_length: int = 16  # BYTES inputs: random strings of this length
    max_error_share: float = 0.5  # the gate: stop when more requests than this fail (after GATE_MIN_REQUESTS)
    seed: int = 0

    def check(self) -> None:
        if (self.rate is None) == (self.concurrency is None):
            raise LoadtestUsageError("give exactly one of --rate (requests/s, open loop) or --concurrency (closed loop)")
        if self.rate is not None and not (0 < self.rate <= 100_000):
            raise LoadtestError(f"--rate must be in (0, 100000] requests/s, not {self.rate}")
        if self.concurrency is not None and not (1 <= self.concurrency <= MAX_IN_FLIGHT):
            raise LoadtestError(f"--concurrency must be 1..{MAX_IN_FLIGHT}, not {self.concurrency}")
        if not (0 < self.duration_s <= MAX_DURATION_S):
            raise LoadtestError(f"--duration must be in (0, {MAX_DURATION_S}] seconds, not {self.duration_s}")
        if self.max_requests is not None and self.max_requests < 1:
            raise LoadtestError(f"--requests must be >= 1, not {self.max_requests}")
        if self.batch_size < 1 or self.replicas < 1:
            raise LoadtestError("--batch-size and --replicas must be >= 1")
        if not (0 < self.timeout_s <= 600):
            raise LoadtestError(f"--timeout must be in (0, 600] seconds, not {self.timeout_s}")
        if self.arrivals not in ("poisson", "uniform"):
            raise LoadtestError(f"--arrivals must be poisson or uniform, not {self.arrivals}")
        if self.schedule_us and any(us <= 0 for us in self.schedule_us):
            raise LoadtestError("--schedule intervals must be > 0 microseconds")
        if not (0 <= self.warmup_s <= MAX_DURATION_S) or self.window_s < 0 or self.window_s > self.duration_s:
            raise LoadtestError("--warmup must be 0..3600 s and --window 0..--duration seconds")
        if self.stability_percent is not None and not (0 < self.stability_percent <= 100):
            raise LoadtestError(f"--stability-percent must be in (0, 100], not {self.stability_percent}")
        if self.percentile not in (50, 90, 95, 99):
            raise LoadtestError(f"--percentile must be 50, 90, 95 or 99, not {self.percentile}")
        if not (1 <= self.distinct <= MAX_DISTINCT) or not (0 <= self.string_length <= 1_000_000):
            raise LoadtestError(f"--distinct must be 1..{MAX_DISTINCT} and --string-length 0..1000000")
        if not (0 < self.max_error_share <= 1):
            raise LoadtestError(f"--max-error-rate must be in (0, 1], not {self.max_error_share}")
        if self.protocol == "grpc" and not grpc_available():
            raise LoadtestError("gRPC needs tritonclient.grpc, which does not import here; use --protocol http")

    @property
    def arrivals_name(self) -> str:
        if self.rate is None:
            return "closed-loop"
        return "schedule" if self.schedule_us else self.arrivals


def connect(plan: Plan, timeout: float | None = None) -> Any:
    """A client of the plan's protocol; HTTP holds every call to `timeout` (default: the plan's)."""
    if plan.protocol == "grpc":
        import tritonclient.grpc as grpcclient

        return grpcclient.InferenceServerClient(plan.url)
    import tritonclient.http as httpclient

    seconds = timeout or plan.timeout_s
    return httpclient.InferenceServerClient(plan.url, connection_timeout=seconds, network_timeout=seconds)


def _module(plan: Plan) -> Any:
    if plan.protocol == "grpc":
        import tritonclient.grpc as grpcclient

        return grpcclient
    import tritonclient.http as httpclient

    return httpclient


def _timeout(plan: Plan, timeout: float | None = None) -> dict[str, Any]:
    """gRPC calls take their deadline per call (the HTTP client has its network timeout from the constructor)."""
    return {"client_timeout": timeout or plan.timeout_s} if plan.protocol == "grpc" else {}


CONTROL_TIMEOUT_S = 10.0  # probe and statistics calls: not measured, so never held to a tight --timeout


def _as_json(plan: Plan) -> dict[str, Any]:
    return {"as_json": True} if plan.protocol == "grpc" else {}


def _describe(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]


@dataclass(frozen=True)
class InputSpec:
    name: str
    datatype: str  # Triton's: FP32, BYTES ...
    dims: tuple[int, ...]  # one batch row's dims (-1: variable)


@dataclass(frozen=True)
class ModelSpec:
    inputs: tuple[InputSpec, ...]
    max_batch_size: int


def probe(plan: Plan) -> ModelSpec:
    """Check the server and model; return its inputs (dims without the batch dimension) and max_batch_size."""
    from tritonclient.utils import InferenceServerException

    control = max(plan.timeout_s, CONTROL_TIMEOUT_S)
    client = connect(plan, control)
    try:
        try:
            live = client.is_server_live(**_timeout(plan, control))
        except (InferenceServerException, OSError, Exception) as error:  # connection refused, DNS, TLS ...
            raise LoadtestError(f"no Triton server answers at {plan.url} ({plan.protocol}): {_describe(error)}") from None
        if not live:
            raise LoadtestError(f"the Triton server at {plan.url} is not live")
        try:
            ready = client.is_model_ready(plan.model, plan.model_version, **_timeout(plan, control))
        except InferenceServerException:
            ready = False
        if not ready:
            raise LoadtestError(f"model '{plan.model}'{_version(plan)} is not ready on {plan.url}; " + _available(client, plan))
        metadata = client.get_model_metadata(plan.model, plan.model_version, **_as_json(plan), **_timeout(plan, control))
        config = client.get_model_config(plan.model, plan.model_version, **_as_json(plan), **_timeout(plan, control))
    finally:
        client.close()
    config = config.get("config", config)
    max_batch = int(config.get("max_batch_size", 0) or 0)
    if plan.batch_size > 1 and max_batch == 0:
        raise LoadtestError(f"model '{plan.model}' does not batch (max_batch_size 0): use --batch-size 1")
    if max_batch and plan.batch_size > max_batch:
        raise LoadtestError(f"--batch-size {plan.batch_size} is above the model's max_batch_size {max_batch}")
    inputs = []
    for spec in metadata["inputs"]:
        if spec["datatype"] not in TRITON_DTYPES:
            raise LoadtestError(f"input {spec['name']} has datatype {spec['datatype']}, which loadtest cannot generate")
        dims = tuple(int(d) for d in spec["shape"])
        inputs.append(InputSpec(spec["name"], spec["datatype"], dims[1:] if max_batch else dims))
    return ModelSpec(tuple(inputs), max_batch)


def _version(plan: Plan) -> str:
    return f" version {plan.model_version}" if plan.model_version else ""


def _available(client: Any, plan: Plan) -> str:
    try:
        index = client.get_model_repository_index(**_as_json(plan))
    except Exception:
        return "the model repository index could not be read"
    models = index.get("models", []) if isinstance(index, dict) else index
    ready = sorted({m.get("name", "?") for m in models if m.get("state", "READY") == "READY"})
    return "models ready there: " + (", ".join(ready) if ready else "none")


# ---------------------------------------------------------------- inputs


def _shape_text(dims: tuple[int, ...]) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


def _fits(dims: tuple[int, ...], model_dims: tuple[int, ...]) -> bool:
    return len(dims) == len(model_dims) and all(m < 0 or d == m for d, m in zip(dims, model_dims, strict=True))


def resolve_shape(spec: InputSpec, shapes: Mapping[str, tuple[int, ...]]) -> tuple[int, ...]:
    """One batch row's dims: the model's, with variable (-1) dims from --shape. A variable dim without --shape, or a
    --shape that does not fit the model, is an error naming the fix."""
    given = shapes.get(spec.name)
    if given is None:
        if any(d < 0 for d in spec.dims):
            example = ",".join("224" if d < 0 else str(d) for d in spec.dims)
            raise LoadtestError(
                f"input {spec.name} has variable dims {_shape_text(spec.dims)}: give the shape to send, e.g. "
                f"--shape {spec.name}:{example} (perf_analyzer's --shape), or real tensors with --input-data"
            )
        return spec.dims
    if not _fits(given, spec.dims) or any(d < 0 for d in given):
        raise LoadtestError(
            f"--shape {spec.name}:{','.join(map(str, given))} does not fit the model's dims {_shape_text(spec.dims)} "
            "(same rank; fixed dims equal; -1 takes any size > 0)"
        )
    return given


def _random_tensor(rng: Any, spec: InputSpec, dims: tuple[int, ...], string_length: int) -> Any:
    import numpy as np

    if spec.datatype == "BYTES":
        letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype="S1")
        count = int(np.prod(dims, dtype=np.int64))
        picks = rng.choice(letters, size=(count, string_length))
        return np.array([b"".join(row) for row in picks], dtype=object).reshape(dims)
    dtype = TRITON_DTYPES[spec.datatype]
    if dtype.startswith("float"):
        return rng.random(dims).astype(dtype)
    if dtype == "bool":
        return rng.random(dims) < 0.5
    return rng.integers(0, 100, size=dims).astype(dtype)  # small non-negative values fit every integer type


def _from_file(plan: Plan, model: ModelSpec) -> list[dict[str, Any]]:
    """perf_analyzer's --input-data JSON: {"data": [{INPUT: [values] | {"content": [...], "shape": [...]}}, ...]},
    one entry per distinct request; each tensor is one batch row."""
    import numpy as np

    path = plan.input_data
    assert path is not None
    fix = f"fix {path}, or drop --input-data to send random tensors"
    try:
        document = json.loads(path.read_text())
    except OSError as error:
        raise LoadtestError(f"cannot read --input-data {path}: {error.strerror or error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise LoadtestError(f"--input-data {path} is not JSON ({error}); {fix}") from None
    steps = document.get("data") if isinstance(document, dict) else None
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) for s in steps):
        raise LoadtestError(f'--input-data {path}: expected {{"data": [{{"<input>": [...]}}, ...]}} (perf_analyzer\'s '
                            f"format) with at least one entry; {fix}")  # fmt: skip
    names = {spec.name for spec in model.inputs}
    pool = []
    for number, step in enumerate(steps[:MAX_DISTINCT], 1):
        unknown = sorted(set(step) - names)
        missing = sorted(names - set(step))
        if unknown or missing:
            said = [f"unknown input {', '.join(unknown)}" if unknown else "", f"no {', '.join(missing)}" if missing else ""]
            raise LoadtestError(f"--input-data {path} entry {number}: {'; '.join(s for s in said if s)} (the model's "
                                f"inputs: {', '.join(sorted(names))}); {fix}")  # fmt: skip
        tensors = {}
        for spec in model.inputs:
            value = step[spec.name]
            content, shape = (value.get("content"), value.get("shape")) if isinstance(value, dict) else (value, None)
            if shape is None:
                shape = resolve_shape(spec, plan.shapes)
            if not isinstance(content, list) or not isinstance(shape, list | tuple) or not all(
                isinstance(d, int) and d > 0 for d in shape
            ):
                raise LoadtestError(f"--input-data {path} entry {number}, input {spec.name}: expected a list of values "
                                    f"or {{\"content\": [...], \"shape\": [...]}}; {fix}")  # fmt: skip
            shape = tuple(shape)
            if not _fits(shape, spec.dims):
                raise LoadtestError(
                    f"--input-data {path} entry {number}, input {spec.name}: shape {_shape_text(shape)} does not match "
                    f"the model's {_shape_text(spec.dims)} (-1 takes any size); {fix}"
                )
            flat = np.array(content, dtype=object).reshape(-1) if spec.datatype == "BYTES" else np.array(content).reshape(-1)
            if flat.size != math.prod(shape):
                raise LoadtestError(
                    f"--input-data {path} entry {number}, input {spec.name}: {flat.size} values for shape "
                    f"{_shape_text(shape)} ({math.prod(shape)} values); {fix}"
                )
            if spec.datatype == "BYTES":
                tensors[spec.name] = np.array([str(v).encode() for v in flat], dtype=object).reshape(shape)
            else:
                try:
                    tensors[spec.name] = flat.astype(TRITON_DTYPES[spec.datatype]).reshape(shape)
                except (TypeError, ValueError):
                    raise LoadtestError(f"--input-data {path} entry {number}, input {spec.name}: values that are "
                                        f"not {spec.datatype}; {fix}") from None  # fmt: skip
        pool.append(tensors)
    return pool


def input_pool(plan: Plan, model: ModelSpec) -> list[list[tuple[str, Any, str]]]:
    """The requests' inputs, cycled: [(name, array with the batch dimension where the model batches, datatype)]."""
    import numpy as np

    if plan.input_data is not None:
        rows = _from_file(plan, model)
    else:
        unknown = sorted(set(plan.shapes) - {spec.name for spec in model.inputs})
        if unknown:
            raise LoadtestError(f"--shape names {', '.join(unknown)}, which the model does not have (its inputs: "
                                f"{', '.join(s.name for s in model.inputs)})")  # fmt: skip
        dims = {spec.name: resolve_shape(spec, plan.shapes) for spec in model.inputs}
        rng = np.random.default_rng(plan.seed)
        rows = [
            {spec.name: _random_tensor(rng, spec, dims[spec.name], plan.string_length) for spec in model.inputs}
            for _ in range(plan.distinct)
        ]
    pool = []
    for row in rows:
        request = []
        for spec in model.inputs:
            array = row[spec.name]
            if model.max_batch_size:
                array = np.stack([array] * plan.batch_size)
            request.append((spec.name, array, spec.datatype))
        pool.append(request)
    return pool


# ---------------------------------------------------------------- the run


class _Recorder:
    """Every request's scheduled/sent time, end time and outcome; windows and totals are computed from them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent_at: list[float] = []  # per success: the time its latency counts from
        self.done_at: list[float] = []
        self.failed_at: list[float] = []  # per failure: when it was sent
        self.samples: list[str] = []
        self.sent: list[float] = []  # every request's send (scheduled) time
        self.late: list[float] = []  # open loop: scheduled times of requests that started over LATE_S late
        self.closed = False  # past the run's deadline: what still arrives is not counted

    def send(self, at: float) -> None:
        with self.lock:
            self.sent.append(at)

    def started_late(self, scheduled: float) -> None:
        with self.lock:
            self.late.append(scheduled)

    def ok(self, sent: float, done: float) -> None:
        with self.lock:
            if not self.closed:
                self.sent_at.append(sent)
                self.done_at.append(done)

    def failed(self, sent: float, error: BaseException) -> None:
        with self.lock:
            if not self.closed:
                self.failed_at.append(sent)
                self._sample(_describe(error))

    def _sample(self, text: str) -> None:
        if text not in self.samples and len(self.samples) < ERROR_SAMPLES:
            self.samples.append(text)

    def close(self, why: str) -> None:
        """Count the requests still in flight as failed (`why` says why) and stop counting what arrives later. Which
        sends they were is not kept: the latest ones stand for them."""
        with self.lock:
            unfinished = len(self.sent) - len(self.done_at) - len(self.failed_at)
            if unfinished > 0:
                self.failed_at.extend(self.sent[-unfinished:])
                self._sample(f"{unfinished} request(s) {why}")
            self.closed = True

    @property
    def done(self) -> int:
        return len(self.done_at) + len(self.failed_at)

    def snapshot(self) -> tuple[list[float], list[float], list[float], list[float]]:
        with self.lock:
            return list(self.sent_at), list(self.done_at), list(self.failed_at), list(self.sent)


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of sorted values; None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass(frozen=True)
class _WindowStats:
    per_second: float  # requests completed per second
    latency: float | None  # ms at the plan's percentile (reported)
    median: float | None  # ms: what stability compares (a short window's p99 is nearly its slowest request)
    pace: float  # open loop: completed / sent in the window (a Poisson count's noise cancels); closed: per_second


def _window(sent: list[float], done: list[float], sends: list[float], start: float, end: float, q: int,
            open_loop: bool) -> _WindowStats:  # fmt: skip
    """The requests completed in [start, end): their rate, latency percentile and median, and the pace."""
    latencies = sorted((d - s) * 1000 for s, d in zip(sent, done, strict=True) if start <= d < end)
    per_second = len(latencies) / (end - start)
    scheduled = sum(1 for s in sends if start <= s < end)
    pace = (len(latencies) / scheduled if scheduled else 0.0) if open_loop else per_second
    return _WindowStats(per_second, percentile(latencies, q), percentile(latencies, 50), pace)


def _agree(values: list[float], percent: float) -> bool:
    mean = sum(values) / len(values)
    return mean > 0 and (max(values) - min(values)) / mean <= percent / 100


def _intervals(plan: Plan) -> Any:
    """The gaps between open-loop sends, in seconds: Poisson (exponential gaps at the rate), uniform, or a schedule."""
    import numpy as np

    if plan.schedule_us:
        return itertools.cycle([us / 1e6 for us in plan.schedule_us])
    assert plan.rate is not None
    if plan.arrivals == "uniform":
        return itertools.repeat(1.0 / plan.rate)
    rng = np.random.default_rng(plan.seed)

    def exponential() -> Any:
        while True:
            yield from rng.exponential(1.0 / plan.rate, 4096)

    return exponential()


def server_statistics(plan: Plan) -> dict[str, int] | None:
    """Triton's cumulative statistics for the model (its statistics API): request count, queue and compute ns."""
    control = max(plan.timeout_s, CONTROL_TIMEOUT_S)
    client = connect(plan, control)
    try:
        stats = client.get_inference_statistics(plan.model, plan.model_version, **_as_json(plan), **_timeout(plan, control))
    except Exception:  # statistics are a bonus: a server that refuses them still gets load-tested
        return None
    finally:
        client.close()
    entries = stats.get("model_stats", [])
    totals = {"requests": 0, "queue": 0, "compute": 0}
    for entry in entries:
        inference = entry.get("inference_stats", {})
        totals["requests"] += int(inference.get("success", {}).get("count", 0))
        totals["queue"] += int(inference.get("queue", {}).get("ns", 0))
        totals["compute"] += sum(int(inference.get(k, {}).get("ns", 0)) for k in
                                 ("compute_input", "compute_infer", "compute_output"))  # fmt: skip
    return totals


def _server_times(before: dict[str, int] | None, after: dict[str, int] | None) -> ServerTimes | None:
    if before is None or after is None:
        return None
    requests = after["requests"] - before["requests"]
    if requests <= 0:
        return None
    return ServerTimes(
        requests=requests,
        queueMs=round((after["queue"] - before["queue"]) / requests / 1e6, 3),
        computeMs=round((after["compute"] - before["compute"]) / requests / 1e6, 3),
    )


def run(plan: Plan, progress: Callable[[float, int], None] | None = None, stop: threading.Event | None = None) -> LoadtestResult:
    """Probe, warm up, then drive the load until the duration, the request count, stable windows, the error-rate gate
    or `stop` (a caller changing the load at a step boundary) ends it; requests in flight then finish.
    `progress(elapsed_s, done)`."""
    plan.check()
    stop = stop or threading.Event()
    halt = threading.Event()  # this run's own end: stable windows or the error-rate gate (a sweep's `stop` goes on)
    probe_s = max(plan.timeout_s, CONTROL_TIMEOUT_S)
    try:
        model = call_within(probe_s, lambda: probe(plan))
    except DeadlineExceeded:
        raise LoadtestError(f"the Triton server at {plan.url} did not answer the probe within {probe_s:g} s") from None
    pool = input_pool(plan, model)
    module = _module(plan)
    local = threading.local()
    clients: list[Any] = []
    clients_lock = threading.Lock()
    picks = itertools.count()

    def infer() -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = connect(plan)
            with clients_lock:
                clients.append(client)
        request_inputs = []
        for name, array, datatype in pool[next(picks) % len(pool)]:
            item = module.InferInput(name, list(array.shape), datatype)
            item.set_data_from_numpy(array)
            request_inputs.append(item)
        client.infer(plan.model, request_inputs, model_version=plan.model_version, **_timeout(plan))

    recorder = _Recorder()
    gate: list[str] = []
    stable_from: list[float] = []
    windows: list[_WindowStats] = []
    started_at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    start = time.monotonic()
    measure_start = start + plan.warmup_s
    deadline = measure_start + plan.duration_s
    limit = plan.max_requests or math.inf
    before: list[dict[str, int] | None] = [None]
    statistics_taken = threading.Event()
    if not plan.warmup_s:
        before[0] = server_statistics(plan)
        statistics_taken.set()
    ended: list[float] = []  # when sending stopped

    def stopping() -> bool:
        return halt.is_set() or stop.is_set()

    def tick(now: float) -> None:
        """Progress; the statistics at the end of the warm-up; closed windows and their stability; the gate."""
        if progress:
            progress(now - start, recorder.done)
        if now >= measure_start and not statistics_taken.is_set():
            statistics_taken.set()
            before[0] = server_statistics(plan)
        with recorder.lock:
            failures, finished = len(recorder.failed_at), recorder.done
        if finished >= GATE_MIN_REQUESTS and failures / finished > plan.max_error_share and not gate:
            gate.append(f"stopped early: {failures} of {finished} requests failed (> {plan.max_error_share:.0%}, "
                        "--max-error-rate)")  # fmt: skip
            halt.set()
        if not plan.window_s or measure_start + (len(windows) + 1) * plan.window_s > now:
            return
        sent, done, _, sends = recorder.snapshot()  # only when a window closes: a copy of every request so far
        while measure_start + (len(windows) + 1) * plan.window_s <= now:
            begin = measure_start + len(windows) * plan.window_s
            windows.append(_window(sent, done, sends, begin, begin + plan.window_s, plan.percentile, plan.rate is not None))
            last = windows[-STABLE_WINDOWS:]
            if (plan.stability_percent and len(last) == STABLE_WINDOWS and all(w.median is not None for w in last)
                    and _agree([w.pace for w in last], plan.stability_percent)
                    and _agree([w.median for w in last if w.median is not None], plan.stability_percent)):  # fmt: skip
                stable_from.append(measure_start + (len(windows) - STABLE_WINDOWS) * plan.window_s)
                halt.set()
                return

    def timed(scheduled: float) -> bool:
        if plan.rate is not None and time.monotonic() - scheduled > LATE_S:
            recorder.started_late(scheduled)
        try:
            infer()
        except Exception as error:  # the server's answer (or the connection's) is a data point, not a crash
            recorder.failed(scheduled, error)
            return False
        recorder.ok(scheduled, time.monotonic())
        return True

    workers = plan.concurrency or min(MAX_IN_FLIGHT, max(4, math.ceil((plan.rate or 1) * 2)))
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="loadtest")
    try:
        if plan.rate is not None:
            gaps = _intervals(plan)
            scheduled = start
            ticked = start
            while len(recorder.sent) < limit and not stopping():
                if scheduled >= deadline - 1e-9:  # summed gaps drift by float noise
                    break
                now = time.monotonic()
                if now - ticked >= 0.05:  # also when the schedule never waits (a rate the client barely keeps)
                    tick(now)
                    ticked = now
                if scheduled > now:
                    halt.wait(min(scheduled - now, 0.05))
                    continue
                recorder.send(scheduled)
                executor.submit(timed, scheduled)
                scheduled += next(gaps)
            # No send was due before the deadline once the schedule passed it: the sending covered it all.
            ended.append(deadline if scheduled >= deadline - 1e-9 else min(time.monotonic(), deadline))
        else:
            take_lock = threading.Lock()

            def take() -> float | None:
                with take_lock:
                    now = time.monotonic()
                    if len(recorder.sent) >= limit or now >= deadline or stopping():
                        if not ended:
                            ended.append(min(now, deadline))
                        return None
                    recorder.send(now)
                    return now

            def loop() -> None:
                backoff = BACKOFF_S[0]
                while (sent := take()) is not None:
                    if timed(sent):
                        backoff = BACKOFF_S[0]
                        continue
                    halt.wait(backoff)  # a failed request is not resent at once: the client must not flood
                    backoff = min(BACKOFF_S[1], backoff * 2)

            futures = [executor.submit(loop) for _ in range(plan.concurrency or 1)]
            while not all(f.done() for f in futures) and time.monotonic() < deadline:
                halt.wait(0.05)
                tick(time.monotonic())
        # Requests in flight get their own timeout to finish, and no longer: a server that trickles its answer a byte
        # at a time never trips a per-read timeout, and the run would never end.
        hard_deadline = max(time.monotonic(), deadline) + plan.timeout_s
        while time.monotonic() < hard_deadline and recorder.done < len(recorder.sent):
            time.sleep(0.05)
            if progress:
                progress(time.monotonic() - start, recorder.done)
        recorder.close(f"still in flight {plan.timeout_s:g} s after the test's end: abandoned (a server this slow fails)")
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
    measure_end = ended[0] if ended else min(time.monotonic(), deadline)
    after = server_statistics(plan) if statistics_taken.is_set() else None
    if progress:
        progress(time.monotonic() - start, recorder.done)
    for client in clients:
        client.close()
    return _result(plan, recorder, started_at, stable_from[0] if stable_from else measure_start, measure_end,
                   windows, bool(stable_from), gate, _server_times(before[0], after))  # fmt: skip


def _result(
    plan: Plan, recorder: _Recorder, started_at: str, begin: float, end: float, windows: list[_WindowStats],
    stable: bool, gate: list[str], server: ServerTimes | None,
) -> LoadtestResult:
    sent, done, failed, sends = recorder.snapshot()
    sending_end = end
    measured = [(s, d) for s, d in zip(sent, done, strict=True) if begin <= s < end]
    ms = sorted((d - s) * 1000 for s, d in measured)
    # The requests sent before the end finish (a server behind drains its queue at its own pace): their completions
    # and that time count, so a saturated server reads at the rate it served, and a healthy one loses no tail.
    end = max([end, begin + 1e-6, *(d for _, d in measured)])
    completed = sum(1 for d in done if begin <= d <= end)
    requests = sum(1 for s in sends if begin <= s < end)
    errors = sum(1 for s in failed if begin <= s < end)
    elapsed = end - begin
    per_second = completed / elapsed if requests else 0.0
    # Offered: what the schedule sent over the measurement (a Poisson schedule sends its rate only on average).
    offered = requests / (sending_end - begin) if plan.rate is not None and sending_end > begin else None
    reasons = saturation_reasons(offered, per_second, requests, errors) + gate
    late = sum(1 for s in recorder.late if begin <= s < sending_end)
    if requests and late > max(2, LATE_SHARE * requests):
        reasons.append(f"{late} of {requests} requests started over {LATE_S * 1000:g} ms after their scheduled time: "
                       f"the client fell behind (its CPU, or {MAX_IN_FLIGHT} in flight at most)")  # fmt: skip
    used_windows = windows[-STABLE_WINDOWS:] if stable else windows
    return LoadtestResult(
        model=plan.model,
        modelVersion=plan.model_version,
        url=plan.url,
        protocol=plan.protocol,  # type: ignore[arg-type]
        mode="rate" if plan.rate is not None else "concurrency",
        offeredRate=plan.rate,
        concurrency=plan.concurrency,
        batchSize=plan.batch_size,
        replicas=plan.replicas,
        startedAt=started_at,
        durationS=round(elapsed, 3),
        requests=requests,
        succeeded=len(ms),
        errors=errors,
        errorSamples=recorder.samples,
        achievedRequestsPerSecond=round(per_second, 3),
        achievedInferencesPerSecond=round(per_second * plan.batch_size, 3),
        latencyMs=Latency(
            p50=_round(percentile(ms, 50)), p90=_round(percentile(ms, 90)), p95=_round(percentile(ms, 95)),
            p99=_round(percentile(ms, 99)), max=_round(ms[-1] if ms else None),
        ),  # fmt: skip
        latencyMeasuredFrom="scheduled send time (open loop)" if plan.rate is not None else "send time (closed loop)",
        arrivals=plan.arrivals_name,  # type: ignore[arg-type]
        warmupS=plan.warmup_s,
        percentile=plan.percentile,  # type: ignore[arg-type]
        latencyTargetMs=plan.latency_target_ms,
        stabilityPercent=plan.stability_percent if plan.window_s else None,
        stable=stable if plan.window_s and plan.stability_percent else None,
        windows=[Window(achievedRequestsPerSecond=round(w.per_second, 3), latencyMs=_round(w.latency)) for w in used_windows],
        saturation=Saturation(saturated=bool(reasons), reasons=reasons),
        server=server,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# ---------------------------------------------------------------- the sweep


def _point(result: LoadtestResult, target_ms: float) -> CurvePoint:
    latency = result.latency_ms.at(result.percentile)
    saturated = bool(result.saturation and result.saturation.saturated)
    return CurvePoint(
        offeredRate=result.offered_rate, concurrency=result.concurrency, requests=result.requests, errors=result.errors,
        achievedRequestsPerSecond=result.achieved_requests_per_second,
        achievedInferencesPerSecond=result.achieved_inferences_per_second, latencyMs=result.latency_ms,
        stable=result.stable, saturated=saturated,
        meetsTarget=latency is not None and latency <= target_ms and not saturated and result.stable is not False,
    )  # fmt: skip


def sweep(
    plan: Plan, limit: float, progress: Callable[[str], None] | None = None, stop: threading.Event | None = None
) -> LoadtestResult:
    """From the plan's rate (or concurrency), double the load until a point misses the target or saturates (or
    `limit` is passed), then bisect between the last good and first bad load. Capacity: the highest achieved
    throughput of a point that met the target, unsaturated and within the error share sizing accepts."""
    if plan.latency_target_ms is None:
        raise LoadtestUsageError("a sweep needs a latency target: add --latency-target 50ms (the deployment's "
                                 "latencyTarget), the most a request may take at --percentile")  # fmt: skip
    plan.check()
    target = plan.latency_target_ms
    closed = plan.concurrency is not None
    level: float = plan.concurrency if closed else plan.rate  # type: ignore[assignment]
    if limit < level:
        raise LoadtestError(f"--sweep-max {limit:g} is below the starting {'--concurrency' if closed else '--rate'} {level:g}")
    results: dict[float, LoadtestResult] = {}
    good, bad = None, None
    stop = stop or threading.Event()
    for _ in range(MAX_SWEEP_POINTS):
        level = max(1, round(level)) if closed else round(level, 3)
        if level in results or stop.is_set():
            break
        if progress:
            progress(f"{'concurrency' if closed else 'rate'} {level:g}")
        step = dataclasses.replace(plan, concurrency=int(level)) if closed else dataclasses.replace(plan, rate=level)
        results[level] = run(step, stop=stop)
        if _point(results[level], target).meets_target:  # unsaturated, errors within MAX_ERROR_SHARE, on target
            good = level
        else:
            bad = level if bad is None else min(bad, level)
        if good is None:
            break  # the lowest load already misses: nothing below it was asked for
        if bad is None:
            if level >= limit:
                break
            level = min(limit, level * 2)
            continue
        if (bad - good) <= (1 if closed else SWEEP_RESOLUTION * good):
            break
        level = (good + bad) / 2
    curve = [_point(results[k], target) for k in sorted(results)]
    fits = [p for p in curve if p.meets_target]
    best = max(fits, key=lambda p: p.achieved_inferences_per_second, default=None)
    if best is None:
        shown = results[min(results)]
        capacity = None
    else:
        shown = results[best.concurrency if closed else best.offered_rate]  # type: ignore[index]
        capacity = SweepCapacity(
            achievedInferencesPerSecond=best.achieved_inferences_per_second, offeredRate=best.offered_rate,
            concurrency=best.concurrency, latencyMs=best.latency_ms.at(plan.percentile),
        )  # fmt: skip
    return shown.model_copy(update={"curve": curve, "capacity": capacity, "latency_target_ms": target})
