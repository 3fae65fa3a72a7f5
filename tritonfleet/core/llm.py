"""Will an LLM fit its GPUs? The memory per GPU of a tensor-parallel replica, from sourced facts (llm_facts.yaml).

Per GPU, at tensor-parallel size TP (= gpusPerReplica, one node):
  weights   = parameters × bytes per weight / TP
  KV cache  = 2 (K and V) × layers × ceil(KV heads / TP) × head size × bytes per element × tokens
              where tokens = maxContext × maxSequences (every sequence at its longest: the worst case the replica
              admits), and a GPU holds at least one KV head (both backends replicate heads when TP > KV heads)
  headroom  = runtimeHeadroom × the GPU's memory (CUDA context, NCCL buffers, allocator; vLLM's default
              --gpu-memory-utilization 0.9)
It fits when weights + KV cache + headroom <= the GPU's memory (catalog.yaml, GB = 10^9 bytes).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field

from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.cloud import cloud as registered_cloud
from tritonfleet.core.config.schema import Llm, LlmArchitecture, TritonDeployment

GB = 1e9
# Tensor-parallel sizes both backends take on one node (a power of two that divides the attention heads).
TENSOR_PARALLEL_SIZES = (1, 2, 4, 8)
SIXTEEN_BIT = ("fp16", "bf16")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


class FactSource(_Strict):
    url: str
    as_of: dt.date = Field(alias="asOf")


class ModelFacts(LlmArchitecture):
    source: str


class Headroom(_Strict):
    fraction: float = Field(gt=0, lt=1)
    source: str


class Architecture(_Strict):
    compute_capability: str = Field(alias="computeCapability")
    precisions: tuple[str, ...]
    source: str


class LlmFacts(_Strict):
    sources: dict[str, FactSource]
    runtime_headroom: Headroom = Field(alias="runtimeHeadroom")
    precision_bytes: dict[str, float] = Field(alias="precisionBytes")
    architectures: dict[str, Architecture]
    gpu_architectures: dict[str, str] = Field(alias="gpuArchitectures")
    models: dict[str, ModelFacts]


@cache
def load_llm_facts() -> LlmFacts:
    text = resources.files("tritonfleet.core").joinpath("llm_facts.yaml").read_text(encoding="utf-8")
    return LlmFacts.model_validate(yaml.safe_load(text))


def architecture_of(llm: Llm) -> LlmArchitecture | None:
    """The model's facts: inline, or the table's row; None for a name the table lacks."""
    if llm.architecture is not None:
        return llm.architecture
    return load_llm_facts().models.get(llm.model or "")


def gpu_architecture(gpu: str) -> Architecture | None:
    facts = load_llm_facts()
    name = facts.gpu_architectures.get(gpu)
    return facts.architectures[name] if name else None


def kv_precision(llm: Llm) -> str:
    return llm.kv_cache_precision or "fp16"


@dataclass(frozen=True)
class MemoryFit:
    """One replica's memory per GPU against one GPU's memory, in GB."""

    gpu: str
    gpu_memory_gb: float
    tensor_parallel: int
    weights_gb: float
    kv_cache_gb: float
    headroom_gb: float
    kv_formula: str  # the KV cache's arithmetic, for messages

    @property
    def needed_gb(self) -> float:
        return self.weights_gb + self.kv_cache_gb + self.headroom_gb

    @property
    def fits(self) -> bool:
        return self.needed_gb <= self.gpu_memory_gb

    def explain(self) -> str:
        verdict = "fits" if self.fits else "does not fit"
        return (
            f"{self.needed_gb:.1f} GB per GPU at gpusPerReplica {self.tensor_parallel}: weights "
            f"{self.weights_gb:.1f} + KV cache {self.kv_cache_gb:.1f} ({self.kv_formula}) + headroom "
            f"{self.headroom_gb:.1f} GB {verdict} one {self.gpu} ({self.gpu_memory_gb:g} GB)"
        )


def kv_cache_bytes_per_token(arch: LlmArchitecture, precision: str, tensor_parallel: int) -> float:
    """Bytes one token's keys and values take on one GPU of a TP-sized replica."""
    heads = math.ceil(arch.kv_heads / tensor_parallel)
    return 2 * arch.layers * heads * arch.head_size * load_llm_facts().precision_bytes[precision]


def memory_fit(llm: Llm, arch: LlmArchitecture, gpu: str, tensor_parallel: int) -> MemoryFit:
    facts = load_llm_facts()
    memory_gb = float(load_catalog().gpus[gpu].memory_gb)
    kv = kv_precision(llm)
    tokens = llm.max_context * llm.max_sequences
    heads = math.ceil(arch.kv_heads / tensor_parallel)
    kv_bytes = facts.precision_bytes[kv]
    formula = (
        f"2 × {arch.layers} layers × {heads} KV heads × {arch.head_size} × {kv_bytes:g} B × "
        f"{llm.max_context} tokens × {llm.max_sequences} sequences"
    )
    return MemoryFit(
        gpu=gpu,
        gpu_memory_gb=memory_gb,
        tensor_parallel=tensor_parallel,
        weights_gb=arch.parameters_b * facts.precision_bytes[llm.precision] / tensor_parallel,
        kv_cache_gb=kv_cache_bytes_per_token(arch, kv, tensor_parallel) * tokens / GB,
        headroom_gb=facts.runtime_headroom.fraction * memory_gb,
        kv_formula=formula,
    )


