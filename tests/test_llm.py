"""LLM deployments: the facts table, the memory arithmetic against published figures, and the config rules that
choose or check the tensor-parallel size and refuse what cannot fit."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import ROOT

from tritonfleet.core import llm as llm_memory
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.config.schema import Llm

GIB = 2**30


def _llm(model: str = "Llama-3.1-70B", **changes) -> Llm:
    fields = {"backend": "vllm", "model": model, "precision": "bf16", "max_context": 8192, "max_sequences": 16}
    return Llm.model_validate({**fields, **changes})


# ---- the facts table ----


def test_every_catalog_gpu_has_an_architecture_and_every_row_a_source():
    facts = llm_memory.load_llm_facts()
    assert set(facts.gpu_architectures) == set(load_catalog().gpus)
    for name, model in facts.models.items():
        assert model.source in facts.sources, name
        # config.json's own arithmetic: head size × query heads = hidden size; KV heads group the query heads.
        assert model.head_size * model.attention_heads == model.hidden_size, name
        assert model.attention_heads % model.kv_heads == 0, name
    for arch in facts.architectures.values():
        assert arch.source in facts.sources
    assert facts.runtime_headroom.source in facts.sources


def test_precision_facts():
    """FP8 from Ada (L4, L40S) on, FP4 on Blackwell (B200) only."""
    assert {g for g in load_catalog().gpus if "fp8" in llm_memory.gpu_architecture(g).precisions} == {
        "L4", "L40S", "H100", "H200", "B200"
    }
    assert {g for g in load_catalog().gpus if "fp4" in llm_memory.gpu_architecture(g).precisions} == {"B200"}


# ---- the arithmetic against published figures ----

# Hugging Face, "Llama 3.1 - 405B, 70B & 8B with multilinguality and long context", section "Inference Memory
# Requirements" (https://huggingface.co/blog/llama31, 2024-07-23): weights FP16 / FP8 / INT4 of 8B: 16 / 8 / 4 GB,
# of 70B: 140 / 70 / 35 GB; KV cache (FP16) at 128k tokens: 8B 15.62 GB, 70B 39.06 GB (those two are GiB of 128,000
# tokens: 2 × 32 × 8 × 128 × 2 B × 128,000 = 15.62 × 2^30).
LLAMA31_WEIGHTS_GB = {
    ("Llama-3.1-8B", "fp16"): 16, ("Llama-3.1-8B", "fp8"): 8, ("Llama-3.1-8B", "int4"): 4,
    ("Llama-3.1-70B", "fp16"): 140, ("Llama-3.1-70B", "fp8"): 70, ("Llama-3.1-70B", "int4"): 35,
}
LLAMA31_KV_128K_GIB = {"Llama-3.1-8B": 15.62, "Llama-3.1-70B": 39.06}


@pytest.mark.parametrize(("model", "precision"), list(LLAMA31_WEIGHTS_GB))
def test_weights_match_hugging_face_llama31_table(model, precision):
    fit = llm_memory.memory_fit(_llm(model, precision=precision), llm_memory.load_llm_facts().models[model], "B200", 1)
    assert fit.weights_gb == pytest.approx(LLAMA31_WEIGHTS_GB[model, precision], rel=0.02)


@pytest.mark.parametrize("model", list(LLAMA31_KV_128K_GIB))
def test_kv_cache_matches_hugging_face_llama31_table(model):
    arch = llm_memory.load_llm_facts().models[model]
    kv = llm_memory.kv_cache_bytes_per_token(arch, "fp16", 1) * 128_000
    assert kv / GIB == pytest.approx(LLAMA31_KV_128K_GIB[model], abs=0.01)


def test_mixtral_weights_match_hugging_face_figure():
    """Hugging Face, "Welcome Mixtral" (https://huggingface.co/blog/mixtral, 2023-12-11): "Mixtral requires 90GB of
    VRAM in half-precision" (every expert stays in memory: 46.7 B parameters × 2 B = 93.4 GB = 87 GiB)."""
    arch = llm_memory.load_llm_facts().models["Mixtral-8x7B"]
    fit = llm_memory.memory_fit(_llm("Mixtral-8x7B"), arch, "H200", 1)
    assert fit.weights_gb == pytest.approx(90, rel=0.05)


# Qwen, "Qwen2.5 Speed Benchmark", Transformers tables, batch 1 generating 2048 tokens after an input of 1 token, BF16
# on one A100 80GB: "GPU Memory(GB)" 14.38 for Qwen2.5-7B-Instruct and 28.08 for Qwen2.5-14B-Instruct
# (https://github.com/QwenLM/Qwen2.5/blob/010c37c33b13a1ac59944b349620e13404efe97d/docs/source/benchmark/
# speed_benchmark.rst, read 2026-12-05). Those are GiB: 14.7 B parameters x 2 B = 29.4 GB is above 28.08, so the unit
# is 2^30 bytes. Weights + KV cache of the 2,049 tokens come to 14.28 and 27.76 GiB; the rest is what Transformers
# allocates besides (activations, logits), which tritonfleet's runtime headroom covers.
QWEN25_BF16_PEAK_GIB = {"Qwen2.5-7B": 14.38, "Qwen2.5-14B": 28.08}


@pytest.mark.parametrize("model", list(QWEN25_BF16_PEAK_GIB))
def test_weights_and_kv_cache_match_qwen25_speed_benchmark(model):
    arch = llm_memory.load_llm_facts().models[model]
    fit = llm_memory.memory_fit(_llm(model, precision="bf16", max_sequences=1), arch, "H200", 1)
    computed = (fit.weights_gb * 1e9 + llm_memory.kv_cache_bytes_per_token(arch, "bf16", 1) * 2049) / GIB
    assert computed <= QWEN25_BF16_PEAK_GIB[model]
    assert computed == pytest.approx(QWEN25_BF16_PEAK_GIB[model], rel=0.02)


def test_tensor_parallel_splits_weights_and_kv_heads():
    arch = llm_memory.load_llm_facts().models["Llama-3.1-70B"]
    one, two = (llm_memory.memory_fit(_llm(), arch, "H200", tp) for tp in (1, 2))
    assert not one.fits and two.fits
    assert two.weights_gb == pytest.approx(one.weights_gb / 2) and two.kv_cache_gb == pytest.approx(one.kv_cache_gb / 2)
    assert two.headroom_gb == pytest.approx(14.1)  # 10 % of 141 GB
    # Past the KV heads (8), each GPU still holds a whole head: the KV cache stops shrinking.
    qwen = llm_memory.load_llm_facts().models["Qwen2.5-7B"]  # 4 KV heads
    assert llm_memory.kv_cache_bytes_per_token(qwen, "fp16", 8) == llm_memory.kv_cache_bytes_per_token(qwen, "fp16", 4)
    assert llm_memory.tensor_parallel_sizes(qwen, 8) == [1, 2, 4]  # 28 attention heads: 8 does not divide them


def test_changes_that_fit_name_the_smallest_of_each_kind():
    arch = llm_memory.load_llm_facts().models["Llama-3.1-70B"]
    assert llm_memory.changes_that_fit(_llm(), arch, "H200", 8, 1) == ["gpusPerReplica 2", "precision fp8"]
    long_context = _llm("Llama-3.1-8B", max_context=131072, max_sequences=8)
    changes = llm_memory.changes_that_fit(long_context, llm_memory.load_llm_facts().models["Llama-3.1-8B"], "L40S", 1, 1)
    # 137 GB of KV cache (128 KiB a token × 131,072 × 8): FP8 halves it, still too much; a B200 holds it all.
    assert changes == ["maxContext 25600", "a pool of B200 GPUs (180 GB)"]
    context = int(next(c for c in changes if c.startswith("maxContext")).split()[1])
    assert llm_memory.memory_fit(long_context.model_copy(update={"max_context": context}), llm_memory.load_llm_facts()
                                 .models["Llama-3.1-8B"], "L40S", 1).fits


# ---- the config rules ----


def _prod() -> dict:
    return yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())


