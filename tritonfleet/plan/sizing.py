"""The plan's sizing: each deployment's per-replica capacity (measured, stated), the sizing section of the plan
document, and the config problems when the configured bounds cannot carry the target load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tritonfleet.core.config import ConfigError, Problem, StackConfig
from tritonfleet.core.config.problems import set_command
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.loadtest_result import Refused, ResultError, read_result, usable_capacity
from tritonfleet.core.sizing import POINTS, Capacity, StackSizing, size_stack


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


def with_measured_capacities(config: StackConfig, project_dir: Path) -> StackConfig:
    """The config with each deployment's measured capacity known, so its HPA target and the autoscaling rules use
    the measurement (as sizing does) rather than only throughputPerReplica. Raises ConfigError as
    deployment_capacities does."""
    capacities = deployment_capacities(config, project_dir)
    deployments = []
    for d in config.triton_deployments:
        capacity = capacities.get(d.name)
        d = d.model_copy()
        if capacity is not None and capacity.kind == "measured":
            d._measured_capacity = capacity.inferences_per_second
        deployments.append(d)
    return config.model_copy(update={"triton_deployments": deployments})


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
                "inferencesPerSecond": round(capacity.inferences_per_second, 3),
                "kind": capacity.kind,
                "source": capacity.source,
            },
            "targetLoad": "not given" if target is None else {
                "peak": target.peak, "average": target.average if target.average is not None else "not given",
                "unit": target.unit, "inferencesPerRequest": target.inferences_per_request,
            },
            "latencyTarget": d.latency_target or "not given",
            "replicas": sized.replicas,
            "usdPerHour": {p: _money(sized.usd_per_hour.get(p), 4) for p in POINTS},
            "usdPer1M": {
                p: _per_million(sized.usd_per_million(p), sized, p) for p in ("average", "peak")
            },
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