def tensor_parallel_sizes(arch: LlmArchitecture, node_gpus: int) -> list[int]:
    """The tensor-parallel sizes a replica may take on a node of `node_gpus` GPUs (dividing the attention heads)."""
    return [tp for tp in TENSOR_PARALLEL_SIZES if tp <= node_gpus and arch.attention_heads % tp == 0]


def smallest_fitting_tensor_parallel(llm: Llm, arch: LlmArchitecture, gpu: str, node_gpus: int) -> int | None:
    return next((tp for tp in tensor_parallel_sizes(arch, node_gpus) if memory_fit(llm, arch, gpu, tp).fits), None)


def longest_fitting_context(llm: Llm, arch: LlmArchitecture, gpu: str, tensor_parallel: int) -> int:
    """The longest maxContext (a multiple of 1024 from 1024 up, else 0) that fits at this tensor-parallel size."""
    fit = memory_fit(llm, arch, gpu, tensor_parallel)
    room_bytes = (fit.gpu_memory_gb - fit.headroom_gb - fit.weights_gb) * GB
    per_token = kv_cache_bytes_per_token(arch, kv_precision(llm), tensor_parallel) * llm.max_sequences
    tokens = int(room_bytes // per_token) if room_bytes > 0 else 0
    return tokens // 1024 * 1024


def changes_that_fit(
    llm: Llm, arch: LlmArchitecture, gpu: str, node_gpus: int, tensor_parallel: int, cloud: str | None = None
) -> list[str]:
    """The smallest single changes that make a replica fit, the cheapest first (more GPUs, fewer bytes, fewer
    tokens, a larger GPU); each in config words. With `cloud`, more GPUs may come from a larger instance type of
    the same GPU when this node has too few."""
    changes = []
    more = [tp for tp in tensor_parallel_sizes(arch, node_gpus) if tp > tensor_parallel]
    tp = next((t for t in more if memory_fit(llm, arch, gpu, t).fits), None)
    if tp is not None:
        changes.append(f"gpusPerReplica {tp}")
    elif cloud is not None:
        changes += _larger_node(llm, arch, gpu, node_gpus, cloud)
    supported = gpu_architecture(gpu)
    if llm.precision in SIXTEEN_BIT and supported and "fp8" in supported.precisions:
        fp8 = llm.model_copy(update={"precision": "fp8"})
        if memory_fit(fp8, arch, gpu, tensor_parallel).fits:
            changes.append("precision fp8")
    if kv_precision(llm) in SIXTEEN_BIT and supported and "fp8" in supported.precisions:
        fp8_kv = llm.model_copy(update={"kv_cache_precision": "fp8"})
        if memory_fit(fp8_kv, arch, gpu, tensor_parallel).fits:
            changes.append("kvCachePrecision fp8")
    context = longest_fitting_context(llm, arch, gpu, tensor_parallel)
    if context >= 1024:
        changes.append(f"maxContext {context}")
    catalog = load_catalog()
    for other in sorted(catalog.gpus, key=lambda g: catalog.gpus[g].memory_gb):
        other_arch = gpu_architecture(other)
        if catalog.gpus[other].memory_gb <= catalog.gpus[gpu].memory_gb or other_arch is None:
            continue
        if llm.precision not in other_arch.precisions:
            continue
        memory = f"a pool of {other} GPUs ({catalog.gpus[other].memory_gb} GB)"
        if memory_fit(llm, arch, other, tensor_parallel).fits:
            changes.append(memory)
            break
        node = _larger_node(llm, arch, other, 0, cloud) if cloud is not None else []
        if node:
            changes.append(f"{memory}: {node[0]}")
            break
    return changes


def _larger_node(llm: Llm, arch: LlmArchitecture, gpu: str, node_gpus: int, cloud: str) -> list[str]:
    """The instance type of the same GPU with the fewest GPUs above this node's on which some replica size fits (of an
    architecture the cloud's GPU nodes are built for)."""
    architectures = registered_cloud(cloud).gpu_node_architectures
    for itype in sorted(load_catalog().types_for(cloud, gpu), key=lambda t: (t.gpu_count, t.name)):
        if itype.gpu_count <= node_gpus or itype.host.arch not in architectures:
            continue
        tp = smallest_fitting_tensor_parallel(llm, arch, gpu, itype.gpu_count)
        if tp is not None:
            return [f"instanceType {itype.name} ({itype.gpu_count} {gpu}) and gpusPerReplica {tp}"]
    return []


def replica_misfit(deployment: TritonDeployment, gpu: str) -> str | None:
    """Why an LLM deployment's replica (its gpusPerReplica GPUs) cannot run on GPUs of type `gpu`, or None: a
    precision the GPU lacks, or memory per GPU above the GPU's. None for a deployment that is not an LLM."""
    llm = deployment.llm
    arch = architecture_of(llm) if llm is not None else None
    if llm is None or arch is None:
        return None
    supported = gpu_architecture(gpu)
    if supported is None or llm.precision not in supported.precisions:
        return f"{gpu} does not run {llm.precision}"
    fit = memory_fit(llm, arch, gpu, deployment.gpus_per_replica)
    if fit.fits:
        return None
    return f"the model needs {fit.needed_gb:.1f} GB per GPU at gpusPerReplica {fit.tensor_parallel}, over {gpu}'s {fit.gpu_memory_gb:g} GB"
