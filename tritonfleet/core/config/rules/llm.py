"""LLM deployment rules: a known model (or its facts inline), a context it has, a precision the pool's GPU runs, a
tensor-parallel size that divides the heads and fits one node, and a replica whose memory per GPU fits
(tritonfleet/core/llm.py holds the arithmetic)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

from tritonfleet.core import llm as llm_memory
from tritonfleet.core import pins
from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config.problems import MISSING, choose_from, did_you_mean, nearest
from tritonfleet.core.config.rules.context import RuleContext, listed
from tritonfleet.core.config.schema import Llm, LlmArchitecture, TritonDeployment
from tritonfleet.core.exposure import INTERNAL_APPLICATION, PUBLIC


def check_llm(
    ctx: RuleContext, deployment: TritonDeployment, raw: Mapping[str, Any], itype: InstanceType | None, at: str
) -> None:
    """Every LLM problem of one deployment; the memory check runs once the model, context and precision are sound."""
    llm = deployment.llm
    if llm is None:
        return
    _check_image(ctx, llm, raw, f"{at}.imageTag")
    if llm.backend == "vllm" and llm.layout is not None:
        ctx.remove(f"{at}.llm.layout", llm.layout, "unset for backend vllm (one layout: model.json); llmapi or "
                   "engine are TensorRT-LLM's")  # fmt: skip
    _check_openai_frontend(ctx, deployment, llm, f"{at}.llm")
    arch = _architecture(ctx, llm, f"{at}.llm")
    if arch is None or itype is None:
        return
    sound = _check_context(ctx, llm, arch, f"{at}.llm") & _check_precision(ctx, llm, itype.gpu, f"{at}.llm")
    given = "gpusPerReplica" in raw
    sizes = llm_memory.tensor_parallel_sizes(arch, itype.gpu_count)
    if given and deployment.gpus_per_replica <= itype.gpu_count and deployment.gpus_per_replica not in sizes:
        ctx.add(
            f"{at}.gpusPerReplica",
            deployment.gpus_per_replica,
            f"a tensor-parallel size of {', '.join(map(str, sizes))}: one that divides the model's "
            f"{arch.attention_heads} attention heads, on one {itype.name} node ({itype.gpu_count} GPUs)",
            max(t for t in sizes if t <= deployment.gpus_per_replica),
        )
        return
    if sound and deployment.gpus_per_replica <= itype.gpu_count:
        _check_fit(ctx, deployment, llm, arch, itype, given, at)


def _check_image(ctx: RuleContext, llm: Llm, raw: Mapping[str, Any], key: str) -> None:
    """An image tag given for an LLM deployment is its backend's variant (the standard image has neither backend)."""
    pinned = pins.TRITON_LLM_IMAGE_TAGS[llm.backend]
    variant = pinned.split("-", 1)[1]
    tag = raw.get("imageTag")
    if isinstance(tag, str) and not tag.endswith(f"-{variant}"):
        ctx.add(key, tag, f"a {llm.backend} image tag, <YY.MM>-{variant} (unset: the pinned {pinned})", pinned)


def _check_openai_frontend(ctx: RuleContext, deployment: TritonDeployment, llm: Llm, at: str) -> None:
    """The OpenAI-compatible frontend only where it can serve (docs/serving.md "The OpenAI-compatible frontend")."""
    if not llm.openai_frontend:
        if llm.tokenizer is not None:
            ctx.remove(f"{at}.tokenizer", llm.tokenizer, "a tokenizer only with openaiFrontend true (it is the "
                       "frontend's, for chat templates)")  # fmt: skip
        return
    conflicts = []
    if llm.backend == "tensorrtllm":
        conflicts.append("backend tensorrtllm (its 26.07 image does not carry the frontend: NVIDIA's guide installs "
                         "it by hand; the vllm image does)")  # fmt: skip
    if deployment.model_control_mode == "poll":
        conflicts.append("modelControlMode poll (the frontend serves the models loaded at its start: none or explicit)")
    if deployment.access.mode in (INTERNAL_APPLICATION, PUBLIC):
        conflicts.append(f"access mode {deployment.access.mode} (the Ingress and Gateway routes reach Triton's KServe "
                         "port, on the pod's loopback here: exposure cluster, or internal with a network load "
                         "balancer)")  # fmt: skip
    if deployment.scale_to_zero is not None:
        conflicts.append("scaleToZero (its interceptor forwards to the KServe port)")
    if deployment.model_versions:
        conflicts.append("modelVersions (the in-process server takes no --model-config-name)")
    tuned = sorted(to_camel(f) for f in deployment.tuning.model_fields_set - {"shm_gi"})
    if tuned:
        conflicts.append(f"tuning {', '.join(tuned)} (tritonserver flags the in-process server does not take)")
    if conflicts:
        ctx.add(f"{at}.openaiFrontend", True, "false with " + "; ".join(conflicts), False)


