"""A bounded load generator for one Triton model, on tritonclient (HTTP, or gRPC where tritonclient.grpc imports).

Two modes, as NVIDIA's perf_analyzer has them: a fixed request rate (open loop: requests leave on a schedule whatever
the server does; latency counts from the scheduled send time, so a server that falls behind shows it) or a fixed
concurrency (closed loop: N clients, each sending its next request when the last one returns). Every run is bounded by
a duration and, optionally, a request count; the result is a `LoadtestResult` document.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tritonfleet.core.loadtest_result import Latency, LoadtestResult
from tritonfleet.deadline import DeadlineExceeded, call_within

MAX_DURATION_S = 3600
MAX_IN_FLIGHT = 512  # open loop: requests outstanding at once before the generator itself would be the bottleneck
ERROR_SAMPLES = 5
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
    duration_s: float = 10.0
    max_requests: int | None = None
    batch_size: int = 1
    replicas: int = 1
    timeout_s: float = 30.0

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
        if self.protocol == "grpc" and not grpc_available():
            raise LoadtestError("gRPC needs tritonclient.grpc, which does not import here; use --protocol http")


def _client(plan: Plan) -> Any:
    if plan.protocol == "grpc":
        import tritonclient.grpc as grpcclient

        return grpcclient.InferenceServerClient(plan.url)
    import tritonclient.http as httpclient

    return httpclient.InferenceServerClient(
        plan.url, connection_timeout=plan.timeout_s, network_timeout=plan.timeout_s
    )


def _module(plan: Plan) -> Any:
    if plan.protocol == "grpc":
        import tritonclient.grpc as grpcclient

        return grpcclient
    import tritonclient.http as httpclient

    return httpclient


def _describe(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]


def probe(plan: Plan) -> list[tuple[str, str, list[int]]]:
    """Check the server and model; return the model's inputs as (name, numpy dtype, shape with the batch)."""
    from tritonclient.utils import InferenceServerException

    client = _client(plan)
    try:
        try:
            live = client.is_server_live()
        except (InferenceServerException, OSError, Exception) as error:  # connection refused, DNS, TLS ...
            raise LoadtestError(f"no Triton server answers at {plan.url} ({plan.protocol}): {_describe(error)}") from None
        if not live:
            raise LoadtestError(f"the Triton server at {plan.url} is not live")
        try:
            ready = client.is_model_ready(plan.model, plan.model_version)
        except InferenceServerException:
            ready = False
        if not ready:
            raise LoadtestError(f"model '{plan.model}'{_version(plan)} is not ready on {plan.url}; " + _available(client, plan))
        as_json = {"as_json": True} if plan.protocol == "grpc" else {}
        metadata = client.get_model_metadata(plan.model, plan.model_version, **as_json)
        config = client.get_model_config(plan.model, plan.model_version, **as_json)
    finally:
        client.close()
    config = config.get("config", config)
    batching = int(config.get("max_batch_size", 0) or 0) > 0
    if plan.batch_size > 1 and not batching:
        raise LoadtestError(f"model '{plan.model}' does not batch (max_batch_size 0): use --batch-size 1")
    max_batch = int(config.get("max_batch_size", 0) or 0)
    if batching and plan.batch_size > max_batch:
        raise LoadtestError(f"--batch-size {plan.batch_size} is above the model's max_batch_size {max_batch}")
    inputs = []
    for spec in metadata["inputs"]:
        dtype = TRITON_DTYPES.get(spec["datatype"])
        if dtype is None:
            raise LoadtestError(f"input {spec['name']} has datatype {spec['datatype']}, which loadtest cannot generate")
        dims = [int(d) for d in spec["shape"]]
        if batching:
            dims = [plan.batch_size, *dims[1:]]
        inputs.append((spec["name"], dtype, [1 if d < 0 else d for d in dims]))  # variable dims: 1
    return inputs


def _version(plan: Plan) -> str:
    return f" version {plan.model_version}" if plan.model_version else ""


def _available(client: Any, plan: Plan) -> str:
    try:
        index = client.get_model_repository_index(**({"as_json": True} if plan.protocol == "grpc" else {}))
    except Exception:
        return "the model repository index could not be read"
    models = index.get("models", []) if isinstance(index, dict) else index
    ready = sorted({m.get("name", "?") for m in models if m.get("state", "READY") == "READY"})
    return "models ready there: " + (", ".join(ready) if ready else "none")


