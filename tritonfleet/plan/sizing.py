"""The plan's sizing: each deployment's per-replica capacity (measured, stated), the sizing section of the plan
document, and the config problems when the configured bounds cannot carry the target load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tritonfleet.core.config import ConfigError, Problem, StackConfig
from tritonfleet.core.config.problems import set_command
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.loadtest_result import ResultError, read_result
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
                                        f"tritonfleet loadtest --model {ref.model} --rate <req/s> --json {ref.path}"))
                continue
            if result.model != ref.model:
                problems.append(Problem(
                    f"{at}.path", ref.path,
                    f"a result for model '{ref.model}' (the deployment's model); this file measured '{result.model}'",
                    f"tritonfleet loadtest --model {ref.model} --rate <req/s> --json {ref.path}",
                ))  # fmt: skip
                continue
            if result.inferences_per_second_per_replica <= 0:
                problems.append(Problem(
                    f"{at}.path", ref.path,
                    f"a result with a capacity > 0; this one achieved 0 inferences/s ({result.errors} errors of "
                    f"{result.requests} requests)",
                    f"tritonfleet loadtest --model {ref.model} --rate <req/s> --json {ref.path}",
                ))  # fmt: skip
                continue
            capacity = Capacity(
                result.inferences_per_second_per_replica,
                "measured",
                f"loadtest {ref.path} ({result.model}, {result.started_at[:10]}, {result.protocol}, "
                f"p99 {result.latency_ms.p99} ms)",
                result.latency_ms.p99,
            )
        elif d.throughput_per_replica is not None:
            capacity = Capacity(d.throughput_per_replica, "stated", f"tritonDeployments[{i}].throughputPerReplica")
        capacities[d.name] = capacity
    if problems:
        raise ConfigError(config.stack, problems)
    return capacities


def check_sizing(config: StackConfig, sizing: StackSizing) -> None:
    """Fail with the numbers when maxReplicas or a pool's maxNodes cannot carry a deployment's target load."""
    problems = [
        Problem(f.key, f.value, f.message, set_command(f.key, f.suggestion, config.stack)) for f in sizing.blocking
    ]
    if problems:
        raise ConfigError(config.stack, problems)


def latency_findings(config: StackConfig, capacities: dict[str, Capacity | None]) -> list[dict[str, Any]]:
    """A measured p99 above the deployment's latency target: the capacity is not valid at that target."""
    findings = []
    for i, d in enumerate(config.triton_deployments):
        capacity = capacities.get(d.name)
        if d.latency_target and capacity and capacity.p99_ms is not None and capacity.p99_ms > latency_ms(d.latency_target):
            findings.append({
                "key": f"tritonDeployments[{i}].latencyTarget",
                "message": f"the loadtest's p99 of {capacity.p99_ms:g} ms at {capacity.inferences_per_second:,.0f}/s is "
                f"above the target {d.latency_target}: rerun `tritonfleet loadtest` at a lower --rate",
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
