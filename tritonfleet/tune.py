"""`tritonfleet tune`: a configuration search on a running tritonserver, as Model Analyzer does it.

For each candidate (instance count x max_batch_size x dynamic batcher queue delay and preferred sizes), the model is
reloaded with that configuration through Triton's load API (a config override: the repository is not touched, the
server must run in explicit model-control mode), then a loadtest sweep under Poisson arrivals finds its capacity
within the latency target. The winner is the candidate with the most capacity (fewer instances on a tie: less GPU
memory); it is written as a config.pbtxt patch and a loadtest result sizing reads. The model is reloaded with the
configuration it had at the end, whatever happened.

Candidates whose instances would not fit the GPU's memory (`--gpu` from the catalog, `--instance-memory-gib` as
measured for one instance) are not tried.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tritonfleet.core.loadtest_result import LoadtestResult
from tritonfleet.loadtest import CONTROL_TIMEOUT_S, LoadtestError, LoadtestUsageError, Plan, connect, sweep

MAX_CANDIDATES = 32


@dataclass(frozen=True)
class Candidate:
    instances: int
    max_batch_size: int | None = None  # None: the model's own
    queue_delay_us: int | None = None  # None: the model's own dynamic batcher (or none)
    preferred: tuple[int, ...] = ()

    def describe(self) -> str:
        parts = [f"{self.instances} instance{'s' if self.instances != 1 else ''}"]
        if self.max_batch_size is not None:
            parts.append(f"max_batch_size {self.max_batch_size}")
        if self.queue_delay_us is not None:
            parts.append(f"queue delay {self.queue_delay_us} us")
        if self.preferred:
            parts.append(f"preferred {list(self.preferred)}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Trial:
    candidate: Candidate
    result: LoadtestResult | None  # None: the candidate did not load
    error: str = ""

    @property
    def capacity(self) -> float:
        return self.result.capacity.achieved_inferences_per_second if self.result and self.result.capacity else 0.0


def candidates(
    instances: Sequence[int], max_batch_sizes: Sequence[int | None], queue_delays_us: Sequence[int | None],
    preferred: Sequence[int] = (),
) -> list[Candidate]:
    """Every combination; a queue delay (dynamic batching) only with a max_batch_size that batches."""
    if not instances or min(instances) < 1:
        raise LoadtestError("--instances: counts of 1 or more, e.g. 1,2,4")
    found = []
    for count, batch, delay in itertools.product(instances, max_batch_sizes, queue_delays_us):
        if delay is not None and batch == 0:
            continue
        sizes = tuple(p for p in preferred if batch is None or p <= batch) if delay is not None else ()
        found.append(Candidate(count, batch, delay, sizes))
    if not found:
        raise LoadtestUsageError("no candidate: a queue delay needs a max_batch_size above 0")
    if len(found) > MAX_CANDIDATES:
        raise LoadtestUsageError(f"{len(found)} candidates: at most {MAX_CANDIDATES} (each is a sweep); narrow the "
                                 "--instances, --max-batch-sizes or --queue-delays-us lists")  # fmt: skip
    return found


def within_memory(found: list[Candidate], gpu_memory_gib: float | None, instance_gib: float | None,
                  gpus: int = 1) -> tuple[list[Candidate], list[str]]:  # fmt: skip
    """The candidates whose instances fit the GPUs' memory, and a note per one left out."""
    if gpu_memory_gib is None or instance_gib is None:
        return found, []
    most = int(gpu_memory_gib * gpus // instance_gib)
    kept = [c for c in found if c.instances <= most]
    notes = [f"{c.describe()}: {c.instances} x {instance_gib:g} GiB > {gpu_memory_gib * gpus:g} GiB of GPU memory"
             for c in found if c.instances > most]  # fmt: skip
    if not kept:
        raise LoadtestError(f"no candidate fits: at most {most} instance(s) of {instance_gib:g} GiB fit "
                            f"{gpu_memory_gib * gpus:g} GiB of GPU memory; use --instances up to {most}")  # fmt: skip
    return kept, notes


def apply(config: dict[str, Any], candidate: Candidate) -> dict[str, Any]:
    """The model's configuration (Triton's JSON form) with the candidate's settings."""
    changed = json.loads(json.dumps(config))
    groups = changed.get("instance_group") or [{"kind": "KIND_AUTO"}]
    changed["instance_group"] = [{**group, "count": candidate.instances} for group in groups]
    if candidate.max_batch_size is not None:
        changed["max_batch_size"] = candidate.max_batch_size
    if candidate.queue_delay_us is not None:
        batching = dict(changed.get("dynamic_batching") or {})
        batching["max_queue_delay_microseconds"] = candidate.queue_delay_us
        batching["preferred_batch_size"] = list(candidate.preferred)
        changed["dynamic_batching"] = batching
    return changed


def patch_text(candidate: Candidate, trials: Sequence[Trial], target_ms: float, percentile: int) -> str:
    """The winner as config.pbtxt fields, with every trial's capacity in the comment above them."""
    lines = [f"# tritonfleet tune: the most inferences/s within p{percentile} <= {target_ms:g} ms, per candidate:"]
    lines += [f"#   {t.candidate.describe()}: " + (f"{t.capacity:,.1f}/s" if t.result else f"did not load ({t.error})")
              for t in trials]  # fmt: skip
    lines.append(f"instance_group [ {{ count: {candidate.instances} }} ]  # keep the kind and gpus of your config")
    if candidate.max_batch_size is not None:
        lines.append(f"max_batch_size: {candidate.max_batch_size}")
    if candidate.queue_delay_us is not None:
        preferred = f" preferred_batch_size: [ {', '.join(map(str, candidate.preferred))} ]" if candidate.preferred else ""
        lines.append(f"dynamic_batching {{ max_queue_delay_microseconds: {candidate.queue_delay_us}{preferred} }}")
    return "\n".join(lines) + "\n"


def _load(plan: Plan, config: dict[str, Any]) -> None:
    from tritonclient.utils import InferenceServerException

    client = connect(plan, max(plan.timeout_s, CONTROL_TIMEOUT_S))
    try:
        client.load_model(plan.model, config=json.dumps(config))
    except InferenceServerException as error:
        text = str(error).strip().splitlines()[0][:300] if str(error).strip() else type(error).__name__
        if "explicit" in text or "polling is enabled" in text.lower():
            raise LoadtestError(f"the server refuses to reload '{plan.model}': run tritonserver with "
                                "--model-control-mode=explicit for tune") from None  # fmt: skip
        raise LoadtestError(text) from None
    finally:
        client.close()


def model_config(plan: Plan) -> dict[str, Any]:
    client = connect(plan, max(plan.timeout_s, CONTROL_TIMEOUT_S))
    try:
        config = client.get_model_config(plan.model, plan.model_version)
    except Exception as error:
        raise LoadtestError(f"cannot read the config of '{plan.model}' on {plan.url}: {error}") from None
    finally:
        client.close()
    return config.get("config", config)


def tune(
    plan: Plan, found: Sequence[Candidate], limit: float, progress: Callable[[str], None] | None = None
) -> list[Trial]:
    """Sweep every candidate; the model's repository configuration is reloaded at the end."""
    if plan.latency_target_ms is None:
        raise LoadtestUsageError("tune needs a latency target: add --latency-target 50ms (the deployment's "
                                 "latencyTarget)")  # fmt: skip
    if plan.protocol != "http":
        raise LoadtestUsageError("tune reloads the model over HTTP: give the HTTP endpoint (--protocol http)")
    original = model_config(plan)
    trials = []
    try:
        for candidate in found:
            if progress:
                progress(candidate.describe())
            try:
                _load(plan, apply(original, candidate))
            except LoadtestError as error:
                trials.append(Trial(candidate, None, str(error)))
                continue
            step = dataclasses.replace(plan, batch_size=1) if candidate.max_batch_size == 0 else plan

            def point(at: str, described: str = candidate.describe()) -> None:
                if progress:
                    progress(f"{described}: {at}")

            trials.append(Trial(candidate, sweep(step, limit, point)))
    finally:
        # Back to the configuration the model had (a load without an override keeps the last one while the
        # repository's files are unchanged, as seen on the real tritonserver).
        _load(plan, original)
    return trials


def winner(trials: Sequence[Trial]) -> Trial | None:
    """The most capacity; fewer instances, then the smaller batch, on a tie."""
    measured = [t for t in trials if t.capacity > 0]
    return max(measured, key=lambda t: (round(t.capacity, 1), -t.candidate.instances, -(t.candidate.max_batch_size or 0)),
               default=None)  # fmt: skip
