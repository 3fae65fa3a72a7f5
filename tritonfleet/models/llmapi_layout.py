"""The TensorRT-LLM backend's LLM API layout, checked offline against an LLM deployment.

Upstream's template (NVIDIA/TensorRT-LLM triton_backend/all_models/llmapi, read 2026-12-05; the quick start of
triton-inference-server/tensorrtllm_backend since PR #852, April 2026) is one Python model, `tensorrt_llm`, whose
version folder holds `model.py` and `model.yaml`. model.py passes every key of model.yaml but `triton_config` to
TensorRT-LLM's `LLM()` (the PyTorch backend: a Hugging Face checkpoint loaded as it is, no engine to build, so no
engine GPU architecture to check), and reads `triton_config.decoupled` and `triton_config.max_batch_size` itself.

Checked: the GPUs (tensor_parallel_size x pipeline_parallel_size x context_parallel_size = gpusPerReplica),
max_seq_len = llm.maxContext, max_batch_size (the in-flight batch) = llm.maxSequences, the KV cache's share
(kv_cache_config.free_gpu_memory_fraction, of the memory free after the weights; 0.9 unless set) against the
headroom and the KV cache the memory check computed, the checkpoint (`model`) inside the repository with its
config.json and tokenizer, and `triton_config` against config.pbtxt and the deployment's model control mode.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Literal

import yaml

from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.llm import architecture_of, load_llm_facts, memory_fit
from tritonfleet.models.validate import CONFIG_FILE, Finding, Model, Replica

LLMAPI_CONFIG = "model.yaml"
PARALLEL_SIZES = ("tensor_parallel_size", "pipeline_parallel_size", "context_parallel_size")
# TensorRT-LLM's KvCacheConfig default: "TensorRT LLM will try to allocate 90% of free GPU memory for KV cache"
# (https://nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html, read 2026-12-05).
DEFAULT_KV_FRACTION = 0.9
# A Hugging Face repository id: an owner and a name (https://huggingface.co/docs/hub/repositories).
HUGGING_FACE_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")


def is_llmapi(model: Model) -> bool:
    """A Python model with the LLM API's model.yaml in a version folder it serves."""
    return model.backend == "python" and any(
        (model.directory / str(v) / LLMAPI_CONFIG).is_file() for v in model.served_versions
    )


def check_llmapi(model: Model, deployment: TritonDeployment, replica: Replica) -> list[Finding]:
    findings: list[Finding] = []
    for version in model.served_versions:
        folder = model.directory / str(version)
        path = folder / LLMAPI_CONFIG
        if not path.is_file():
            findings.append(Finding("error", path, "missing: model.py reads the LLM's arguments from it"))
            continue
        args = read_mapping(path, findings, "YAML")
        if args is None:
            continue
        findings += _parallelism(args, path, deployment)
        findings += _lengths(args, path, deployment)
        findings += _kv_cache(args, path, deployment, replica)
        findings += _checkpoint(args, folder, path)
        findings += _triton_config(args, model, path, deployment)
    return findings


def read_mapping(path: Path, findings: list[Finding], kind: Literal["JSON", "YAML"]) -> dict[str, Any] | None:
    """A JSON object or YAML mapping, or None with an error finding."""
    try:
        text = path.read_text(encoding="utf-8")
        document = json.loads(text) if kind == "JSON" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as error:
        findings.append(Finding("error", path, f"not readable {kind}: {error}"))
        return None
    if not isinstance(document, dict):
        findings.append(Finding("error", path, f"not a {kind} {'object' if kind == 'JSON' else 'mapping'}"))
        return None
    return document


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _parallelism(args: dict[str, Any], path: Path, deployment: TritonDeployment) -> list[Finding]:
    sizes = {key: args.get(key, 1) for key in PARALLEL_SIZES}
    bad = [f"{key} {value!r}" for key, value in sizes.items() if not _positive_int(value)]
    if bad:
        return [Finding("error", path, f"{', '.join(bad)}: a positive integer")]
    gpus = sizes["tensor_parallel_size"] * sizes["pipeline_parallel_size"] * sizes["context_parallel_size"]
    if gpus == deployment.gpus_per_replica:
        return []
    product = " x ".join(f"{key} {value}" for key, value in sizes.items() if key in args)
    return [Finding("error", path, f"a model on {gpus} GPUs ({product or 'the default 1'}), but a replica of "
                    f"'{deployment.name}' has gpusPerReplica {deployment.gpus_per_replica}")]


