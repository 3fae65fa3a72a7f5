"""`tritonfleet size`: the GPU types and purchase options of the stack's cloud, priced for one deployment's target
load, ranked only where they pass the stack's own guardrails.

Capacity per replica on each GPU: the deployment's measured or stated figure on its own GPU; on another GPU that
figure scaled by the ratio of the two GPUs' published benchmark, and without any figure the benchmark itself — both
only when the user names a benchmark that represents the model (`--benchmark-model`): a ResNet-50 ratio says nothing
about an LLM, so by default another GPU stays unranked, with the reason. An estimate is labelled with what it was
scaled from, and none is scaled from a measurement over the latency target (plan/sizing.py refuses such a result
before it gets here; should one arrive, its own GPU is excluded and no other GPU is estimated from it).

Each option is the deployment's pool changed as little as it can be: the same onDemandBase (raised to the policy's
minimum for spot, which then bursts over that base), minNodes, zones. An option is excluded, with every reason, when
it breaks a guardrail: the instance types the policy allows, the GPU limit (this pool's maximum plus the other pools'),
the GPU memory a replica needs (by default: no less than it has now), a measured p99 over the latency target, a
capacity tier the pool has now and would lose while the stack protects its resources, or an unknown price. A latency
that was not measured is never called within the target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tritonfleet.core.capacity import capacity_tiers
from tritonfleet.core.catalog import InstanceType, load_catalog
from tritonfleet.core.cloud import cloud as registered_cloud
from tritonfleet.core.config import GpuPool, StackConfig, TritonDeployment
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.cost import cost_per_million, pool_prices, pool_usd_per_hour
from tritonfleet.core.llm import replica_misfit
from tritonfleet.core.packing import NodeShape, pack, replica_shape
from tritonfleet.core.sizing import TOKENS, Capacity, load_in_capacity_unit, replicas_needed

GIB_IN_GB = 1.073741824


@dataclass(frozen=True)
class Guardrails:
    """The stack's own limits that advice must pass: from its config and its policy config."""

    gpu_limit: int | None = None  # the lower of gpuLimit and the policy's maxGpus
    allowed_instance_types: tuple[str, ...] | None = None  # None: the policy is off
    min_on_demand_nodes: int = 0  # spot-serving-pool-require-on-demand-base (0: off)
    model_memory_gib: float | None = None  # GPU memory one replica needs; None: not stated (no less than now)
    benchmark_model: str | None = None  # a benchmark the user says represents the model; None: none does
    policy_file: str = "the policy config"


@dataclass(frozen=True)
class Option:
    gpu: str
    instance_type: str
    purchase: str
    capacity: float | None  # inferences/s per replica; None: no figure for this model on this GPU
    capacity_kind: str  # measured, stated, estimate or none
    replicas: int
    nodes: int
    idle_gpus: int
    usd_per_hour: float | None
    usd_per_million: float | None
    latency_checked: bool  # a measured p99 within the latency target
    settings: dict[str, Any] = field(default_factory=dict)  # config keys (below the namespace) that make it so
    excluded: tuple[str, ...] = ()  # why it cannot be advised; () ranks it
    base: int = 0  # on-demand nodes under a spot burst

    @property
    def ranked(self) -> bool:
        return not self.excluded

    def but(self, *reasons: str) -> Option:
        return Option(**{**self.__dict__, "excluded": (*self.excluded, *reasons)})

    @property
    def label(self) -> str:
        how = f"spot over an on-demand base of {self.base}" if self.purchase == "spot" and self.base else self.purchase
        return f"{self.gpu} {self.instance_type} {how}"


@dataclass(frozen=True)
class Ranking:
    options: tuple[Option, ...]  # ranked ones first, cheapest $/1M at peak first; then the excluded
    notes: tuple[str, ...]
    unit: str = "inferences"  # what $/1M counts: inferences, or an LLM's output tokens

    @property
    def ranked(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if o.ranked)

    @property
    def excluded(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if not o.ranked)

    @property
    def winner(self) -> Option | None:
        return next(iter(self.ranked), None)

    def without(self, option: Option, *reasons: str) -> Ranking:
        """The ranking with `option` excluded for `reasons` (a check made outside: planning it)."""
        changed = [o.but(*reasons) if o is option else o for o in self.options]
        return Ranking(tuple(sorted(changed, key=_order)), self.notes, self.unit)


