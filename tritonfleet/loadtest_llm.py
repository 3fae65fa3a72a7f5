"""`tritonfleet loadtest --llm`: a bounded streaming load generator for one LLM served by Triton, measured in tokens.

Requests stream: over gRPC with Triton's decoupled streaming API (tritonclient.grpc start_stream /
async_stream_infer, one stream per client thread, an empty final response marking each request's end), over HTTP
with Triton's generate_stream endpoint (server-sent events, one `data:` event per response), or to an
OpenAI-compatible frontend's /v1/completions with stream true (`--protocol openai`). One streamed response is one
output token (TOKEN_COUNTING); an OpenAI usage block, where sent, gives the exact count.

The model is driven the way NVIDIA's GenAI-Perf drives Triton's LLM backends: the prompt in a BYTES input
(`text_input`), the output length in `max_tokens` (TensorRT-LLM's ensemble; `request_output_len` in older ones) or in
vLLM's `sampling_parameters` JSON (`max_tokens` with `ignore_eos`, so the length asked for is the length streamed),
`stream` true. Input lengths are fixed, uniform, or prompts from a JSONL file (GenAI-Perf's input file: one
{"text": ...} a line, an optional "output_tokens"); output lengths fixed or uniform (or per prompt).

Load is open loop at a request rate (Poisson or uniform arrivals, the schedule loadtest.py draws; TTFT and
end-to-end latency count from the scheduled send time, so a server behind shows it) or closed loop at a concurrency
(from the moment the built request leaves the client, as perf_analyzer stamps a send).
A warm-up is not measured. The result (core/llm_loadtest_result.py) has TTFT, inter-token and end-to-end percentiles,
output and total tokens/s, requests/s, errors, goodput against TTFT/ITL targets, and the saturation verdict.
"""

from __future__ import annotations

import datetime as dt
import http.client
import itertools
import json
import math
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonfleet import loadtest as lt
from tritonfleet.core.llm_loadtest_result import Goodput, Lengths, LlmLoadtestResult
from tritonfleet.core.loadtest_result import Latency, Saturation, saturation_reasons
from tritonfleet.deadline import DeadlineExceeded, call_within

MAX_TOKENS = 1_000_000  # an input or output length asked for (longer than any model's context)
MAX_PROMPTS = 100_000
PROMPT_INPUTS = ("text_input", "prompt", "PROMPT", "text")
LENGTH_INPUTS = ("max_tokens", "request_output_len", "max_new_tokens")
SAMPLING_INPUT = "sampling_parameters"  # vLLM backend: a JSON string
TRUE_INPUTS = ("stream", "exclude_input_in_output")
# Words of the synthetic prompts: one word is about one token for common English words in Llama's and GPT's
# tokenizers; no tokenizer is loaded here, so input lengths are labelled estimates (TOKEN_COUNTING).
WORDS = ("the", "model", "serves", "tokens", "fleet", "cluster", "request", "answer", "time", "load")


@dataclass(frozen=True)
class Prompt:
    text: str
    output_tokens: int | None = None  # the prompt file's own, else the plan's distribution