class _Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors = 0
        self.samples: list[str] = []
        self.sent = 0
        self.closed = False  # past the run's deadline: what still arrives is not counted

    def ok(self, seconds: float) -> None:
        with self.lock:
            if not self.closed:
                self.latencies.append(seconds)

    def failed(self, error: BaseException) -> None:
        with self.lock:
            if not self.closed:
                self.errors += 1
                self._sample(_describe(error))

    def _sample(self, text: str) -> None:
        if text not in self.samples and len(self.samples) < ERROR_SAMPLES:
            self.samples.append(text)

    def close(self, why: str) -> None:
        """Count the requests still in flight as errors (`why` says why) and stop counting what arrives later."""
        with self.lock:
            unfinished = self.sent - len(self.latencies) - self.errors
            if unfinished > 0:
                self.errors += unfinished
                self._sample(f"{unfinished} request(s) {why}")
            self.closed = True

    @property
    def done(self) -> int:
        return len(self.latencies) + self.errors


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of sorted values; None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def run(plan: Plan, progress: Callable[[float, int], None] | None = None, stop: threading.Event | None = None) -> LoadtestResult:
    """Probe, then drive the load until the duration or the request count is reached, or `stop` is set (a caller
    changing the load at a step boundary); requests in flight then finish. `progress(elapsed_s, done)`."""
    plan.check()
    stop = stop or threading.Event()
    try:
        inputs = call_within(plan.timeout_s, lambda: probe(plan))
    except DeadlineExceeded:
        raise LoadtestError(f"the Triton server at {plan.url} did not answer the probe within {plan.timeout_s:g} s") from None
    module = _module(plan)
    import numpy as np

    rng = np.random.default_rng(0)
    arrays = [(name, rng.random(shape).astype(dtype) if dtype.startswith("float") else np.ones(shape, dtype), shape)
              for name, dtype, shape in inputs]
    local = threading.local()
    clients: list[Any] = []
    clients_lock = threading.Lock()

    def infer() -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = _client(plan)
            with clients_lock:
                clients.append(client)
        request_inputs = []
        for name, array, shape in arrays:
            item = module.InferInput(name, shape, _triton_dtype(array))
            item.set_data_from_numpy(array)
            request_inputs.append(item)
        client.infer(plan.model, request_inputs, model_version=plan.model_version)

    recorder = _Recorder()
    started_at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    start = time.monotonic()
    deadline = start + plan.duration_s
    limit = plan.max_requests or math.inf

    def timed(scheduled: float) -> None:
        try:
            infer()
        except Exception as error:  # the server's answer (or the connection's) is a data point, not a crash
            recorder.failed(error)
        else:
            recorder.ok(time.monotonic() - scheduled)

    workers = plan.concurrency or min(MAX_IN_FLIGHT, max(4, math.ceil((plan.rate or 1) * 2)))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="loadtest")
    loops: list[Any] = []  # closed loop: the clients' loops
    try:
        if plan.rate is not None:
            interval = 1.0 / plan.rate
            while recorder.sent < limit and not stop.is_set():
                scheduled = start + recorder.sent * interval
                if scheduled >= deadline:
                    break
                now = time.monotonic()
                if scheduled > now:
                    stop.wait(min(scheduled - now, 0.05))
                    if progress:
                        progress(now - start, recorder.done)
                    continue
                recorder.sent += 1
                pool.submit(timed, scheduled)
        else:
            gate = threading.Lock()

            def take() -> bool:
                with gate:
                    if recorder.sent >= limit or time.monotonic() >= deadline or stop.is_set():
                        return False
                    recorder.sent += 1
                    return True

            def loop() -> None:
                while take():
                    timed(time.monotonic())

            loops = [pool.submit(loop) for _ in range(plan.concurrency or 1)]
        # Requests in flight get their own timeout to finish, and no longer: a server that trickles its answer a byte
        # at a time never trips a per-read timeout, and the run would never end.
        hard_deadline = deadline + plan.timeout_s
        while time.monotonic() < hard_deadline and not (
            all(f.done() for f in loops) if plan.rate is None else recorder.done >= recorder.sent
        ):
            time.sleep(0.05)
            if progress:
                progress(time.monotonic() - start, recorder.done)
        recorder.close(f"still in flight {plan.timeout_s:g} s after the test's end: abandoned (a server this slow fails)")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    elapsed = time.monotonic() - start
    if progress:
        progress(elapsed, recorder.done)
    for client in clients:
        client.close()
    ordered = sorted(recorder.latencies)
    ms = [v * 1000 for v in ordered]
    succeeded = len(ordered)
    per_second = succeeded / elapsed if elapsed > 0 else 0.0
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
        requests=recorder.sent,
        succeeded=succeeded,
        errors=recorder.errors,
        errorSamples=recorder.samples,
        achievedRequestsPerSecond=round(per_second, 3),
        achievedInferencesPerSecond=round(per_second * plan.batch_size, 3),
        latencyMs=Latency(
            p50=_round(percentile(ms, 50)), p95=_round(percentile(ms, 95)), p99=_round(percentile(ms, 99)),
            max=_round(ms[-1] if ms else None),
        ),
        latencyMeasuredFrom="scheduled send time (open loop)" if plan.rate is not None else "send time (closed loop)",
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _triton_dtype(array: Any) -> str:
    from tritonclient.utils import np_to_triton_dtype

    return np_to_triton_dtype(array.dtype)