def _order(o: Option) -> tuple:
    return (not o.ranked, o.usd_per_million is None, o.usd_per_million or 0, o.instance_type, o.purchase)


def _measured_over_target(capacity: Capacity | None, target_ms: float | None) -> bool:
    """A measurement over the latency target is no capacity at that target, on its GPU or scaled to another."""
    return bool(capacity and capacity.kind == "measured" and target_ms is not None and capacity.p99_ms
                and capacity.p99_ms > target_ms)  # fmt: skip


def _capacity_on(
    gpu: str, own_gpu: str, capacity: Capacity | None, gpus_per_replica: int, benchmarks: dict[str, float],
    scalable: bool = True,
) -> tuple[float, str] | None:
    """A replica's capacity on `gpu` and its kind; another GPU's is an estimate labelled with what it was scaled
    from, and none is scaled from a measurement that missed its latency target (`scalable` False)."""
    if capacity is not None and gpu == own_gpu:
        return capacity.inferences_per_second, capacity.kind
    if capacity is not None and scalable and gpu in benchmarks and own_gpu in benchmarks:
        scaled = f"estimate: {capacity.kind} {own_gpu} x {gpu}/{own_gpu} benchmark"
        return capacity.inferences_per_second * benchmarks[gpu] / benchmarks[own_gpu], scaled
    if capacity is None and gpu in benchmarks:
        return benchmarks[gpu] * gpus_per_replica, "estimate: benchmark"
    return None