@dataclass(frozen=True)
class LlmPlan:
    url: str
    model: str
    model_version: str = ""
    protocol: str = "grpc"
    rate: float | None = None
    concurrency: int | None = None
    duration_s: float = 10.0
    warmup_s: float = 0.0
    max_requests: int | None = None
    replicas: int = 1
    timeout_s: float = 60.0  # per request: its whole stream
    arrivals: str = "poisson"
    input_tokens: tuple[int, int] = (128, 128)  # (low, high): fixed when equal, else uniform
    output_tokens: tuple[int, int] = (128, 128)
    prompts: tuple[Prompt, ...] = ()  # from a prompts file: replaces input_tokens
    prompts_file: str = ""
    percentile: int = 99
    ttft_target_ms: float | None = None
    itl_target_ms: float | None = None
    max_error_share: float = 0.5
    gpu: str | None = None
    seed: int = 0
    schedule_us: tuple[int, ...] = field(default=(), repr=False)  # loadtest._intervals reads it: never set here

    def check(self) -> None:
        if (self.rate is None) == (self.concurrency is None):
            raise lt.LoadtestUsageError("give exactly one of --rate (requests/s, open loop) or --concurrency "
                                        "(closed loop)")  # fmt: skip
        if self.rate is not None and not (0 < self.rate <= 10_000):
            raise lt.LoadtestError(f"--rate must be in (0, 10000] requests/s, not {self.rate}")
        if self.concurrency is not None and not (1 <= self.concurrency <= lt.MAX_IN_FLIGHT):
            raise lt.LoadtestError(f"--concurrency must be 1..{lt.MAX_IN_FLIGHT}, not {self.concurrency}")
        if not (0 < self.duration_s <= lt.MAX_DURATION_S) or not (0 <= self.warmup_s <= lt.MAX_DURATION_S):
            raise lt.LoadtestError(f"--duration must be in (0, {lt.MAX_DURATION_S}] s and --warmup 0..3600 s")
        if self.max_requests is not None and self.max_requests < 1:
            raise lt.LoadtestError(f"--requests must be >= 1, not {self.max_requests}")
        if self.replicas < 1 or not (0 < self.timeout_s <= 3600):
            raise lt.LoadtestError("--replicas must be >= 1 and --timeout in (0, 3600] seconds")
        if self.protocol not in ("grpc", "http", "openai"):
            raise lt.LoadtestError(f"--protocol must be grpc, http or openai with --llm, not {self.protocol}")
        if self.arrivals not in ("poisson", "uniform"):
            raise lt.LoadtestError(f"--arrivals must be poisson or uniform, not {self.arrivals}")
        if self.percentile not in (50, 90, 95, 99):
            raise lt.LoadtestError(f"--percentile must be 50, 90, 95 or 99, not {self.percentile}")
        if not (0 < self.max_error_share <= 1):
            raise lt.LoadtestError(f"--max-error-rate must be in (0, 1], not {self.max_error_share}")
        if self.protocol == "grpc" and not lt.grpc_available():
            raise lt.LoadtestError("gRPC needs tritonclient.grpc, which does not import here; use --protocol http "
                                   "(Triton's generate_stream endpoint)")  # fmt: skip

    @property
    def arrivals_name(self) -> str:
        return self.arrivals if self.rate is not None else "closed-loop"


def parse_lengths(text: str, option: str) -> tuple[int, int]:
    """`128` (fixed) or `64:256` (uniform, both ends included), tokens in 1..MAX_TOKENS."""
    low, colon, high = text.strip().partition(":")
    try:
        bounds = (int(low), int(high if colon else low))
    except ValueError:
        bounds = (0, 0)
    if not (1 <= bounds[0] <= bounds[1] <= MAX_TOKENS):
        raise lt.LoadtestError(f"{option} {text}: a token count such as 128, or a uniform range such as 64:256 "
                               f"(1..{MAX_TOKENS:,}, low <= high)")  # fmt: skip
    return bounds


