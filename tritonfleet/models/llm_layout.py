"""What `models validate --stack S --deployment D` checks offline in an LLM repository against the deployment's `llm`.

vLLM backend: a model with `backend: "vllm"` whose version folder holds `model.json`, vLLM's engine arguments
(triton-inference-server/vllm_backend README): tensor_parallel_size must be gpusPerReplica, max_model_len and
max_num_seqs must stay within what the memory check assumed (llm.maxContext, llm.maxSequences), and
gpu_memory_utilization within the 10 % headroom it kept.
TensorRT-LLM backend, LLM API layout (upstream's quick start since April 2026): one Python model whose version
folder holds model.py and model.yaml, checked by models/llmapi_layout.py.
TensorRT-LLM backend, legacy TensorRT-engine layout (deprecated: the pinned image's TensorRT-LLM 1.2.1 still loads
it, later TensorRT-LLM has no engine backend; pins.TRITON_TENSORRT_LLM_VERSIONS): the ensemble of `preprocessing`, `tensorrt_llm` (`backend: "tensorrtllm"`), `postprocessing`
and an optional `tensorrt_llm_bls` (tensorrtllm_backend all_models/inflight_batcher_llm); the engine built with
trtllm-build writes `config.json` (pretrained_config.mapping.tp_size, build_config.max_seq_len, max_batch_size) and one
`rank<N>.engine` per GPU. Parameters left as the templates' `${...}` placeholders (fill_template.py not run) are
errors; the preprocessing model needs its tokenizer_dir.

The engine's GPU: a TensorRT engine deserialises only on the compute capability it was built for, and TensorRT-LLM's
builder sets no TensorRT hardware-compatibility level (tensorrt_llm/builder.py, create_builder_config). The only
record of the build GPU in config.json is build_config.auto_parallel_config.cluster_key, which trtllm-build fills
from the GPU it runs on (tensorrt_llm/auto_parallel/cluster_info.py infer_cluster_config: a known key such as
"H100-SXM", "L40S", else the device name with dashes, "NVIDIA-B200") unless --cluster_key names one; releases after
the auto_parallel module was removed (NVIDIA/TensorRT-LLM PR #8329, merged after review in October 2025) write none,
and then the check says so. The rank<N>.engine plans are not read: TensorRT does not document their format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tritonfleet.core import pins
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.llm import load_llm_facts
from tritonfleet.core.llm_exports import serving_layout
from tritonfleet.models.llmapi_layout import check_llmapi, is_llmapi, read_mapping
from tritonfleet.models.validate import CONFIG_FILE, Finding, Model, Replica, Report

LLM_BACKENDS = ("vllm", "tensorrtllm")
TOKENIZER_MODELS = ("preprocessing", "postprocessing")


def check_llm_layout(report: Report, deployment: TritonDeployment, replica: Replica) -> list[Finding]:
    """Findings of a repository that does not serve the deployment's LLM as declared on its replica's GPUs."""
    llm = deployment.llm
    if llm is None:
        return []
    findings = [f for m in report.models for f in _placeholders(m)]
    engines = [m for m in report.models if m.backend in LLM_BACKENDS or is_llmapi(m)]
    if not engines:
        expected = "backend: \"vllm\" with <version>/model.json" if llm.backend == "vllm" else (
            "TensorRT-LLM's LLM API model (backend: \"python\" with <version>/model.py and model.yaml)"
        )
        findings.append(Finding("error", report.root, f"no {llm.backend} model: deployment '{deployment.name}' "
                                f"declares llm.backend {llm.backend}; expect {expected}"))
        return findings
    for model in engines:
        backend = "tensorrtllm" if is_llmapi(model) else model.backend
        if backend != llm.backend:
            findings.append(Finding("error", model.directory / CONFIG_FILE, f"backend {backend}, but deployment "
                                    f"'{deployment.name}' declares llm.backend {llm.backend} (and runs its image)"))
        elif model.backend == "vllm":
            findings += _check_vllm(model, deployment)
        elif (layout := "llmapi" if is_llmapi(model) else "engine") != serving_layout(llm):
            findings.append(_other_layout(model, deployment, layout))
        elif is_llmapi(model):
            findings += check_llmapi(model, deployment, replica)
        else:
            findings.append(_engine_layout(model, deployment))
            findings += _check_tensorrt_llm(model, deployment, replica)
    if llm.backend == "tensorrtllm":
        findings += _check_tokenizer(report)
    return findings


LAYOUT_NAMES = {"llmapi": "the LLM API layout (a python model with model.yaml)",
                "engine": "the TensorRT-engine layout (backend tensorrtllm)"}  # fmt: skip


def _other_layout(model: Model, deployment: TritonDeployment, layout: str) -> Finding:
    """A TensorRT-LLM model of the layout the deployment does not declare: its HPA and alerts read the declared
    layout's metrics (tritonfleet/core/llm_exports.py), which this model does not export."""
    assert deployment.llm is not None
    declared = serving_layout(deployment.llm)
    return Finding("error", model.directory / CONFIG_FILE, f"{LAYOUT_NAMES[layout]}, but deployment "
                   f"'{deployment.name}' declares llm.layout {declared} (default llmapi), whose metrics its HPA and "
                   f"alerts read; set llm.layout {layout} in the stack, or publish {LAYOUT_NAMES[declared]}")