def _proposed(
    pool: GpuPool, gpus_now: int, itype: InstanceType, option: str, nodes: int, rails: Guardrails
) -> dict[str, Any]:
    """The pool's keys changed for this option (names as in the stack file), the rest kept."""
    def in_new_nodes(count: int) -> int:  # the same GPUs in whole nodes of the new type (8 one-GPU: 2 four-GPU)
        return -(-count * gpus_now // itype.gpu_count)

    keys: dict[str, Any] = {"gpu": itype.gpu, "instanceType": itype.name}
    floor = rails.min_on_demand_nodes if pool.on_demand_base else 0
    base = 0
    if option in ("on-demand", "spot"):
        base = max(in_new_nodes(pool.on_demand_base), floor, rails.min_on_demand_nodes if option == "spot" else 0)
        keys.update(capacity="mixed", onDemandBase=base, spotShare=0 if option == "on-demand" else 1)
    else:
        keys.update(capacity=option, onDemandBase=0, spotShare=0)
        if option in ("capacity-block", "reservation") and not pool.reservation_id:
            keys["reservationId"] = "<reservation id>"
    keys["minNodes"] = max(in_new_nodes(pool.min_nodes), base)
    # Room for the peak's nodes, and a burst above the base where the pool has one now.
    burst = 1 if option in ("on-demand", "spot") and pool.max_nodes > pool.on_demand_base else 0
    keys["maxNodes"] = max(in_new_nodes(pool.max_nodes), nodes, keys["minNodes"], base + burst, 1)
    return keys


def _pool_with(pool: GpuPool, keys: dict[str, Any]) -> GpuPool:
    data = pool.model_dump(by_alias=True, exclude_none=True)
    if keys["instanceType"] != pool.instance_type:
        data.pop("assumedPrice", None)  # an assumed price is for the type it was quoted for
    if keys.get("capacity") == "mixed":
        data.pop("reservationId", None)
    data.update({k: ("r" if k == "reservationId" else v) for k, v in keys.items()})
    return GpuPool.model_validate(data)


def _other_pools_gpus(config: StackConfig, pool: GpuPool) -> int:
    return sum(p.max_nodes * config.instance_type(p).gpu_count for p in config.enabled_pools if p.name != pool.name)


def peak_load(
    config: StackConfig, deployment: TritonDeployment, capacity: Capacity | None, rails: Guardrails
) -> tuple[float, str]:
    """The peak in the unit the options are priced in: output tokens for an LLM measured in tokens (plan/sizing.py
    refused one past its TTFT/ITL targets) or estimated from an LLM benchmark, else inferences. ValueError says
    why the load and the capacity cannot meet (a load in requests without an output length)."""
    target = deployment.target_load
    assert target is not None
    benchmarks = {b.unit for b in load_catalog().benchmarks if b.model == rails.benchmark_model}
    if capacity is None and benchmarks == {TOKENS}:
        peak = target.output_tokens_per_second(target.peak)
        if peak is None:
            raise ValueError(f"the {rails.benchmark_model} benchmark counts output tokens/s: give the target load in "
                             "outputTokens/s, or set targetLoad.outputTokens (the mean output tokens of a request)")  # fmt: skip
        return peak, "output tokens"
    i = config.triton_deployments.index(deployment)
    peak, _, unusable = load_in_capacity_unit(target, capacity, f"tritonDeployments[{i}]")
    if unusable is not None or peak is None:
        raise ValueError(f"{unusable.key}: {unusable.message}" if unusable else "no peak load")
    return peak, "output tokens" if capacity is not None and capacity.unit == TOKENS else "inferences"


def rank_options(
    config: StackConfig, deployment: TritonDeployment, capacity: Capacity | None, rails: Guardrails | None = None
) -> Ranking:
    """Every (instance type, purchase option) of the stack's cloud: those that pass the guardrails ranked by $/1M at
    peak, then the others with the reasons they were excluded."""
    assert deployment.target_load is not None
    rails = rails or Guardrails()
    catalog = load_catalog()
    benchmarks = (
        {b.gpu: b.inferences_per_second for b in catalog.benchmarks if b.model == rails.benchmark_model}
        if rails.benchmark_model else {}
    )  # fmt: skip
    pool = config.pool(deployment.pool)
    j = config.gpu_pools.index(pool)
    i = config.triton_deployments.index(deployment)
    own_gpu = pool.gpu
    memory_now = deployment.gpus_per_replica * catalog.gpus[own_gpu].memory_gb
    others = _other_pools_gpus(config, pool)
    tiers_now = {t.name for t in capacity_tiers(config.cloud, pool)}
    peak, unit = peak_load(config, deployment, capacity, rails)
    target_ms = latency_ms(deployment.latency_target) if deployment.latency_target else None
    options: list[Option] = []
    fits = not _measured_over_target(capacity, target_ms)
    node_architectures = registered_cloud(config.cloud).gpu_node_architectures
    for itype in catalog.instance_types:
        if itype.cloud != config.cloud or itype.gpu_count < deployment.gpus_per_replica:
            continue
        found = _capacity_on(itype.gpu, own_gpu, capacity, deployment.gpus_per_replica, benchmarks, fits)
        reasons: list[str] = []
        if found is None:
            per_replica, kind, replicas, nodes, idle = None, "none", 0, 0, 0
            reasons.append(_no_figure(itype.gpu, own_gpu, capacity, rails, catalog))
        else:
            per_replica, kind = found
            replicas = max(deployment.min_replicas, replicas_needed(peak, per_replica, config.sizing.headroom))
            shape = replica_shape(itype, deployment.gpus_per_replica)
            packing = pack(NodeShape.of(itype), [(deployment.name, shape, replicas)])
            nodes, idle = packing.nodes, packing.idle_gpus
        memory = deployment.gpus_per_replica * catalog.gpus[itype.gpu].memory_gb
        if rails.model_memory_gib is not None and memory < rails.model_memory_gib * GIB_IN_GB:
            reasons.append(f"{memory} GB GPU memory per replica, under the model's {rails.model_memory_gib:g} GiB")
        elif rails.model_memory_gib is None and memory < memory_now:
            reasons.append(f"{memory} GB GPU memory per replica, under the {memory_now} GB it has now")
        misfit = replica_misfit(deployment, itype.gpu)
        if misfit is not None:
            reasons.append(misfit)
        if itype.host.arch not in node_architectures:
            reasons.append(f"{itype.name} is {itype.host.arch}; GPU nodes on {config.cloud} are {', '.join(node_architectures)}")
        if rails.allowed_instance_types is not None and itype.name not in rails.allowed_instance_types:
            reasons.append(f"{itype.name} is not an allowed instance type ({rails.policy_file})")
        checked = bool(kind == "measured" and target_ms is not None and capacity and capacity.p99_ms is not None)
        checked = checked or bool(kind == "measured" and capacity and capacity.unit == TOKENS)  # TTFT/ITL held
        if checked and capacity and capacity.p99_ms is not None and target_ms is not None and capacity.p99_ms > target_ms:
            reasons.append(f"measured p99 {capacity.p99_ms:g} ms, over the latency target {deployment.latency_target}")
            checked = False
        for option in itype.purchase_options:
            keys = _proposed(pool, config.instance_type(pool).gpu_count, itype, option, nodes, rails)
            proposed = _pool_with(pool, keys)
            usd = pool_usd_per_hour(proposed, nodes, pool_prices(proposed, itype, config.region)) if found else None
            why = list(reasons)
            gpus = others + proposed.max_nodes * itype.gpu_count
            if rails.gpu_limit is not None and gpus > rails.gpu_limit:
                why.append(f"{gpus} GPUs with the other pools, over the GPU limit of {rails.gpu_limit}")
            lost = tiers_now - {t.name for t in capacity_tiers(config.cloud, proposed)}
            if config.protected and lost:
                tiers = " and ".join(sorted(lost))
                why.append(f"drops the pool's {tiers} tier{'s' if len(lost) > 1 else ''} (protected node pools)")
            if found is not None and usd is None:
                why.append(f"no published {option} price for {itype.name} in {config.region}")
            settings = {f"gpuPools[{j}].{k}": v for k, v in keys.items() if getattr(pool, _attr(k), None) != v}
            if nodes and replicas > deployment.max_replicas:
                settings[f"tritonDeployments[{i}].maxReplicas"] = replicas
            options.append(Option(
                itype.gpu, itype.name, option, per_replica, kind, replicas, nodes, idle, usd,
                cost_per_million(usd, peak), checked, settings, tuple(dict.fromkeys(why)),
                keys["onDemandBase"] if option == "spot" else 0,
            ))  # fmt: skip
    options.sort(key=_order)
    return Ranking(tuple(options), tuple(_notes(config, deployment, capacity, rails, options, target_ms)), unit)


def _attr(key: str) -> str:
    """A stack-file key's attribute name on GpuPool (onDemandBase -> on_demand_base)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _no_figure(gpu: str, own_gpu: str, capacity: Capacity | None, rails: Guardrails, catalog: Any) -> str:
    if rails.benchmark_model is not None:
        return f"no measured figure and no published {rails.benchmark_model} benchmark for {gpu}: no guess"
    return f"no capacity figure for this model on {gpu}"


def _notes(
    config: StackConfig,
    deployment: TritonDeployment,
    capacity: Capacity | None,
    rails: Guardrails,
    options: list[Option],
    target_ms: float | None,
) -> list[str]:
    catalog = load_catalog()
    notes = []
    unfigured = sorted({o.gpu for o in options if o.capacity_kind == "none"})
    if unfigured and rails.benchmark_model is None:
        published = ", ".join(sorted({b.model for b in catalog.benchmarks}))
        notes.append(
            f"no capacity figure for this model on {', '.join(unfigured)}: measure it there (`tritonfleet loadtest`), "
            f"or pass --benchmark-model ({published}) only if that benchmark represents the model"
        )
    if rails.model_memory_gib is None and any("GPU memory per replica" in r for o in options for r in o.excluded):
        notes.append("GPUs with less memory per replica than now are not ranked: state --model-memory-gib to rank them")
    if _measured_over_target(capacity, target_ms):
        notes.append("no other GPU is estimated from a measurement over the latency target: measure within it first")
    if any(o.capacity_kind.startswith("estimate") for o in options):
        sources = sorted({f"{b.source} ({catalog.sources[b.source].as_of})" for b in catalog.benchmarks
                          if b.model == rails.benchmark_model})  # fmt: skip
        notes.append(
            f"'estimate' capacities scale by the published {rails.benchmark_model} benchmark per GPU ({', '.join(sources)}), "
            "which you said represents the model: TensorRT on preprocessed data, not Triton over the network; measure "
            "with `tritonfleet loadtest`"
        )
    if any(o.purchase == "spot" for o in options):
        notes.append(
            "spot rows burst over the pool's on-demand base"
            + (f" (at least {rails.min_on_demand_nodes}, as {rails.policy_file} requires)" if rails.min_on_demand_nodes else "")
            + "; the cloud may reclaim spot nodes (2 min notice on AWS, 30 s on GCP)"
        )
    if capacity is not None and capacity.unit == TOKENS:
        notes.append("capacity in output tokens/s per replica, measured within the llm block's TTFT and ITL targets "
                     "(`loadtest --llm`); $/1M counts output tokens; another GPU needs its own measurement or an "
                     "--benchmark-model that represents the model")  # fmt: skip
    if target_ms is not None and not any(o.latency_checked for o in options):
        what = "no capacity figure is a measurement with its p99" if capacity is None or capacity.p99_ms is None else ""
        notes.append(f"latency target {deployment.latency_target}: not checked ({what or 'not measured on these GPUs'})")
    return notes