def read_prompts(path: Path) -> tuple[Prompt, ...]:
    """GenAI-Perf's input file: JSON lines of {"text": PROMPT} (or "text_input"), with an optional "output_tokens"."""
    fix = f'fix {path}: one JSON object a line, {{"text": "...", "output_tokens": 128}} (output_tokens optional)'
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise lt.LoadtestError(f"cannot read --prompts {path}: {getattr(error, 'strerror', None) or error}") from None
    prompts = []
    for number, line in enumerate(lines[: MAX_PROMPTS + 1], start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        text = item.get("text", item.get("text_input")) if isinstance(item, dict) else None
        length = item.get("output_tokens") if isinstance(item, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise lt.LoadtestError(f"--prompts line {number} has no prompt text; {fix}")
        if length is not None and not (type(length) is int and 1 <= length <= MAX_TOKENS):
            raise lt.LoadtestError(f"--prompts line {number}: output_tokens {length!r} is not 1..{MAX_TOKENS:,}; {fix}")
        prompts.append(Prompt(text, length))
    if not prompts:
        raise lt.LoadtestError(f"--prompts {path} has no prompts; {fix}")
    if len(prompts) > MAX_PROMPTS:
        raise lt.LoadtestError(f"--prompts {path} has over {MAX_PROMPTS:,} prompts: sample fewer")
    return tuple(prompts)


# ---------------------------------------------------------------- the model's interface


@dataclass(frozen=True)
class LlmInterface:
    """Which inputs of the model carry the prompt, the output length and the stream switch."""

    prompt: str
    length: str  # an integer input, or SAMPLING_INPUT
    length_datatype: str
    switches: tuple[str, ...]  # BOOL inputs set true (stream, exclude_input_in_output)
    batched: bool  # max_batch_size > 0: each tensor has a leading batch dimension of 1

    def values(self, prompt: str, output_tokens: int) -> dict[str, Any]:
        length: Any = output_tokens
        if self.length == SAMPLING_INPUT:
            length = json.dumps({"max_tokens": output_tokens, "min_tokens": output_tokens, "ignore_eos": True})
        return {self.prompt: prompt, self.length: length, **dict.fromkeys(self.switches, True)}


def _input_names(metadata: dict[str, Any]) -> dict[str, str]:
    return {spec["name"]: spec["datatype"] for spec in metadata.get("inputs", [])}


def interface(plan: LlmPlan, metadata: dict[str, Any], config: dict[str, Any]) -> LlmInterface:
    """The model's streaming interface from its metadata and config; a model that does not stream is refused."""
    decoupled = bool(config.get("model_transaction_policy", {}).get("decoupled", False))
    if not decoupled:
        raise lt.LoadtestError(
            f"model '{plan.model}' is not decoupled (its config has no model_transaction_policy {{ decoupled: true "
            "}}), so it answers each request once and does not stream tokens: drop --llm to load-test it by "
            "requests, or serve the LLM's streaming model (vLLM's or TensorRT-LLM's backend, decoupled)"
        )
    names = _input_names(metadata)
    prompt = next((n for n in PROMPT_INPUTS if names.get(n) == "BYTES"), None)
    if prompt is None:
        raise lt.LoadtestError(f"model '{plan.model}' has no BYTES prompt input named {' or '.join(PROMPT_INPUTS)} "
                               f"(its inputs: {', '.join(sorted(names)) or 'none'})")  # fmt: skip
    length = next((n for n in LENGTH_INPUTS if names.get(n, "").startswith(("INT", "UINT"))), None)
    if length is None and names.get(SAMPLING_INPUT) == "BYTES":
        length = SAMPLING_INPUT
    if length is None:
        raise lt.LoadtestError(f"model '{plan.model}' takes no output length (an integer input "
                               f"{' or '.join(LENGTH_INPUTS)}, or vLLM's {SAMPLING_INPUT}), so the output "
                               "lengths asked for cannot be sent")  # fmt: skip
    switches = tuple(n for n in TRUE_INPUTS if names.get(n) == "BOOL")
    optional = {i["name"] for i in config.get("input", []) if i.get("optional")}
    unknown = sorted(set(names) - {prompt, length, *switches} - optional)
    if unknown:
        raise lt.LoadtestError(f"model '{plan.model}' requires inputs loadtest --llm does not fill: "
                               f"{', '.join(unknown)} (mark them optional in its config.pbtxt)")  # fmt: skip
    return LlmInterface(prompt, length, names[length], switches, int(config.get("max_batch_size", 0) or 0) > 0)


def probe(plan: LlmPlan) -> LlmInterface:
    """The server is live and the model ready (loadtest's probe, its messages), then its streaming interface."""
    base = lt.Plan(url=plan.url, model=plan.model, model_version=plan.model_version, protocol=plan.protocol,
                   concurrency=1, timeout_s=min(plan.timeout_s, 600))  # fmt: skip
    lt.probe(base, streaming=True)
    control = max(base.timeout_s, lt.CONTROL_TIMEOUT_S)
    client = lt.connect(base, control)
    try:
        metadata = client.get_model_metadata(plan.model, plan.model_version, **lt._as_json(base), **lt._timeout(base, control))
        config = client.get_model_config(plan.model, plan.model_version, **lt._as_json(base), **lt._timeout(base, control))
    finally:
        client.close()
    return interface(plan, metadata, config.get("config", config))


# ---------------------------------------------------------------- requests


@dataclass
class _Stream:
    """One request's stream as the client saw it (monotonic seconds)."""

    sent: float  # when it was due: its scheduled time (open loop) or when a client took it (closed loop)
    input_tokens: int
    scheduled: bool = False  # open loop
    left: float | None = None  # when it left the client, built (the streamer stamps it)
    first: float | None = None
    last: float | None = None
    end: float | None = None
    tokens: int = 0
    error: str | None = None

    def leaving(self) -> None:
        self.left = time.monotonic()

    @property
    def origin(self) -> float:
        """What its latencies count from. Open loop: the scheduled time, so a client or server behind shows. Closed
        loop: the moment it left the client, as perf_analyzer stamps a send, not counting the client's own time
        building the request (GenAI-Perf's TTFT: from when a request is sent to its first response)."""
        return self.sent if self.scheduled or self.left is None else self.left

    def token(self, now: float) -> None:
        self.first = self.first if self.first is not None else now
        self.last = now
        self.tokens += 1


class _GrpcStreamer:
    """A gRPC client with one open stream; requests on it one at a time (the caller's thread)."""

    def __init__(self, plan: LlmPlan, shape: list[int]):
        import tritonclient.grpc as grpcclient

        self.plan, self.shape, self.module = plan, shape, grpcclient
        self.answers: queue.Queue[tuple[Any, Any, float]] = queue.Queue()
        self.client = grpcclient.InferenceServerClient(plan.url)
        self.client.start_stream(callback=lambda result, error: self.answers.put((result, error, time.monotonic())))
        self.ids = itertools.count()

    def request(self, values: dict[str, Any], datatypes: dict[str, str], stream: _Stream) -> None:
        import numpy as np

        inputs = []
        for name, value in values.items():
            item = self.module.InferInput(name, self.shape, datatypes[name])
            dtype = object if datatypes[name] == "BYTES" else lt.TRITON_DTYPES[datatypes[name]]
            item.set_data_from_numpy(np.full(self.shape, value, dtype=dtype))
            inputs.append(item)
        request_id = str(next(self.ids))
        stream.leaving()
        self.client.async_stream_infer(self.plan.model, inputs, model_version=self.plan.model_version,
                                       request_id=request_id, enable_empty_final_response=True)  # fmt: skip
        deadline = stream.sent + self.plan.timeout_s
        while True:
            try:
                result, error, at = self.answers.get(timeout=max(0.001, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no end of stream within {self.plan.timeout_s:g} s (--timeout)") from None
            if error is not None:
                raise error
            response = result.get_response()
            if response.outputs:
                stream.token(at)
            final = response.parameters.get("triton_final_response")
            if final is not None and final.bool_param:
                stream.end = at
                return

    def close(self) -> None:
        self.client.stop_stream()
        self.client.close()


class _OpenAiStreamer:
    """An OpenAI-compatible frontend's /v1/completions with stream true (Triton's OpenAI frontend, vLLM's server):
    server-sent events of completion chunks, `data: [DONE]` last. A chunk with text is a token; a final usage block
    (where the server sends one) gives the exact output token count."""

    def __init__(self, plan: LlmPlan):
        self.plan = plan
        self.address = _address(plan.url)

    def request(self, values: dict[str, Any], datatypes: dict[str, str], stream: _Stream) -> None:
        body = {"model": self.plan.model, "prompt": values["prompt"], "max_tokens": values["max_tokens"], "stream": True}

        def on_chunk(chunk: dict[str, Any]) -> None:
            if any(choice.get("text") for choice in chunk.get("choices") or []):
                stream.token(time.monotonic())
            usage = chunk.get("usage") or {}
            if isinstance(usage.get("completion_tokens"), int) and stream.tokens:
                stream.tokens = usage["completion_tokens"]

        _read_events(self.plan, self.address, "/v1/completions", body, stream, on_chunk, {"Accept": "text/event-stream"})

    def close(self) -> None:
        return None


def _read_events(
    plan: LlmPlan,
    address: tuple[str, int],
    path: str,
    body: dict[str, Any],
    stream: _Stream,
    on_event: Callable[[dict[str, Any]], None],
    headers: dict[str, str] | None = None,
) -> None:
    """POST `body` as JSON and hand each server-sent event's JSON to `on_event` until the stream ends (the answer
    ends, or OpenAI's `data: [DONE]`), which stamps `stream.end`. A non-200 answer or an event with an error raises
    OSError; no end by the stream's send time + --timeout raises TimeoutError."""
    deadline = stream.sent + plan.timeout_s
    connection = http.client.HTTPConnection(*address, timeout=plan.timeout_s)
    try:
        stream.leaving()
        connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        if response.status != 200:
            raise OSError(f"HTTP {response.status}: {response.read(300).decode(errors='replace')}")
        while time.monotonic() < deadline:
            line = response.readline()
            if not line or line.strip() == b"data: [DONE]":
                stream.end = time.monotonic()
                return
            if not line.startswith(b"data:"):
                continue
            event = json.loads(line[5:])
            if "error" in event:
                raise OSError(str(event["error"]))
            on_event(event)
        raise TimeoutError(f"no end of stream within {plan.timeout_s:g} s (--timeout)")
    finally:
        connection.close()


def _address(url: str) -> tuple[str, int]:
    host, _, port = url.rpartition(":")
    return (host or url, int(port) if port.isdigit() else 8000)


def openai_probe(plan: LlmPlan) -> LlmInterface:
    """The frontend answers /v1/models and serves the model; its interface is OpenAI's (prompt, max_tokens)."""
    connection = http.client.HTTPConnection(*_address(plan.url), timeout=min(plan.timeout_s, lt.CONTROL_TIMEOUT_S))
    try:
        connection.request("GET", "/v1/models")
        response = connection.getresponse()
        listed = json.loads(response.read()) if response.status == 200 else None
    except (OSError, ValueError) as error:
        raise lt.LoadtestError(f"no OpenAI-compatible frontend answers at {plan.url}: {lt._describe(error)}") from None
    finally:
        connection.close()
    names = sorted(m.get("id", "?") for m in (listed or {}).get("data", []) if isinstance(m, dict))
    if listed is None:
        raise lt.LoadtestError(f"{plan.url}/v1/models did not answer 200: is it an OpenAI-compatible frontend?")
    if plan.model not in names:
        raise lt.LoadtestError(f"the frontend at {plan.url} does not serve '{plan.model}'; it serves: "
                               f"{', '.join(names) or 'none'}")  # fmt: skip
    return LlmInterface("prompt", "max_tokens", "INT32", (), False)


class _HttpStreamer:
    """Triton's HTTP generate_stream endpoint: a POST whose answer is server-sent events, one per response."""

    def __init__(self, plan: LlmPlan):
        self.plan = plan
        self.address = _address(plan.url)
        version = f"/versions/{plan.model_version}" if plan.model_version else ""
        self.path = f"/v2/models/{plan.model}{version}/generate_stream"

    def request(self, values: dict[str, Any], datatypes: dict[str, str], stream: _Stream) -> None:
        _read_events(self.plan, self.address, self.path, values, stream, lambda _event: stream.token(time.monotonic()))

    def close(self) -> None:
        return None


STREAMERS: dict[str, Callable[[LlmPlan, list[int]], Any]] = {
    "grpc": _GrpcStreamer,
    "http": lambda plan, _shape: _HttpStreamer(plan),
    "openai": lambda plan, _shape: _OpenAiStreamer(plan),
}


# ---------------------------------------------------------------- the run


class _Requests:
    """Every request's stream, and how many sends were late (open loop), under one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.streams: list[_Stream] = []
        self.late: list[float] = []
        self.samples: list[str] = []

    def add(self, stream: _Stream) -> None:
        with self.lock:
            self.streams.append(stream)

    def failed(self, stream: _Stream, error: BaseException) -> None:
        text = lt._describe(error)
        with self.lock:
            stream.error, stream.end = text, time.monotonic()
            if len(self.samples) < lt.ERROR_SAMPLES and text not in self.samples:
                self.samples.append(text)

    def counts(self) -> tuple[int, int, int]:
        with self.lock:
            ended = [s for s in self.streams if s.end is not None]
            return len(self.streams), len(ended), sum(1 for s in ended if s.error)


def _workload(plan: LlmPlan) -> Callable[[], tuple[str, int, int]]:
    """Draws (prompt, input tokens, output tokens) for each request from the plan's distributions."""
    import numpy as np

    rng = np.random.default_rng(plan.seed)
    lock = threading.Lock()
    cycle = itertools.cycle(plan.prompts)

    def draw() -> tuple[str, int, int]:
        with lock:
            output = int(rng.integers(plan.output_tokens[0], plan.output_tokens[1] + 1))
            if plan.prompts:
                prompt = next(cycle)
                return prompt.text, len(prompt.text.split()), prompt.output_tokens or output
            words = int(rng.integers(plan.input_tokens[0], plan.input_tokens[1] + 1))
            picks = rng.integers(0, len(WORDS), size=words)
        return " ".join(WORDS[i] for i in picks), words, output

    return draw


def run(plan: LlmPlan, progress: Callable[[float, int], None] | None = None, stop: threading.Event | None = None) -> LlmLoadtestResult:
    """Probe, warm up, then stream requests until the duration, the request count, the error-rate gate or `stop`
    ends the sending; requests in flight then finish (within --timeout). `progress(elapsed_s, done)`."""
    plan.check()
    stop = stop or threading.Event()
    try:
        model = call_within(min(plan.timeout_s, 600), lambda: (openai_probe if plan.protocol == "openai" else probe)(plan))
    except DeadlineExceeded:
        raise lt.LoadtestError(f"the Triton server at {plan.url} did not answer the probe within "
                               f"{min(plan.timeout_s, 600):g} s") from None  # fmt: skip
    datatypes = {model.prompt: "BYTES", model.length: model.length_datatype, **dict.fromkeys(model.switches, "BOOL")}
    shape = [1, 1] if model.batched else [1]
    draw = _workload(plan)
    local = threading.local()
    streamers: list[Any] = []
    streamers_lock = threading.Lock()
    record = _Requests()
    gate: list[str] = []
    halt = threading.Event()

    def queued(sent: float) -> tuple[_Stream, str, int]:
        """A request counted from the moment it is due (so the drain below waits for it), with its lengths."""
        prompt, input_tokens, output_tokens = draw()
        stream = _Stream(sent, input_tokens, scheduled=plan.rate is not None)
        record.add(stream)
        return stream, prompt, output_tokens

    def send(stream: _Stream, prompt: str, output_tokens: int) -> bool:
        if plan.rate is not None and time.monotonic() - stream.sent > lt.LATE_S:
            with record.lock:
                record.late.append(stream.sent)
        try:
            streamer = getattr(local, "streamer", None)
            if streamer is None:
                streamer = local.streamer = STREAMERS[plan.protocol](plan, shape)
                with streamers_lock:
                    streamers.append(streamer)
            streamer.request(model.values(prompt, output_tokens), datatypes, stream)
            if stream.tokens == 0:
                raise OSError("the stream ended without a token")
            return True
        except Exception as error:  # the server's answer is a data point, not a crash
            record.failed(stream, error)
            broken = getattr(local, "streamer", None)
            if broken is not None:  # a stream in an unknown state is not reused
                local.streamer = None
                try:
                    broken.close()
                except Exception:
                    pass
            return False

    started_at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    start = time.monotonic()
    measure_start = start + plan.warmup_s
    deadline = measure_start + plan.duration_s
    limit = plan.max_requests or math.inf

    def tick() -> None:
        sent, done, failures = record.counts()
        if progress:
            progress(time.monotonic() - start, done)
        if done >= lt.GATE_MIN_REQUESTS and failures / done > plan.max_error_share and not gate:
            gate.append(f"stopped early: {failures} of {done} requests failed (> {plan.max_error_share:.0%}, "
                        "--max-error-rate)")  # fmt: skip
            halt.set()

    def stopping() -> bool:
        return halt.is_set() or stop.is_set()

    workers = plan.concurrency or min(lt.MAX_IN_FLIGHT, max(4, math.ceil(plan.rate * plan.timeout_s)))  # type: ignore[operator]
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="loadtest-llm")
    ended: list[float] = []
    try:
        if plan.rate is not None:
            gaps = lt._intervals(plan)  # type: ignore[arg-type]
            scheduled = ticked = start
            sent_count = 0
            while sent_count < limit and not stopping() and scheduled < deadline - 1e-9:
                now = time.monotonic()
                if now - ticked >= 0.05:
                    tick()
                    ticked = now
                if scheduled > now:
                    halt.wait(min(scheduled - now, 0.05))
                    continue
                executor.submit(send, *queued(scheduled))
                sent_count += 1
                scheduled += next(gaps)
            ended.append(deadline if scheduled >= deadline - 1e-9 else min(time.monotonic(), deadline))
        else:
            take_lock = threading.Lock()
            taken = [0]

            def take() -> tuple[_Stream, str, int] | None:
                with take_lock:
                    now = time.monotonic()
                    if taken[0] >= limit or now >= deadline or stopping():
                        if not ended:
                            ended.append(min(now, deadline))
                        return None
                    taken[0] += 1
                    return queued(now)

            def loop() -> None:
                backoff = lt.BACKOFF_S[0]
                while (request := take()) is not None:
                    if not send(*request):
                        halt.wait(backoff)  # a failed request is not resent at once: the client must not flood
                        backoff = min(lt.BACKOFF_S[1], backoff * 2)
                    else:
                        backoff = lt.BACKOFF_S[0]

            futures = [executor.submit(loop) for _ in range(plan.concurrency or 1)]
            while not all(f.done() for f in futures) and time.monotonic() < deadline + plan.timeout_s:
                halt.wait(0.05)
                tick()
        hard_deadline = max(time.monotonic(), deadline) + plan.timeout_s
        while time.monotonic() < hard_deadline and record.counts()[1] < record.counts()[0]:
            time.sleep(0.05)
            tick()
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
    with record.lock:
        for stream in record.streams:
            if stream.end is None:
                stream.error = stream.error or f"still streaming {plan.timeout_s:g} s after the test's end: abandoned"
                stream.end = time.monotonic()
    tick()
    for streamer in streamers:
        try:
            streamer.close()
        except Exception:
            pass
    measure_end = ended[0] if ended else min(time.monotonic(), deadline)
    return _result(plan, record, started_at, measure_start, measure_end, gate)


def _latency(values: list[float]) -> Latency:
    ordered = sorted(values)
    return Latency(**{f"p{q}": _round(lt.percentile(ordered, q)) for q in (50, 90, 95, 99)},
                   max=_round(ordered[-1] if ordered else None))  # fmt: skip


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _distribution(low: int, high: int) -> str:
    return f"fixed {low}" if low == high else f"uniform {low}..{high}"


def _result(plan: LlmPlan, record: _Requests, started_at: str, begin: float, sending_end: float, gate: list[str]) -> LlmLoadtestResult:
    with record.lock:
        measured = [s for s in record.streams if begin <= s.sent < sending_end]
        late = sum(1 for s in record.late if begin <= s < sending_end)
    good = [s for s in measured if s.error is None and s.first is not None]
    end = max([sending_end, begin + 1e-6, *(s.end for s in good if s.end is not None)])
    elapsed = end - begin
    ttft = [(s.first - s.origin) * 1000 for s in good]  # type: ignore[operator]
    e2e = [(s.end - s.origin) * 1000 for s in good]  # type: ignore[operator]
    itl_of = {id(s): (s.last - s.first) * 1000 / (s.tokens - 1) for s in good if s.tokens > 1}  # type: ignore[operator]
    output = sum(s.tokens for s in good)
    errors = sum(1 for s in measured if s.error is not None)
    per_second = len(good) / elapsed if measured else 0.0

    def meets(s: _Stream) -> bool:
        first_ok = plan.ttft_target_ms is None or (s.first - s.origin) * 1000 <= plan.ttft_target_ms  # type: ignore[operator]
        itl_ok = plan.itl_target_ms is None or itl_of.get(id(s), 0.0) <= plan.itl_target_ms
        return first_ok and itl_ok

    met = sum(1 for s in good if meets(s))
    offered = len(measured) / (sending_end - begin) if plan.rate is not None and sending_end > begin else None
    reasons = saturation_reasons(offered, per_second, len(measured), errors) + gate
    if measured and late > max(2, lt.LATE_SHARE * len(measured)):
        reasons.append(f"{late} of {len(measured)} requests started over {lt.LATE_S * 1000:g} ms after their "
                       f"scheduled time: the client fell behind")  # fmt: skip
    inputs = _distribution(*plan.input_tokens) if not plan.prompts else f"prompts file {plan.prompts_file}"
    return LlmLoadtestResult(
        model=plan.model, modelVersion=plan.model_version, gpu=plan.gpu, url=plan.url, protocol=plan.protocol,  # type: ignore[arg-type]
        mode="rate" if plan.rate is not None else "concurrency", offeredRate=plan.rate, concurrency=plan.concurrency,
        arrivals=plan.arrivals_name, replicas=plan.replicas, startedAt=started_at, warmupS=plan.warmup_s,  # type: ignore[arg-type]
        durationS=round(elapsed, 3), requests=len(measured), succeeded=len(good), errors=errors,
        errorSamples=list(record.samples),
        inputTokens=Lengths(distribution=inputs, mean=_round(sum(s.input_tokens for s in good) / len(good)) if good else None),
        outputTokens=Lengths(distribution=_distribution(*plan.output_tokens), mean=_round(output / len(good)) if good else None),
        ttftMs=_latency(ttft), ttftMinMs=_round(min(ttft, default=None)), itlMs=_latency(list(itl_of.values())),
        e2eMs=_latency(e2e),
        latencyMeasuredFrom="scheduled send time (open loop)" if plan.rate is not None else "send time (closed loop)",
        requestsPerSecond=round(per_second, 3), outputTokensPerSecond=round(output / elapsed, 3),
        totalTokensPerSecond=round((output + sum(s.input_tokens for s in good)) / elapsed, 3),
        percentile=plan.percentile,  # type: ignore[arg-type]
        goodput=Goodput(ttftTargetMs=plan.ttft_target_ms, itlTargetMs=plan.itl_target_ms,
                        requestsPerSecond=round(met / elapsed, 3), share=round(met / len(measured), 4) if measured else 0.0),
        saturation=Saturation(saturated=bool(reasons), reasons=reasons),
    )  # fmt: skip