def _engine_layout(model: Model, deployment: TritonDeployment) -> Finding:
    """The legacy TensorRT-engine layout against the TensorRT-LLM the deployment's image carries (pins)."""
    tag = deployment.image_tag
    if not tag.endswith("-trtllm-python-py3"):
        tag = pins.TRITON_LLM_IMAGE_TAGS["tensorrtllm"]
    release = tag.split("-")[0]
    version = pins.TRITON_TENSORRT_LLM_VERSIONS.get(release)
    move = ("move to the LLM API layout: one python model, tensorrt_llm, with upstream's model.py and a model.yaml "
            "naming a Hugging Face checkpoint, no engine to build (docs/serving.md)")
    path = model.directory / CONFIG_FILE
    if version is None:
        return Finding("warning", path, f"the TensorRT-engine layout (backend tensorrtllm): whether Triton {release}'s "
                       "image still loads it is not known here (TensorRT-LLM removed this backend in July 2026); "
                       f"{move}")
    if version not in pins.TENSORRT_LLM_WITH_ENGINE_BACKEND:
        return Finding("error", path, f"the TensorRT-engine layout (backend tensorrtllm): Triton {release}'s image "
                       f"carries TensorRT-LLM {version}, which has no engine backend to load it; {move}")
    return Finding("warning", path, f"the TensorRT-engine layout (backend tensorrtllm) is deprecated: Triton "
                   f"{release}'s image carries TensorRT-LLM {version}, which still loads it, but TensorRT-LLM has "
                   f"removed this backend since (NVIDIA/TensorRT-LLM PR #15907); {move}")


def _parameters(model: Model) -> dict[str, str]:
    return {key: value.string_value for key, value in model.config.parameters.items()}


def _placeholders(model: Model) -> list[Finding]:
    return [
        Finding("error", model.directory / CONFIG_FILE, f"parameter {key} is still the template's {value}: fill it "
                "(tensorrtllm_backend tools/fill_template.py) before publishing")
        for key, value in sorted(_parameters(model).items())
        if value.startswith("${")
    ]


def _check_vllm(model: Model, deployment: TritonDeployment) -> list[Finding]:
    llm = deployment.llm
    assert llm is not None
    headroom = load_llm_facts().runtime_headroom.fraction
    findings: list[Finding] = []
    # The backend exports its vllm: families only with this parameter "true" and disable_log_stats off
    # (vllm_backend src/model.py, r26.01): without them the HPA lacks its sequence and TTFT metrics.
    if _parameters(model).get("REPORT_CUSTOM_METRICS", "").lower() != "true":
        findings.append(Finding("error", model.directory / CONFIG_FILE, "no parameter REPORT_CUSTOM_METRICS \"true\": "
                                "the vLLM backend then exports no vllm: metric, and the HPA, missing its sequence and "
                                "TTFT metrics, never scales down; add parameters { key: \"REPORT_CUSTOM_METRICS\" "
                                "value: { string_value: \"true\" } }"))
    for version in model.served_versions:
        path = model.directory / str(version) / "model.json"
        args = read_mapping(path, findings, "JSON")
        if args is None:
            continue
        if args.get("disable_log_stats") is True:
            findings.append(Finding("error", path, "disable_log_stats true: the vLLM backend then exports no vllm: "
                                    "metric, and the HPA never scales down; remove it"))
        tp = args.get("tensor_parallel_size", 1)
        if tp != deployment.gpus_per_replica:
            findings.append(Finding("error", path, f"tensor_parallel_size {tp}, but a replica of '{deployment.name}' "
                                    f"has gpusPerReplica {deployment.gpus_per_replica} GPUs"))
        length = args.get("max_model_len")
        if length is None:
            findings.append(Finding("error", path, f"no max_model_len: vLLM then takes the model's whole context, "
                                    f"beyond llm.maxContext {llm.max_context} that the memory check assumed; set it"))
        elif not isinstance(length, int) or length > llm.max_context:
            findings.append(Finding("error", path, f"max_model_len {length} is above llm.maxContext "
                                    f"{llm.max_context}, which the memory check assumed"))
        sequences = args.get("max_num_seqs", 256)  # vLLM's default
        if not isinstance(sequences, int) or sequences > llm.max_sequences:
            findings.append(Finding("warning", path, f"max_num_seqs {sequences} is above llm.maxSequences "
                                    f"{llm.max_sequences}: more sequences than the memory check assumed share the KV "
                                    "cache (vLLM preempts them when it fills)"))
        share = args.get("gpu_memory_utilization", 0.9)
        if not isinstance(share, (int, float)) or share > 1 - headroom:
            findings.append(Finding("warning", path, f"gpu_memory_utilization {share} leaves less than the "
                                    f"{headroom:.0%} of GPU memory the memory check kept for the runtime"))
    return findings


