"""Sizing: from a target load to replicas, whole nodes, idle GPUs and $ per 1M inferences at the real utilisation.

The money side reuses the cost model (`nodes_usd_per_hour`, `cost_per_million`) and the capacity split
(`split_nodes`): a pool's running nodes are split into purchase options exactly as its node groups are, and each node
is paid whole, so a 1-GPU replica on an 8-GPU node carries the other seven GPUs' cost until another replica uses them. An unknown price makes the figure None
(shown "unknown"), never 0.

Headroom (default 0.25, `sizing.headroom`): replicas are planned so that each runs at most at 75 % of its measured
capacity at peak. Latency climbs steeply as a server approaches saturation (queueing), the HPA reacts after a scrape
interval and a stabilisation window, a new GPU node takes minutes to join, and a spot reclaim or a rolling update
removes a replica while the load stays: the remaining quarter absorbs that until the fleet catches up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tritonfleet.core.capacity import split_nodes
from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config import GpuPool
from tritonfleet.core.cost import cost_per_million, nodes_usd_per_hour, pool_prices, pool_usd_per_hour
from tritonfleet.core.packing import NodeShape, ReplicaShape, pack, replica_shape
from tritonfleet.core.placement import floor_placement

DEFAULT_HEADROOM = 0.25


def replicas_needed(load_per_second: float, capacity_per_replica: float, headroom: float = DEFAULT_HEADROOM) -> int:
    """Replicas that carry `load_per_second` with each one at most at (1 - headroom) of its capacity."""
    if capacity_per_replica <= 0:
        raise ValueError(f"a per-replica capacity must be > 0, not {capacity_per_replica}")
    if not 0 <= headroom < 1:
        raise ValueError(f"headroom must be in [0, 1), not {headroom}")
    if load_per_second <= 0:
        return 0
    # The small tolerance keeps an exact fit (e.g. 750 / (1000 x 0.75)) from rounding up on float noise.
    return math.ceil(load_per_second / (capacity_per_replica * (1 - headroom)) - 1e-9)


@dataclass(frozen=True)
class Demand:
    """One deployment's replicas at one load point, with the inferences/s it serves there (None: not stated)."""

    deployment: str
    replica: ReplicaShape
    replicas: int
    inferences_per_second: float | None


@dataclass(frozen=True)
class PoolAtLoad:
    """A pool at one load point: whole nodes, purchase mix, GPUs used and idle, the hourly bill and $/1M."""

    nodes: int
    purchase: dict[str, int]
    gpus_used: int
    gpus_paid: int
    usd_per_hour: float | None
    inferences_per_second: float | None  # None when a deployment on the pool states no load
    deployment_usd_per_hour: dict[str, float | None] = field(default_factory=dict)
    unplaceable: tuple[str, ...] = ()

    @property
    def idle_gpus(self) -> int:
        return self.gpus_paid - self.gpus_used

    @property
    def idle_fraction(self) -> float:
        return self.idle_gpus / self.gpus_paid if self.gpus_paid else 0.0

    @property
    def usd_per_million(self) -> float | None:
        return cost_per_million(self.usd_per_hour, self.inferences_per_second)


def pool_at_load(
    pool: GpuPool, itype: InstanceType, prices: Mapping[str, float | None], demands: Sequence[Demand]
) -> PoolAtLoad:
    """Pack the demands onto the pool's node shape (never fewer nodes than minNodes) and price the whole nodes.

    Each deployment carries the pool's bill in proportion to the GPUs it uses: idle GPUs are shared out, not dropped.
    """
    packing = pack(NodeShape.of(itype), [(d.deployment, d.replica, d.replicas) for d in demands], pool.min_nodes)
    usd = pool_usd_per_hour(pool, packing.nodes, dict(prices))
    served = [d.inferences_per_second for d in demands]
    shares: dict[str, float | None] = {}
    for d in demands:
        used = d.replica.gpus * d.replicas
        shares[d.deployment] = None if usd is None or not packing.gpus_used else usd * used / packing.gpus_used
    return PoolAtLoad(
        nodes=packing.nodes,
        purchase=split_nodes(pool, packing.nodes),
        gpus_used=packing.gpus_used,
        gpus_paid=packing.gpus_paid,
        usd_per_hour=usd,
        inferences_per_second=None if not served or any(s is None for s in served) else sum(s for s in served if s is not None),
        deployment_usd_per_hour=shares,
        unplaceable=packing.unplaceable,
    )


# ---------------------------------------------------------------- a whole stack at its minimum, average and peak


@dataclass(frozen=True)
class Capacity:
    """What one replica carries within the latency target, and where that figure comes from."""

    inferences_per_second: float
    kind: str  # measured (a loadtest result), stated (throughputPerReplica) or estimate (a published benchmark)
    source: str  # shown in the plan
    p99_ms: float | None = None  # the latency (at the result's percentile, p99 by default) measured at that rate
    arrivals: str | None = None  # measured: poisson, uniform, schedule or closed-loop
    swept: bool = False  # measured: the best point of a sweep (else one load point: a lower bound)
    unit: str = "inferences/s"  # or TOKENS: an LLM's output tokens/s (a `loadtest --llm` result)
    mean_input_tokens: float | None = None  # TOKENS: the lengths the capacity was measured at
    mean_output_tokens: float | None = None