def _load(doc: dict):
    from tritonfleet.plan.project import engine_string

    return load_stack_config({k: engine_string(v) for k, v in doc["config"].items()}, "prod")


def _with_llm(pool: str = "h200", drop_gpus: bool = True, **llm) -> dict:
    doc = _prod()
    deployment = doc["config"]["tritonfleet:tritonDeployments"][0]
    fields = {"backend": "tensorrtllm", "model": "Llama-3.1-70B", "precision": "bf16", "maxContext": 8192,
              "maxSequences": 16}
    deployment.update(pool=pool, llm={**fields, **llm})
    if drop_gpus:
        deployment.pop("gpusPerReplica", None)
    return doc


def _problems(doc: dict) -> str:
    """The refusal as one line of words (however the report wraps its lines)."""
    with pytest.raises(ConfigError) as err:
        _load(doc)
    return " ".join(str(err.value).split())


def test_unset_gpus_per_replica_is_the_smallest_size_that_fits():
    config = _load(_with_llm())
    assert config.triton_deployments[0].gpus_per_replica == 2
    assert _load(_with_llm(precision="fp8")).triton_deployments[0].gpus_per_replica == 1


def test_given_gpus_per_replica_that_fits_is_kept():
    doc = _with_llm(drop_gpus=False)
    doc["config"]["tritonfleet:tritonDeployments"][0]["gpusPerReplica"] = 4
    doc["config"]["tritonfleet:tritonDeployments"][0]["maxReplicas"] = 6  # what 3 nodes of 8 GPUs hold at 4 each
    assert _load(doc).triton_deployments[0].gpus_per_replica == 4