def _lengths(args: dict[str, Any], path: Path, deployment: TritonDeployment) -> list[Finding]:
    llm = deployment.llm
    assert llm is not None
    findings = []
    length = args.get("max_seq_len")
    if length is None:
        findings.append(Finding("error", path, "no max_seq_len: TensorRT-LLM then takes the model's whole context "
                                f"(its config.json), beyond llm.maxContext {llm.max_context} that the memory check "
                                f"assumed; set max_seq_len: {llm.max_context}"))
    elif not _positive_int(length) or length > llm.max_context:
        findings.append(Finding("error", path, f"max_seq_len {length} is above llm.maxContext {llm.max_context}, "
                                "which the memory check assumed"))
    elif length < llm.max_context:
        findings.append(Finding("error", path, f"max_seq_len {length} is below llm.maxContext {llm.max_context}: "
                                "TensorRT-LLM refuses the longer sequences the deployment promises"))
    batch = args.get("max_batch_size")
    if batch is None:
        findings.append(Finding("warning", path, "no max_batch_size: the LLM API then schedules its default number "
                                f"of sequences, not llm.maxSequences {llm.max_sequences} that the memory check and "
                                f"the autoscaler assume; set max_batch_size: {llm.max_sequences}"))
    elif not _positive_int(batch) or batch > llm.max_sequences:
        findings.append(Finding("warning", path, f"max_batch_size {batch} is above llm.maxSequences "
                                f"{llm.max_sequences}: more sequences than the memory check assumed share the KV "
                                "cache"))
    elif batch < llm.max_sequences:
        findings.append(Finding("warning", path, f"max_batch_size {batch} is below llm.maxSequences "
                                f"{llm.max_sequences}: a replica serves at most {batch} sequences at once"))
    return findings


def _kv_cache(args: dict[str, Any], path: Path, deployment: TritonDeployment, replica: Replica) -> list[Finding]:
    """The KV cache TensorRT-LLM allocates: free_gpu_memory_fraction of what is free after the weights (estimated as
    the GPU's memory less the weights and the memory check's headroom), capped by max_tokens when set."""
    llm = deployment.llm
    assert llm is not None
    config = args.get("kv_cache_config", {})
    if not isinstance(config, dict):
        return [Finding("error", path, "kv_cache_config is not a mapping of KvCacheConfig arguments")]
    fraction = config.get("free_gpu_memory_fraction", DEFAULT_KV_FRACTION)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        return [Finding("error", path, f"kv_cache_config.free_gpu_memory_fraction {fraction!r}: a number in (0, 1]")]
    findings = []
    headroom = load_llm_facts().runtime_headroom.fraction
    if fraction > 1 - headroom:
        findings.append(Finding("warning", path, f"kv_cache_config.free_gpu_memory_fraction {fraction} leaves less "
                                f"than {headroom:.0%} of the memory free after the weights to the runtime (the memory "
                                f"check kept {headroom:.0%} of the GPU's)"))
    arch = architecture_of(llm)
    if arch is not None:
        fit = memory_fit(llm, arch, replica.gpu, deployment.gpus_per_replica)
        free = fit.gpu_memory_gb - fit.weights_gb - fit.headroom_gb
        needed = fit.kv_cache_gb / free
        if fraction < needed:
            fix = (f"raise it to {math.ceil(needed * 100) / 100:.2f}" if needed <= 1 - headroom else
                   "lower llm.maxSequences or llm.maxContext")
            findings.append(Finding("warning", path, f"kv_cache_config.free_gpu_memory_fraction {fraction} gives the "
                                    f"KV cache about {fraction * free:.1f} GB per GPU (of the {free:.1f} GB one "
                                    f"{replica.gpu} has after weights {fit.weights_gb:.1f} and headroom "
                                    f"{fit.headroom_gb:.1f} GB), below the {fit.kv_cache_gb:.1f} GB that "
                                    f"llm.maxContext x llm.maxSequences take: fewer sequences fit at full length; {fix}"))
    tokens = config.get("max_tokens")
    promised = llm.max_context * llm.max_sequences
    if tokens is not None and (not _positive_int(tokens) or tokens < promised):
        findings.append(Finding("warning", path, f"kv_cache_config.max_tokens {tokens} caps the KV cache below "
                                f"llm.maxContext x llm.maxSequences ({promised} tokens): fewer sequences fit at "
                                "full length"))
    return findings