TOKENS = "output tokens/s"
LENGTH_RATIO = 1.5  # a target's mean length this far (either way) from the measured one: the capacity may not hold


@dataclass(frozen=True)
class Finding:
    """A sizing verdict on one config key: `blocking` ones fail the plan (the bounds cannot carry the target)."""

    key: str
    value: object
    message: str
    suggestion: object
    blocking: bool


@dataclass(frozen=True)
class DeploymentSizing:
    deployment: str
    pool: str
    capacity: Capacity | None
    peak_per_second: float | None  # inferences/s
    average_per_second: float | None
    replicas: dict[str, int]  # minimum / average / peak -> replicas
    usd_per_hour: dict[str, float | None]  # minimum / average / peak -> the deployment's share of its pool's bill

    def usd_per_million(self, point: str) -> float | None:
        served = {"peak": self.peak_per_second, "average": self.average_per_second}.get(point)
        return cost_per_million(self.usd_per_hour.get(point), served)


@dataclass(frozen=True)
class PoolSizing:
    pool: str
    instance_type: str
    gpus_per_node: int
    prices: dict[str, float | None]
    assumed: tuple[str, ...]  # purchase options priced with the pool's acknowledged assumed price
    points: dict[str, PoolAtLoad]  # minimum / average / peak


@dataclass(frozen=True)
class StackSizing:
    headroom: float
    deployments: tuple[DeploymentSizing, ...]
    pools: tuple[PoolSizing, ...]
    findings: tuple[Finding, ...]

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.blocking]


POINTS = ("minimum", "average", "peak")


def load_in_capacity_unit(target, capacity: Capacity | None, at: str) -> tuple[float | None, float | None, Finding | None]:
    """The peak and average load in the capacity's unit (output tokens/s for an LLM capacity, else inferences/s),
    or the problem that keeps them apart: a token capacity with a load in requests and no output length, or a load
    in tokens with a capacity in inferences."""
    if target is None:
        return None, None, None
    if capacity is not None and capacity.unit == TOKENS:
        peak = target.output_tokens_per_second(target.peak)
        if peak is None:
            length = round(capacity.mean_output_tokens) if capacity.mean_output_tokens else 256
            return None, None, Finding(
                f"{at}.targetLoad.outputTokens", None,
                f"the capacity is in output tokens/s (a `loadtest --llm` result), the target load in {target.unit}: "
                "set outputTokens, the mean output tokens of a request (and inputTokens), or give the load in "
                f"outputTokens/s; the measurement averaged {length} output tokens", length, blocking=True,
            )  # fmt: skip
        average = target.output_tokens_per_second(target.average) if target.average else None
        return peak, average, None
    if target.unit == "outputTokens/s" and capacity is not None:
        return None, None, Finding(
            f"{at}.targetLoad.unit", target.unit,
            f"a load in output tokens/s needs a capacity in tokens ({capacity.kind} {capacity.inferences_per_second:g} "
            "inferences/s is not): measure the model with `tritonfleet loadtest --llm --json <file>` and set "
            "loadtestResult to it, or give the load in requests/s", "requests/s", blocking=True,
        )  # fmt: skip
    peak = target.inferences_per_second(target.peak)
    return peak, target.inferences_per_second(target.average) if target.average else None, None


def _length_findings(target, capacity: Capacity, at: str) -> list[Finding]:
    """A token capacity holds only near the lengths it was measured at: longer prompts cost prefill (TTFT), longer
    outputs hold a sequence slot longer."""
    findings = []
    for key, stated, measured in (("inputTokens", target.input_tokens, capacity.mean_input_tokens),
                                  ("outputTokens", target.output_tokens, capacity.mean_output_tokens)):  # fmt: skip
        if stated and measured and not (1 / LENGTH_RATIO <= stated / measured <= LENGTH_RATIO):
            findings.append(Finding(
                f"{at}.targetLoad.{key}", stated,
                f"{key} {stated} is far from the {measured:,.0f} the capacity was measured at: its tokens/s may not "
                f"hold; rerun `tritonfleet loadtest --llm --{'input' if key == 'inputTokens' else 'output'}-tokens "
                f"{stated}`", None, blocking=False,
            ))  # fmt: skip
    return findings


