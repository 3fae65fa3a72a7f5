"""Properties of the LLM memory arithmetic over generated models (hypothesis): more GPUs never need more memory per
GPU, the chosen tensor-parallel size is the smallest that fits, and every change a refusal proposes really fits."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tritonfleet.core import llm as llm_memory
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config.schema import PRECISIONS, Llm, LlmArchitecture

GPUS = sorted(load_catalog().gpus)


@st.composite
def architectures(draw) -> LlmArchitecture:
    kv_heads = draw(st.sampled_from([1, 2, 4, 8, 16]))
    attention_heads = kv_heads * draw(st.integers(1, 16))
    head_size = draw(st.sampled_from([64, 128, 256]))
    return LlmArchitecture(
        parameters_b=draw(st.floats(0.5, 1000, allow_nan=False)),
        layers=draw(st.integers(1, 160)),
        attention_heads=attention_heads,
        kv_heads=kv_heads,
        head_size=head_size,
        hidden_size=head_size * attention_heads,
        max_context=131072,
    )


@st.composite
def deployments(draw) -> tuple[Llm, LlmArchitecture, str, int]:
    arch = draw(architectures())
    gpu = draw(st.sampled_from(GPUS))
    precision = draw(st.sampled_from([p for p in PRECISIONS if p in llm_memory.gpu_architecture(gpu).precisions]))
    llm = Llm(
        backend=draw(st.sampled_from(["tensorrtllm", "vllm"])),
        architecture=arch,
        precision=precision,
        kv_cache_precision=draw(st.sampled_from([None, "fp16"])),
        max_context=draw(st.integers(1, arch.max_context)),
        max_sequences=draw(st.integers(1, 512)),
    )
    return llm, arch, gpu, draw(st.sampled_from([1, 2, 4, 8]))


@settings(max_examples=100, deadline=None)
@given(deployments())
def test_more_gpus_never_need_more_memory_per_gpu(case):
    llm, arch, gpu, node_gpus = case
    needs = [llm_memory.memory_fit(llm, arch, gpu, tp).needed_gb for tp in llm_memory.tensor_parallel_sizes(arch, node_gpus)]
    assert all(later <= earlier + 1e-9 for earlier, later in itertools.pairwise(needs))


@settings(max_examples=100, deadline=None)
@given(deployments())
def test_the_chosen_size_is_the_smallest_that_fits(case):
    llm, arch, gpu, node_gpus = case
    chosen = llm_memory.smallest_fitting_tensor_parallel(llm, arch, gpu, node_gpus)
    fitting = [tp for tp in llm_memory.tensor_parallel_sizes(arch, node_gpus) if llm_memory.memory_fit(llm, arch, gpu, tp).fits]
    assert chosen == (fitting[0] if fitting else None)


@settings(max_examples=100, deadline=None)
@given(deployments())
def test_every_proposed_change_fits(case):
    """What a refusal proposes in config words, applied, fits (GPU and node changes name their own sizes)."""
    llm, arch, gpu, node_gpus = case
    tp = 1
    if llm_memory.memory_fit(llm, arch, gpu, tp).fits:
        return
    for change in llm_memory.changes_that_fit(llm, arch, gpu, node_gpus, tp):
        key, value = change.split()[:2]
        if key == "gpusPerReplica":
            assert llm_memory.memory_fit(llm, arch, gpu, int(value)).fits, change
        elif key == "precision":
            assert llm_memory.memory_fit(llm.model_copy(update={"precision": value}), arch, gpu, tp).fits, change
        elif key == "kvCachePrecision":
            assert llm_memory.memory_fit(llm.model_copy(update={"kv_cache_precision": value}), arch, gpu, tp).fits
        elif key == "maxContext":
            context = int(value)
            assert context < llm.max_context
            assert llm_memory.memory_fit(llm.model_copy(update={"max_context": context}), arch, gpu, tp).fits
            longer = llm.model_copy(update={"max_context": context + 1024})
            assert not llm_memory.memory_fit(longer, arch, gpu, tp).fits, "the longest context that fits, to 1024"