def test_model_that_does_not_fit_shows_the_arithmetic_and_the_changes_that_fit():
    doc = _with_llm(drop_gpus=False)
    doc["config"]["tritonfleet:tritonDeployments"][0]["gpusPerReplica"] = 1
    text = _problems(doc)
    assert "tritonDeployments[0].gpusPerReplica = 1" in text
    assert "198.2 GB per GPU at gpusPerReplica 1: weights 141.2 + KV cache 42.9" in text
    assert "2 × 80 layers × 8 KV heads × 128 × 2 B × 8192 tokens × 16 sequences" in text
    assert "does not fit one H200 (141 GB)" in text
    assert "fits with gpusPerReplica 2; or precision fp8" in text
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].gpusPerReplica' 2" in text


def test_model_that_no_node_holds_names_a_larger_node_or_a_larger_gpu():
    doc = _with_llm(pool="l40s", maxSequences=4)  # one L40S (48 GB) per g6e.xlarge node
    text = _problems(doc)
    assert "(the most a g6e.xlarge node allows)" in text
    assert "fits with instanceType g6e.12xlarge (4 L40S) and gpusPerReplica 4; or a pool of H100 GPUs (80 GB): " \
        "instanceType p5.48xlarge (8 H100) and gpusPerReplica 4" in text
    assert "pulumi config set --path 'tritonfleet:gpuPools[1].instanceType' g6e.12xlarge --stack prod" in text
    # A model as large as Llama 3.1 405B in FP8 fits no L40S node and no single GPU: a pool of another GPU does.
    doc = _with_llm(pool="l40s", precision="fp8")
    doc["config"]["tritonfleet:tritonDeployments"][0]["llm"].pop("model")
    doc["config"]["tritonfleet:tritonDeployments"][0]["llm"]["architecture"] = {
        "parametersB": 405, "layers": 126, "attentionHeads": 128, "kvHeads": 8, "headSize": 128,
        "hiddenSize": 16384, "maxContext": 131072,
    }
    text = _problems(doc)
    assert "fits with a pool of H100 GPUs (80 GB): instanceType p5.48xlarge (8 H100) and gpusPerReplica 8" in text
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].pool' '<a pool of larger GPUs>'" in text
    doc["config"]["tritonfleet:tritonDeployments"][0]["llm"]["architecture"]["parametersB"] = 2000
    assert "no single change fits: split the model or shrink it" in _problems(doc)


