"""The plan's sizing: each deployment's per-replica capacity (measured, stated), the sizing section of the plan
document, and the config problems when the configured bounds cannot carry the target load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tritonfleet.core.config import ConfigError, Problem, StackConfig
from tritonfleet.core.config.problems import set_command
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.llm_loadtest_result import is_llm_result, read_llm_result, usable_token_capacity
from tritonfleet.core.loadtest_result import Refused, ResultError, read_result, usable_capacity
from tritonfleet.core.sizing import POINTS, TOKENS, Capacity, StackSizing, size_stack
from tritonfleet.core.strict_json import StrictJsonError, read_json


class SizingError(Exception):
    """Sizing inputs that cannot be read (reported as config problems where a key is to blame)."""


def deployment_capacities(config: StackConfig, project_dir: Path) -> dict[str, Capacity | None]:
    """Per deployment: the measured capacity (its loadtest result) where given, else the stated throughputPerReplica.

    Raises ConfigError naming `tritonDeployments[i].loadtestResult...` for a missing, unreadable or mismatched result.
    """
    capacities: dict[str, Capacity | None] = {}
    problems: list[Problem] = []
    for i, d in enumerate(config.triton_deployments):
        at = f"tritonDeployments[{i}].loadtestResult"
        capacity = None
        if d.loadtest_result is not None:
            ref = d.loadtest_result
            path = Path(ref.path) if Path(ref.path).is_absolute() else project_dir / ref.path
            if _is_llm_file(path):
                token_capacity = _token_capacity(config, d, path, at, problems)
                if token_capacity is not None:
                    capacities[d.name] = token_capacity
                continue
            try:
                result = read_result(path)
            except ResultError as error:
                problems.append(Problem(f"{at}.path", ref.path, f"a readable `tritonfleet loadtest --json` result: {error}",
                                        _sweep_fix(ref.model, d.latency_target, ref.path)))
                continue
            if result.model != ref.model:
                problems.append(Problem(
                    f"{at}.path", ref.path,
                    f"a result for model '{ref.model}' (the deployment's model); this file measured '{result.model}'",
                    _sweep_fix(ref.model, d.latency_target, ref.path),
                ))  # fmt: skip
                continue
            target_ms = latency_ms(d.latency_target) if d.latency_target else None
            try:
                usable = usable_capacity(result, target_ms)
            except Refused as refused:
                problems.append(Problem(
                    f"{at}.path", ref.path,
                    "a measurement that met its latency target without saturating or failing; this one cannot be "
                    "sized on: " + "; ".join(refused.reasons),
                    _sweep_fix(ref.model, d.latency_target, ref.path),
                ))  # fmt: skip
                continue
            capacity = Capacity(
                usable.inferences_per_second,
                "measured",
                f"loadtest {ref.path} ({result.model}, {result.started_at[:10]}, {result.protocol}, "
                f"{result.arrivals or 'uniform'} arrivals, {usable.at}, p{usable.percentile} {usable.latency_ms:g} ms)",
                usable.latency_ms,
                result.arrivals or "uniform",
                bool(result.curve),
            )
        elif d.throughput_per_replica is not None:
            capacity = Capacity(d.throughput_per_replica, "stated", f"tritonDeployments[{i}].throughputPerReplica")
        capacities[d.name] = capacity
    if problems:
        raise ConfigError(config.stack, problems)
    return capacities


def _is_llm_file(path: Path) -> bool:
    try:
        return is_llm_result(read_json(path))
    except StrictJsonError:
        return False  # read_result reports it


def _llm_fix(d: Any, path: str) -> str:
    llm = d.llm
    targets = f" --ttft-target {llm.ttft_target}" if llm else ""
    targets += f" --itl-target {llm.itl_target}" if llm and llm.itl_target else ""
    return f"tritonfleet loadtest --llm --model {d.loadtest_result.model} --gpu <GPU>{targets} --json {path}"


def _token_capacity(config: StackConfig, d: Any, path: Path, at: str, problems: list[Problem]) -> Capacity | None:
    """An LLM deployment's capacity in output tokens/s per replica from a `loadtest --llm` result: the deployment's
    model, the pool's GPU, and within the llm block's TTFT and ITL targets; else a problem with the command."""
    ref = d.loadtest_result
    fix = _llm_fix(d, ref.path)
    try:
        result = read_llm_result(path)
    except ResultError as error:
        problems.append(Problem(f"{at}.path", ref.path, f"a readable `tritonfleet loadtest --llm` result: {error}", fix))
        return None
    if d.llm is None:
        problems.append(Problem(f"{at}.path", ref.path, "a `tritonfleet loadtest` result: this one is in tokens "
                                "(--llm), and the deployment declares no llm block", fix))  # fmt: skip
        return None
    gpu = config.instance_type(config.pool(d.pool)).gpu
    wrong = []
    if result.model != ref.model:
        wrong.append(f"it measured model '{result.model}', the deployment serves '{ref.model}'")
    if result.gpu is None:
        wrong.append(f"it does not say which GPU served it (--gpu); the deployment runs on {gpu}")
    elif result.gpu.lower() != gpu.lower():
        wrong.append(f"it was measured on {result.gpu}, the deployment runs on {gpu}")
    if wrong:
        problems.append(Problem(f"{at}.path", ref.path, "a profile of this model on this GPU: " + "; ".join(wrong),
                                fix.replace("<GPU>", gpu)))  # fmt: skip
        return None
    itl = latency_ms(d.llm.itl_target) if d.llm.itl_target else None
    try:
        usable = usable_token_capacity(result, latency_ms(d.llm.ttft_target), itl)
    except Refused as refused:
        problems.append(Problem(
            f"{at}.path", ref.path,
            "a measurement within the llm block's ttftTarget and itlTarget, unsaturated and almost without errors; "
            "this one cannot be sized on: " + "; ".join(refused.reasons), fix.replace("<GPU>", gpu),
        ))  # fmt: skip
        return None
    return Capacity(
        usable.output_tokens_per_second, "measured",
        f"loadtest --llm {ref.path} ({result.model} on {result.gpu}, {result.started_at[:10]}, {result.protocol}, "
        f"{result.arrivals} arrivals, {usable.at}, TTFT p{usable.percentile} {usable.ttft_ms:g} ms, ITL "
        f"p{usable.percentile} {usable.itl_ms:g} ms)",
        # No p99 against latencyTarget: TTFT and ITL were held to the llm block's targets above.
        None, result.arrivals, False, TOKENS, usable.mean_input_tokens, usable.mean_output_tokens,
    )  # fmt: skip


def with_measured_capacities(config: StackConfig, project_dir: Path) -> StackConfig:
    """The config with each deployment's measured capacity known, so its HPA target and the autoscaling rules use
    the measurement (as sizing does) rather than only throughputPerReplica. Raises ConfigError as
    deployment_capacities does."""
    capacities = deployment_capacities(config, project_dir)
    deployments = []
    for d in config.triton_deployments:
        capacity = capacities.get(d.name)
        d = d.model_copy()
        if capacity is not None and capacity.kind == "measured" and capacity.unit != TOKENS:  # the HPA counts inferences
            d._measured_capacity = capacity.inferences_per_second
        elif capacity is not None and capacity.kind == "measured" and _requests_are_its_load_signal(d):
            # requests/s at the measured point, in the profile's mix of output lengths (one inference a request)
            d._measured_capacity = capacity.inferences_per_second / (capacity.mean_output_tokens or 1)
        deployments.append(d)
    return config.model_copy(update={"triton_deployments": deployments})


def _requests_are_its_load_signal(d: Any) -> bool:
    """An LLM whose layout exports no sequence count (TensorRT-LLM's LLM API model): its HPA's only load signal is the
    request rate, so a `loadtest --llm` profile gives it one. Where sequences are exported they carry the load, and a
    request rate in the profile's mix of lengths would only add a second, mix-dependent signal."""
    from tritonfleet.core.llm_exports import serving_layout
    from tritonfleet.monitoring.autoscaling import LLM_SIGNALS, SEQUENCES

    return d.llm is not None and SEQUENCES not in LLM_SIGNALS[serving_layout(d.llm)]


def _sweep_fix(model: str, latency_target: str | None, path: str) -> str:
    """The command that measures a capacity sizing can use: a sweep under the deployment's latency target."""
    return f"tritonfleet loadtest --model {model} --sweep --latency-target {latency_target or '<ms>'} --json {path}"


def check_sizing(config: StackConfig, sizing: StackSizing) -> None:
    """Fail with the numbers when maxReplicas or a pool's maxNodes cannot carry a deployment's target load."""
    problems = [
        Problem(f.key, f.value, f.message, set_command(f.key, f.suggestion, config.stack)) for f in sizing.blocking
    ]
    if problems:
        raise ConfigError(config.stack, problems)


def latency_findings(config: StackConfig, capacities: dict[str, Capacity | None]) -> list[dict[str, Any]]:
    """Measurements whose latency says less than it seems: arrivals other than Poisson (a fixed interval or a
    closed loop queues less than independent clients do, so its p99 is optimistic), or no latency target to hold
    the measurement against."""
    findings = []
    for i, d in enumerate(config.triton_deployments):
        ref, capacity = d.loadtest_result, capacities.get(d.name)
        if ref is None or capacity is None:
            continue
        if capacity.unit == TOKENS:  # held to the llm block's TTFT/ITL targets; one load point is its measurement
            if capacity.arrivals != "poisson":
                findings.append({
                    "key": f"tritonDeployments[{i}].loadtestResult.path",
                    "message": f"measured with {capacity.arrivals} arrivals: independent users (Poisson arrivals) "
                    "queue more, so production's TTFT is higher; rerun with --rate and " + _llm_fix(d, ref.path),
                })  # fmt: skip
            continue
        if d.latency_target is None:
            findings.append({
                "key": f"tritonDeployments[{i}].latencyTarget",
                "message": "no latency target: the measured capacity is checked for saturation and errors only; set "
                "latencyTarget (e.g. 50ms) and measure with `tritonfleet loadtest --sweep`",
            })  # fmt: skip
        elif capacity.arrivals != "poisson":
            findings.append({
                "key": f"tritonDeployments[{i}].loadtestResult.path",
                "message": f"measured with {capacity.arrivals} arrivals: independent clients (Poisson "
                "arrivals) queue more, so production's p99 is higher; rerun with " + _sweep_fix(ref.model, d.latency_target, ref.path),
            })  # fmt: skip
        elif not capacity.swept:
            findings.append({
                "key": f"tritonDeployments[{i}].loadtestResult.path",
                "message": "measured at one load point: the capacity is at least "
                f"{capacity.inferences_per_second:,.0f}/s per replica; a sweep finds the most within the target: "
                + _sweep_fix(ref.model, d.latency_target, ref.path),
            })  # fmt: skip
    return findings


def _money(value: float | None, digits: int) -> float | str:
    return "unknown" if value is None else round(value, digits)


def sizing_section(config: StackConfig, capacities: dict[str, Capacity | None], sizing: StackSizing) -> dict[str, Any]:
    """The plan document's `sizing` section: deterministic, so `tritonfleet diff` can show the change of $/1M."""
    deployments = []
    for d, sized in zip(config.triton_deployments, sizing.deployments, strict=True):
        capacity = sized.capacity
        target = d.target_load
        deployments.append({
            "deployment": d.name,
            "pool": d.pool,
            "capacity": "not given" if capacity is None else {
                ("outputTokensPerSecond" if capacity.unit == TOKENS else "inferencesPerSecond"):
                    round(capacity.inferences_per_second, 3),
                "kind": capacity.kind,
                "source": capacity.source,
            },
            "targetLoad": "not given" if target is None else {
                "peak": target.peak, "average": target.average if target.average is not None else "not given",
                "unit": target.unit, "inferencesPerRequest": target.inferences_per_request,
                **{k: v for k, v in (("inputTokens", target.input_tokens), ("outputTokens", target.output_tokens))
                   if v is not None},
            },
            "latencyTarget": d.latency_target or "not given",
            "replicas": sized.replicas,
            "usdPerHour": {p: _money(sized.usd_per_hour.get(p), 4) for p in POINTS},
            "usdPer1M": {
                p: _per_million(sized.usd_per_million(p), sized, p) for p in ("average", "peak")
            },
            **_tokens(d, sized),
        })  # fmt: skip
    pools = []
    for p in sizing.pools:
        entry: dict[str, Any] = {
            "pool": p.pool,
            "instanceType": p.instance_type,
            "gpusPerNode": p.gpus_per_node,
            "usdPerNodeHour": {o: _money(v, 4) for o, v in p.prices.items()},
            "assumedPrices": list(p.assumed),
        }
        for point, at_load in p.points.items():
            entry[point] = {
                "nodes": at_load.nodes,
                "purchase": at_load.purchase,
                "gpusUsed": at_load.gpus_used,
                "gpusPaid": at_load.gpus_paid,
                "idleGpus": at_load.idle_gpus,
                "usdPerHour": _money(at_load.usd_per_hour, 4),
            }
            if point != "minimum":  # the minimum serves whatever load arrives: no stated rate to divide by
                served = at_load.inferences_per_second
                entry[point]["usdPer1M"] = "not given" if served is None else _money(at_load.usd_per_million, 6)
        pools.append(entry)
    findings = [{"key": f.key, "message": f.message} for f in sizing.findings if not f.blocking]
    findings += latency_findings(config, capacities)
    return {
        "headroom": sizing.headroom,
        "idleGpuWarnFraction": config.sizing.idle_gpu_warn_fraction,
        "basis": "whole nodes at the load point, each purchase option at its price; idle GPUs are paid",
        "deployments": deployments,
        "pools": pools,
        "findings": findings,
    }


def _tokens(d: Any, sized: Any) -> dict[str, Any]:
    """An LLM deployment sized in tokens: usdPer1M is per 1M output tokens; its tokens/s at min and max replicas
    (at the TTFT/ITL targets, before headroom), and whether max replicas carry the peak."""
    capacity = sized.capacity
    if capacity is None or capacity.unit != TOKENS:
        return {}
    peak = sized.peak_per_second
    return {
        "unit": "output tokens",
        "outputTokensPerSecond": {
            "minReplicas": round(capacity.inferences_per_second * d.min_replicas, 3),
            "maxReplicas": round(capacity.inferences_per_second * d.max_replicas, 3),
            "peak": "not given" if peak is None else round(peak, 3),
        },
        "maxReplicasCarryPeak": "not given" if peak is None else capacity.inferences_per_second * d.max_replicas >= peak,
    }


def _per_million(value: float | None, sized: Any, point: str) -> float | str:
    served = sized.peak_per_second if point == "peak" else sized.average_per_second
    if served is None:
        return "not given"
    return _money(value, 6)


def plan_sizing(config: StackConfig, project_dir: Path) -> dict[str, Any]:
    """Capacities, sizing and the blocking check; the plan document's section. Raises ConfigError."""
    capacities = deployment_capacities(config, project_dir)
    sizing = size_stack(config, capacities)
    check_sizing(config, sizing)
    return sizing_section(config, capacities, sizing)