def _checkpoint(args: dict[str, Any], folder: Path, path: Path) -> list[Finding]:
    """`model` names the checkpoint: a folder of this version (checked), a path elsewhere (not checkable), or a
    Hugging Face id (refused: a replica cannot download it)."""
    name = args.get("model")
    if not isinstance(name, str) or not name:
        return [Finding("error", path, "no model: the Hugging Face checkpoint LLM() loads; put it in this version "
                        "folder and name its folder here")]
    if Path(name).is_absolute():
        return [Finding("warning", path, f"model {name} is outside the repository, so it was not checked: a replica "
                        "has only its image and the repository's copy; put the checkpoint in this version folder")]
    local = folder / name
    if not local.exists():
        if HUGGING_FACE_ID.match(name):
            return [Finding("error", path, f"model {name} is a Hugging Face id: LLM() would download it at every "
                            "start, and a replica's egress reaches only the object store (docs/access.md "
                            "\"Egress\"); put the checkpoint (config.json, tokenizer, *.safetensors) in this version "
                            "folder and name its folder here")]
        return [Finding("error", path, f"model {name}: no such folder in {folder}")]
    findings = []
    if not (local / "config.json").is_file():
        findings.append(Finding("error", local, "no config.json: not a Hugging Face checkpoint"))
    if args.get("tokenizer") is None and not args.get("skip_tokenizer_init") and not any(
        (local / f).is_file() for f in TOKENIZER_FILES
    ):
        findings.append(Finding("error", local, f"no tokenizer ({', '.join(TOKENIZER_FILES)}): LLM() loads it from "
                                "the checkpoint unless model.yaml names one (tokenizer)"))
    findings.append(Finding("warning", path, f"model {name} is relative: upstream's model.py passes it to LLM() "
                            "unchanged, which resolves it against tritonserver's working directory, not this folder "
                            "(Triton copies the repository to a temporary folder); unless your model.py joins it "
                            "with pb_utils.get_model_dir(), the load fails"))
    return findings


def _triton_config(args: dict[str, Any], model: Model, path: Path, deployment: TritonDeployment) -> list[Finding]:
    """triton_config against config.pbtxt: model.py reads both keys; Triton takes them only through auto-complete,
    which poll mode turns off (--disable-auto-complete-config), so there config.pbtxt must say decoupled itself."""
    triton = args.get("triton_config")
    if not isinstance(triton, dict) or "decoupled" not in triton or "max_batch_size" not in triton:
        return [Finding("error", path, "triton_config needs decoupled and max_batch_size: model.py reads both, and "
                        "the load fails without them")]
    findings = []
    decoupled = bool(triton["decoupled"])
    config_path = model.directory / CONFIG_FILE
    if model.config.HasField("model_transaction_policy"):
        stated = model.config.model_transaction_policy.decoupled
        if stated != decoupled:
            findings.append(Finding("error", config_path, f"model_transaction_policy decoupled {str(stated).lower()}, "
                                    f"but model.yaml's triton_config.decoupled is {str(decoupled).lower()}: set both "
                                    "alike"))
    elif decoupled and deployment.model_control_mode == "poll":
        findings.append(Finding("error", config_path, "no model_transaction_policy: poll mode runs Triton with "
                                "--disable-auto-complete-config, so triton_config.decoupled never reaches Triton; "
                                "add model_transaction_policy { decoupled: true }"))
    batch = model.config.max_batch_size
    if deployment.model_control_mode != "poll" and isinstance(triton["max_batch_size"], int) and \
            batch > triton["max_batch_size"]:
        findings.append(Finding("error", config_path, f"max_batch_size {batch}, above model.yaml's "
                                f"triton_config.max_batch_size {triton['max_batch_size']}: auto-complete refuses to "
                                "lower it; leave it out of config.pbtxt, as upstream's template does"))
    if not decoupled:
        findings.append(Finding("warning", path, "triton_config.decoupled false: the model refuses streaming "
                                "requests, and Triton's time to first token (the first-response histogram the "
                                "autoscaler and alerts read) needs a decoupled model; set it true"))
    if triton["max_batch_size"] != 0:
        findings.append(Finding("warning", path, f"triton_config.max_batch_size {triton['max_batch_size']}: model.py "
                                "serves one prompt a request (the template: 0, no batching); the in-flight batch is "
                                "the top-level max_batch_size"))
    return findings