def test_unknown_model_gets_did_you_mean():
    text = _problems(_with_llm(model="llama-3.1-70b-instruct"))
    assert "tritonDeployments[0].llm.model" in text and "Llama-3.1-70B" in text
    text = _problems(_with_llm(model="Qwen2.5-72"))
    assert "(did you mean Qwen2.5-72B?)" in text


def test_context_above_the_models_maximum():
    text = _problems(_with_llm(model="Mistral-7B", maxContext=65536))
    assert "tritonDeployments[0].llm.maxContext = 65536" in text and "at most 32768: Mistral-7B's longest" in text


def test_fp4_needs_blackwell():
    text = _problems(_with_llm(precision="fp4"))
    assert "tritonDeployments[0].llm.precision" in text and "fp4 needs Blackwell, such as B200" in text


def test_tensor_parallel_must_divide_the_heads_and_fit_a_node():
    doc = _with_llm(model="Qwen2.5-7B", drop_gpus=False)
    doc["config"]["tritonfleet:tritonDeployments"][0]["gpusPerReplica"] = 8
    assert "divides the model's 28 attention heads" in _problems(doc)
    doc = _with_llm(pool="l40s", drop_gpus=False, model="Llama-3.1-8B", precision="int4")
    doc["config"]["tritonfleet:tritonDeployments"][0]["gpusPerReplica"] = 2
    assert "at most 1: a replica must fit on one g6e.xlarge node" in _problems(doc)


def test_inline_architecture_and_its_conflicts():
    arch = {"parametersB": 8.03, "layers": 32, "attentionHeads": 32, "kvHeads": 8, "headSize": 128,
            "hiddenSize": 4096, "maxContext": 131072}
    doc = _with_llm()
    llm = doc["config"]["tritonfleet:tritonDeployments"][0]["llm"]
    del llm["model"]
    llm["architecture"] = arch
    assert _load(doc).triton_deployments[0].gpus_per_replica == 1
    both = copy.deepcopy(doc)
    both["config"]["tritonfleet:tritonDeployments"][0]["llm"]["model"] = "Llama-3.1-8B"
    assert "model or architecture, not both" in _problems(both)
    grouped = copy.deepcopy(doc)
    grouped["config"]["tritonfleet:tritonDeployments"][0]["llm"]["architecture"]["kvHeads"] = 12
    text = _problems(grouped)
    assert "tritonDeployments[0].llm.architecture.kvHeads = 12" in text and "a divisor of attentionHeads (32)" in text
    assert "llm.architecture.kvHeads' 8 --stack prod" in text
    neither = copy.deepcopy(doc)
    del neither["config"]["tritonfleet:tritonDeployments"][0]["llm"]["architecture"]
    assert "tritonDeployments[0].llm.model = (missing)" in _problems(neither)


def test_bad_backend_and_precision_are_schema_problems():
    text = _problems(_with_llm(backend="tgi", precision="fp6"))
    assert "tritonDeployments[0].llm.backend" in text and "tensorrtllm or vllm" in text
    assert "tritonDeployments[0].llm.precision" in text


def test_replica_misfit_says_why_a_gpu_cannot_hold_a_replica():
    """What `tritonfleet size` excludes an LLM's options for (tritonfleet/core/size_options.py)."""
    from tritonfleet.core.config import TritonDeployment

    def deployment(precision: str, gpus: int) -> TritonDeployment:
        llm = {"backend": "vllm", "model": "Llama-3.1-70B", "precision": precision, "maxContext": 8192, "maxSequences": 16}
        return TritonDeployment.model_validate({"name": "llm", "pool": "p", "gpusPerReplica": gpus, "llm": llm})

    assert llm_memory.replica_misfit(deployment("bf16", 2), "H200") is None
    assert llm_memory.replica_misfit(deployment("bf16", 1), "H200") == (
        "the model needs 198.2 GB per GPU at gpusPerReplica 1, over H200's 141 GB"
    )
    assert llm_memory.replica_misfit(deployment("fp4", 8), "H200") == "H200 does not run fp4"
    assert llm_memory.replica_misfit(TritonDeployment.model_validate({"name": "cv", "pool": "p"}), "L4") is None