def _check_tensorrt_llm(model: Model, deployment: TritonDeployment, replica: Replica) -> list[Finding]:
    llm = deployment.llm
    assert llm is not None
    findings: list[Finding] = []
    for version in model.served_versions:
        folder = model.directory / str(version)
        path = folder / "config.json"
        if not path.is_file():
            findings.append(Finding("warning", folder, "no engine config.json here (the engine lives elsewhere): its "
                                    "tensor-parallel size and max_seq_len were not checked"))
            continue
        engine = read_mapping(path, findings, "JSON")
        if engine is None:
            continue
        mapping = engine.get("pretrained_config", {}).get("mapping", {})
        build = engine.get("build_config", {})
        tp = mapping.get("tp_size", 1) * mapping.get("pp_size", 1)
        if tp != deployment.gpus_per_replica:
            findings.append(Finding("error", path, f"an engine for {tp} GPUs (tp_size x pp_size), but a replica of "
                                    f"'{deployment.name}' has gpusPerReplica {deployment.gpus_per_replica}"))
        for rank in range(tp if isinstance(tp, int) else 0):
            if not (folder / f"rank{rank}.engine").is_file():
                findings.append(Finding("error", folder / f"rank{rank}.engine", "missing: one engine file per GPU"))
        length = build.get("max_seq_len")
        if isinstance(length, int) and length < llm.max_context:
            findings.append(Finding("error", path, f"max_seq_len {length} is below llm.maxContext {llm.max_context}: "
                                    "the engine refuses the longer sequences the deployment promises"))
        batch = build.get("max_batch_size")
        if isinstance(batch, int) and batch < llm.max_sequences:
            findings.append(Finding("warning", path, f"max_batch_size {batch} is below llm.maxSequences "
                                    f"{llm.max_sequences}: a replica serves at most {batch} sequences at once"))
        findings += _check_engine_gpu(build, path, deployment.name, replica)
    return findings


def engine_gpu(cluster_key: str) -> str:
    """The GPU a TensorRT-LLM cluster_key names, as the catalog names GPUs: infer_cluster_key's keys are the product
    and its variant ("H100-SXM", "A100-PCIe-80GB"), its fallback the device name ("NVIDIA-B200")."""
    return cluster_key.removeprefix("NVIDIA-").split("-")[0]


def _check_engine_gpu(build: dict[str, Any], path: Path, name: str, replica: Replica) -> list[Finding]:
    """The engine's build GPU (its cluster_key) against the replica's GPU: another compute capability, or a GPU the
    catalog does not know, is refused; the same capability on another GPU model is a warning (TensorRT loads it and
    warns); no key is a warning that nothing was checked."""
    pool = f"{replica.gpu} (compute capability {replica.compute_capability})"
    parallel = build.get("auto_parallel_config")
    key = parallel.get("cluster_key") if isinstance(parallel, dict) else None
    if not isinstance(key, str) or not key:
        return [Finding("warning", path, "the engine's GPU architecture was not checked: config.json records no "
                        "build_config.auto_parallel_config.cluster_key (TensorRT-LLM releases without auto parallel "
                        f"write none). TensorRT refuses an engine built for another architecture: build it on "
                        f"{pool}, the GPU of deployment '{name}'")]
    gpu = engine_gpu(key)
    if gpu == replica.gpu:
        return []
    rebuild = f"Rebuild it with trtllm-build on {replica.gpu}"
    known = load_catalog().gpus.get(gpu)
    if known is None:
        return [Finding("error", path, f"an engine built on {gpu} (cluster_key {key}), a GPU tritonfleet's catalog "
                        f"does not list, but deployment '{name}' runs on {pool}: TensorRT-LLM supports an engine only "
                        f"on the GPU type it was built on. {rebuild}")]
    built = f"{gpu} (cluster_key {key}, compute capability {known.compute_capability})"
    if known.compute_capability == replica.compute_capability:
        return [Finding("warning", path, f"an engine built on {built}, but deployment '{name}' runs on {replica.gpu}: "
                        "the same architecture, so TensorRT loads it, warning that an engine used across device models "
                        f"may run slower or fail; rebuild it with trtllm-build on {replica.gpu}")]
    return [Finding("error", path, f"an engine built on {built}, but deployment '{name}' runs on {pool}: TensorRT "
                    f"refuses an engine built for another GPU architecture. {rebuild}, or move the deployment to a "
                    f"pool of {gpu}")]


def _check_tokenizer(report: Report) -> list[Finding]:
    findings = []
    names = {m.name: m for m in report.models}
    for name in TOKENIZER_MODELS:
        model = names.get(name)
        if model is None:
            continue
        if not _parameters(model).get("tokenizer_dir"):
            findings.append(Finding("error", model.directory / CONFIG_FILE, "no tokenizer_dir parameter: the "
                                    f"{name} model loads its tokenizer from it"))
    return findings


def stack_deployment(project_dir: Path, stack: str, name: str) -> TritonDeployment | None:
    """The deployment `name` of a stack as validated (its gpusPerReplica chosen where unset), or None."""
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.plan.project import load_project, stack_config

    raw, _ = stack_config(load_project(project_dir), stack)
    return next((d for d in load_stack_config(raw, stack).triton_deployments if d.name == name), None)
