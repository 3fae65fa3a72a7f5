"""`tritonfleet size`: every GPU type and purchase option of the stack's cloud, priced for one deployment's target load.

Capacity per replica on each GPU: the deployment's measured or stated figure on its own GPU; on another GPU that
figure scaled by the ratio of the two GPUs' published benchmark (an estimate, labelled with what it was scaled from);
without any figure, the published per-accelerator benchmark itself (an estimate, and an optimistic one: MLPerf is
TensorRT on preprocessed data, not Triton over the network). A GPU with neither stays unranked: no guess. A
measurement over the latency target scales to nothing: sizing refuses it before it gets here (plan/sizing.py), and
should one arrive, its own GPU is ranked over the target and no other GPU is estimated from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.config import GpuPool, StackConfig, TritonDeployment
from tritonfleet.core.config.problems import set_command
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.cost import cost_per_million, pool_prices, pool_usd_per_hour
from tritonfleet.core.sizing import Capacity, NodeShape, pack, replica_shape, replicas_needed

# How each purchase option is bought as a pool (the keys `tritonfleet size` prints for the winner).
POOL_KEYS = {
    "on-demand": {"capacity": "mixed", "onDemandBase": 0, "spotShare": 0},
    "spot": {"capacity": "mixed", "onDemandBase": 0, "spotShare": 1},
    "capacity-block": {"capacity": "capacity-block"},
    "reservation": {"capacity": "reservation"},
    "flex-start": {"capacity": "flex-start"},
}


@dataclass(frozen=True)
class Option:
    gpu: str
    instance_type: str
    purchase: str
    capacity: float  # inferences/s per replica
    capacity_kind: str  # measured, stated, or estimate (with what it was scaled from)
    replicas: int
    nodes: int
    idle_gpus: int
    usd_per_hour: float | None
    usd_per_million: float | None
    fits_latency: bool


@dataclass(frozen=True)
class Ranking:
    options: tuple[Option, ...]
    notes: tuple[str, ...]
    commands: tuple[str, ...] = field(default=())

    @property
    def winner(self) -> Option | None:
        return next((o for o in self.options if o.usd_per_million is not None and o.fits_latency), None)


def _capacity_on(
    gpu: str, own_gpu: str, capacity: Capacity | None, gpus_per_replica: int, benchmarks: dict[str, float],
    scalable: bool = True,
) -> tuple[float, str] | None:
    if capacity is not None and gpu == own_gpu:
        return capacity.inferences_per_second, capacity.kind
    if capacity is not None and scalable and gpu in benchmarks and own_gpu in benchmarks:
        scaled = f"estimate: {capacity.kind} {own_gpu} x {gpu}/{own_gpu} benchmark"
        return capacity.inferences_per_second * benchmarks[gpu] / benchmarks[own_gpu], scaled
    if capacity is None and gpu in benchmarks:
        return benchmarks[gpu] * gpus_per_replica, "estimate: benchmark"
    return None


def _pool_for(itype: InstanceType, option: str) -> GpuPool:
    keys = {"reservationId": "r"} if option in ("capacity-block", "reservation") else {}
    return GpuPool.model_validate(
        {"name": "option", "gpu": itype.gpu, "instanceType": itype.name, "maxNodes": 10_000, **POOL_KEYS[option], **keys}
    )


def rank_options(
    config: StackConfig, deployment: TritonDeployment, capacity: Capacity | None, benchmark_model: str = "resnet50"
) -> Ranking:
    """Every (instance type, purchase option) of the stack's cloud, cheapest $/1M at peak first; unknowns last."""
    assert deployment.target_load is not None
    catalog = load_catalog()
    benchmarks = {b.gpu: b.inferences_per_second for b in catalog.benchmarks if b.model == benchmark_model}
    bench_sources = sorted({f"{b.source} ({catalog.sources[b.source].as_of})" for b in catalog.benchmarks
                            if b.model == benchmark_model})  # fmt: skip
    own_gpu = config.pool(deployment.pool).gpu
    peak = deployment.target_load.inferences_per_second(deployment.target_load.peak)
    target_ms = latency_ms(deployment.latency_target) if deployment.latency_target else None
    options: list[Option] = []
    unranked: set[str] = set()
    # A measurement over the latency target is no capacity at that target, on its GPU or scaled to another.
    fits = not (capacity and capacity.kind == "measured" and target_ms is not None and capacity.p99_ms
                and capacity.p99_ms > target_ms)  # fmt: skip
    for itype in catalog.instance_types:
        if itype.cloud != config.cloud or itype.gpu_count < deployment.gpus_per_replica:
            continue
        found = _capacity_on(itype.gpu, own_gpu, capacity, deployment.gpus_per_replica, benchmarks, bool(fits))
        if found is None:
            unranked.add(itype.gpu)
            continue
        per_replica, kind = found
        replicas = max(deployment.min_replicas, replicas_needed(peak, per_replica, config.sizing.headroom))
        packing = pack(NodeShape.of(itype), [(deployment.name, replica_shape(itype, deployment.gpus_per_replica), replicas)])
        for option in itype.purchase_options:
            pool = _pool_for(itype, option)
            usd = pool_usd_per_hour(pool, packing.nodes, pool_prices(pool, itype, config.region))
            options.append(Option(itype.gpu, itype.name, option, per_replica, kind, replicas, packing.nodes,
                                  packing.idle_gpus, usd, cost_per_million(usd, peak), bool(fits)))  # fmt: skip
    options.sort(key=lambda o: (o.usd_per_million is None or not o.fits_latency, o.usd_per_million or 0, o.instance_type))
    notes = []
    if any(o.capacity_kind.startswith("estimate") for o in options):
        notes.append(
            f"'estimate' capacities come from published {benchmark_model} benchmarks per GPU ("
            + ", ".join(bench_sources)
            + "): TensorRT on preprocessed data, not Triton over the network; measure with `tritonfleet loadtest`"
        )
    if unranked and not fits:
        notes.append(f"not estimated from a measurement over the latency target: {', '.join(sorted(unranked))}")
    elif unranked:
        notes.append(f"not ranked (no measured figure and no published {benchmark_model} benchmark): {', '.join(sorted(unranked))}")
    if any(o.usd_per_million is None for o in options):
        notes.append("'unknown' $/1M: the catalog has no published price for that type and option in " + config.region)
    if any(o.purchase == "spot" for o in options):
        notes.append(
            "spot rows price spot alone: the cloud may reclaim those nodes (2 min notice on AWS, 30 s on GCP); a serving "
            "pool keeps an on-demand base (onDemandBase, required by the prod policy) and bursts to spot"
        )
    if target_ms is not None and capacity is not None and capacity.p99_ms is None:
        notes.append(f"latency target {deployment.latency_target}: the capacity is not a measurement, so it is not checked")
    ranking = Ranking(tuple(options), tuple(notes))
    winner = ranking.winner
    if winner is None:
        return ranking
    return Ranking(ranking.options, ranking.notes, tuple(_commands(config, deployment, winner)))


def _commands(config: StackConfig, deployment: TritonDeployment, winner: Option) -> list[str]:
    j = next(i for i, p in enumerate(config.gpu_pools) if p.name == deployment.pool)
    i = next(i for i, d in enumerate(config.triton_deployments) if d.name == deployment.name)
    pool = config.gpu_pools[j]
    settings: dict[str, object] = {
        f"gpuPools[{j}].gpu": winner.gpu,
        f"gpuPools[{j}].instanceType": winner.instance_type,
        **{f"gpuPools[{j}].{key}": value for key, value in POOL_KEYS[winner.purchase].items()},
        f"gpuPools[{j}].maxNodes": max(pool.max_nodes, winner.nodes),
        f"tritonDeployments[{i}].maxReplicas": max(deployment.max_replicas, winner.replicas),
    }
    if winner.purchase in ("capacity-block", "reservation"):
        settings[f"gpuPools[{j}].reservationId"] = "<reservation id>"
    return [set_command(key, value, config.stack) for key, value in settings.items()]