def _architecture(ctx: RuleContext, llm: Llm, at: str) -> LlmArchitecture | None:
    models = list(llm_memory.load_llm_facts().models)
    if llm.model is not None and llm.architecture is not None:
        ctx.remove(f"{at}.architecture", "(an object)", "model or architecture, not both")
        return None
    if llm.model is None and llm.architecture is None:
        ctx.add(
            f"{at}.model", MISSING,
            f"a model of the facts table ({', '.join(models)}), or its facts inline as llm.architecture",
            choose_from(models),
        )
        return None
    arch = llm_memory.architecture_of(llm)
    if arch is None:
        ctx.add(
            f"{at}.model", llm.model,
            f"a model of the facts table{did_you_mean(llm.model, models)}: {', '.join(models)}; another model's "
            "facts go inline as llm.architecture",
            nearest(llm.model, models) or choose_from(models),
        )
    elif arch.attention_heads % arch.kv_heads:
        ctx.add(
            f"{at}.architecture.kvHeads", arch.kv_heads,
            f"a divisor of attentionHeads ({arch.attention_heads}): each KV head serves a group of query heads",
            max(h for h in range(1, arch.kv_heads + 1) if arch.attention_heads % h == 0),
        )
        return None
    return arch


def _check_context(ctx: RuleContext, llm: Llm, arch: LlmArchitecture, at: str) -> bool:
    if llm.max_context <= arch.max_context:
        return True
    name = llm.model or "the model"
    ctx.add(f"{at}.maxContext", llm.max_context, f"at most {arch.max_context}: {name}'s longest context", arch.max_context)
    return False


def _check_precision(ctx: RuleContext, llm: Llm, gpu: str, at: str) -> bool:
    arch = llm_memory.gpu_architecture(gpu)
    if arch is None:
        return False
    ok = True
    if llm.precision not in arch.precisions:
        ctx.add(
            f"{at}.precision", llm.precision,
            f"a precision {gpu} (compute capability {arch.compute_capability}) runs: {', '.join(arch.precisions)} "
            f"({'fp4 needs Blackwell, such as B200' if llm.precision == 'fp4' else 'fp8 needs Ada or newer'})",
            "fp8" if "fp8" in arch.precisions else "bf16",
        )
        ok = False
    if llm.kv_cache_precision == "fp8" and "fp8" not in arch.precisions:
        ctx.add(f"{at}.kvCachePrecision", "fp8", f"fp16 or bf16: {gpu} has no FP8", "fp16")
        ok = False
    return ok


def _check_fit(
    ctx: RuleContext,
    deployment: TritonDeployment,
    llm: Llm,
    arch: LlmArchitecture,
    itype: InstanceType,
    given: bool,
    at: str,
) -> None:
    """With gpusPerReplica given, it must fit; unset, the loader chooses the smallest size that fits, if one does."""
    tp = deployment.gpus_per_replica if given else 1
    fit = llm_memory.memory_fit(llm, arch, itype.gpu, tp)
    if given and fit.fits:
        return
    if not given and llm_memory.smallest_fitting_tensor_parallel(llm, arch, itype.gpu, itype.gpu_count) is not None:
        return
    name = llm.model or "the model"
    if not given:
        tp = max(llm_memory.tensor_parallel_sizes(arch, itype.gpu_count))
        fit = llm_memory.memory_fit(llm, arch, itype.gpu, tp)
    changes = llm_memory.changes_that_fit(llm, arch, itype.gpu, itype.gpu_count, tp, ctx.cloud)
    fixes = "; fits with " + "; or ".join(changes) if changes else "; no single change fits: split the model or shrink it"
    where = "" if given else f" (the most a {itype.name} node allows)"
    allowed = f"a replica that fits: {name} in {llm.precision} needs {fit.explain()}{where}{fixes}"
    first = changes[0].split() if changes else [""]
    if first[0] == "gpusPerReplica":
        ctx.add(f"{at}.gpusPerReplica", deployment.gpus_per_replica if given else MISSING, allowed, int(first[1]))
    elif first[0] in ("precision", "kvCachePrecision", "maxContext"):
        key, value = first
        ctx.add(f"{at}.llm.{key}", getattr(llm, _snake(key)), allowed, int(value) if value.isdigit() else value)
    elif first[0] == "instanceType":
        index = next(i for i, raw in enumerate(listed(ctx.data, "gpuPools")) if raw.get("name") == deployment.pool)
        ctx.add(f"gpuPools[{index}].instanceType", itype.name, allowed, first[1])
    else:
        ctx.add(f"{at}.pool", deployment.pool, allowed, "<a pool of larger GPUs>")


def _snake(key: str) -> str:
    return {"precision": "precision", "kvCachePrecision": "kv_cache_precision", "maxContext": "max_context"}[key]