def size_stack(config, capacities: Mapping[str, Capacity | None]) -> StackSizing:  # config: StackConfig
    """Replicas, nodes and $/1M of every enabled pool at the minimum (minReplicas), average and peak target load.

    A deployment without a target load runs minReplicas at the minimum and average and maxReplicas at the peak (the
    most its autoscaler may start). `capacities` maps deployment name -> its per-replica capacity (or None).
    """
    headroom = config.sizing.headroom
    findings: list[Finding] = []
    per_deployment: dict[str, dict[str, Demand]] = {}
    for i, d in enumerate(config.triton_deployments):
        pool = config.pool(d.pool)
        itype = config.instance_type(pool)
        capacity = capacities.get(d.name)
        target = d.target_load
        at = f"tritonDeployments[{i}]"
        peak, average, problem = load_in_capacity_unit(target, capacity, at)
        if problem is not None:
            findings.append(problem)
            capacity = None
        elif capacity is not None and target is not None and capacity.unit == TOKENS:
            findings += _length_findings(target, capacity, at)
        replicas = {"minimum": d.min_replicas, "average": d.min_replicas, "peak": d.max_replicas}
        if target and capacity is None and problem is None:
            findings.append(
                Finding(f"{at}.throughputPerReplica", None, "a target load needs a per-replica capacity: set "
                        "throughputPerReplica (stated) or loadtestResult (measured)", 100, blocking=True)
            )
        if target and capacity:
            needed = replicas_needed(peak or 0, capacity.inferences_per_second, headroom)
            replicas["peak"] = max(d.min_replicas, needed)
            replicas["average"] = max(d.min_replicas, replicas_needed(average or 0, capacity.inferences_per_second, headroom))
            if average is None:
                replicas["average"] = d.min_replicas
            if needed > d.max_replicas:
                findings.append(
                    Finding(
                        f"{at}.maxReplicas",
                        d.max_replicas,
                        f"the peak of {peak:,.0f} {capacity.unit} needs {needed} replicas at "
                        f"{capacity.inferences_per_second:,.0f}/s each ({capacity.kind}) with {headroom:.0%} headroom; "
                        f"maxReplicas {d.max_replicas} carries {d.max_replicas * capacity.inferences_per_second * (1 - headroom):,.0f}/s",
                        needed,
                        blocking=True,
                    )
                )
        shape = replica_shape(itype, d.gpus_per_replica)
        served = {"minimum": None, "average": average, "peak": peak}
        per_deployment[d.name] = {
            point: Demand(d.name, shape, replicas[point], served[point]) for point in POINTS
        }
    pools: list[PoolSizing] = []
    shares: dict[str, dict[str, float | None]] = {d.name: {} for d in config.triton_deployments}
    floors = floor_placement(config)
    for j, pool in enumerate(config.gpu_pools):
        if not pool.enabled:
            continue
        itype = config.instance_type(pool)
        prices = pool_prices(pool, itype, config.region)
        assumed = tuple(o for o in prices if nodes_usd_per_hour(itype, o, 1, config.region) is None and prices[o] is not None)
        names = [d.name for d in config.triton_deployments if d.pool == pool.name]
        points = {}
        # Never below the plan's floor (tritonfleet/core/placement.py: the nodes minReplicas keep up, minNodes): a
        # tighter packing is not what the autoscalers keep.
        floor = pool.model_copy(update={"min_nodes": floors[pool.name].nodes})
        for point in POINTS:
            at_load = pool_at_load(floor, itype, prices, [per_deployment[n][point] for n in names])
            points[point] = at_load
            for n in names:
                shares[n][point] = at_load.deployment_usd_per_hour.get(n)
        pools.append(PoolSizing(pool.name, itype.name, itype.gpu_count, prices, assumed, points))
        peak = points["peak"]
        if peak.nodes > pool.max_nodes:
            findings.append(
                Finding(
                    f"gpuPools[{j}].maxNodes",
                    pool.max_nodes,
                    f"the peak needs {peak.nodes} {itype.name} nodes ({peak.gpus_used} GPUs for "
                    + ", ".join(f"{per_deployment[n]['peak'].replicas} x {n}" for n in names)
                    + f"); maxNodes {pool.max_nodes} holds {pool.max_nodes * itype.gpu_count} GPUs",
                    peak.nodes,
                    blocking=True,
                )
            )
        for point in ("minimum", "peak"):
            at_load = points[point]
            if at_load.gpus_paid and at_load.idle_fraction > config.sizing.idle_gpu_warn_fraction:
                findings.append(
                    Finding(
                        f"gpuPools[{j}]",
                        pool.name,
                        f"{at_load.idle_gpus} of {at_load.gpus_paid} paid GPUs idle at the {point} "
                        f"({at_load.idle_fraction:.0%} > {config.sizing.idle_gpu_warn_fraction:.0%}): a smaller node "
                        "type, more replicas per node or another deployment on this pool would use them",
                        None,
                        blocking=False,
                    )
                )
    deployments = tuple(
        DeploymentSizing(
            deployment=d.name,
            pool=d.pool,
            capacity=capacities.get(d.name),
            peak_per_second=per_deployment[d.name]["peak"].inferences_per_second,
            average_per_second=per_deployment[d.name]["average"].inferences_per_second,
            replicas={p: per_deployment[d.name][p].replicas for p in POINTS},
            usd_per_hour=shares[d.name],
        )
        for d in config.triton_deployments
    )
    return StackSizing(headroom, deployments, tuple(pools), tuple(findings))
