"""`models validate --stack S --deployment D` knows the LLM repository layouts and checks them against the
deployment's llm: vLLM's model.json, TensorRT-LLM's LLM API model.yaml, and its deprecated ensemble and engine config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli
from tritonfleet.core import pins
from tritonfleet.core.config import TritonDeployment
from tritonfleet.models.llm_layout import check_llm_layout, engine_gpu
from tritonfleet.models.validate import Replica, validate_repository

H200 = Replica(2, "H200", "9.0")  # the catalog's compute capability


def _deployment(backend: str, gpus: int = 2, **settings) -> TritonDeployment:
    """A TensorRT-LLM one declares the engine layout (the ensemble and engine below)."""
    llm = {"backend": backend, "model": "Qwen2.5-72B", "precision": "fp8", "maxContext": 16384, "maxSequences": 32}
    llm |= {"layout": "engine"} if backend == "tensorrtllm" else {}
    return TritonDeployment.model_validate(
        {"name": "llm", "pool": "h200", "gpusPerReplica": gpus, "llm": llm, **settings})


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


REPORT_METRICS = 'parameters { key: "REPORT_CUSTOM_METRICS" value: { string_value: "true" } }\n'


def vllm_repository(root: Path, metrics: str = REPORT_METRICS, **engine_args) -> Path:
    """The vLLM backend's layout (vllm_backend samples/model_repository): config.pbtxt and 1/model.json, reporting its
    metrics (README "Triton Metrics") unless `metrics` says otherwise."""
    args = {"model": "Qwen/Qwen2.5-72B-Instruct", "tensor_parallel_size": 2, "max_model_len": 16384,
            "max_num_seqs": 32, "gpu_memory_utilization": 0.9, **engine_args}
    _write(root / "llm" / "config.pbtxt", 'backend: "vllm"\ninstance_group [{ count: 1, kind: KIND_MODEL }]\n' + metrics)
    _write(root / "llm" / "1" / "model.json", json.dumps(args))
    return root


def tensorrt_llm_repository(root: Path, tp: int = 2, tokenizer: str = "/tokenizer", engine: bool = True,
                            cluster_key: str | None = "H200-SXM", **build) -> Path:
    """The inflight_batcher_llm ensemble: preprocessing, tensorrt_llm, postprocessing (python models), ensemble. The
    engine's config.json as trtllm-build writes it, built on `cluster_key`'s GPU (None: a release that records none)."""
    for name in ("preprocessing", "postprocessing"):
        _write(root / name / "config.pbtxt",
               f'backend: "python"\nparameters {{ key: "tokenizer_dir" value: {{ string_value: "{tokenizer}" }} }}\n')
        _write(root / name / "1" / "model.py", "")
    _write(root / "tensorrt_llm" / "config.pbtxt", 'backend: "tensorrtllm"\nmodel_transaction_policy { decoupled: true }\n'
           'parameters { key: "gpt_model_path" value: { string_value: "/models/tensorrt_llm/1" } }\n')
    folder = root / "tensorrt_llm" / "1"
    folder.mkdir(parents=True, exist_ok=True)
    if engine:
        parallel = {"world_size": 1, "gpus_per_node": 8} | ({"cluster_key": cluster_key} if cluster_key is not None else {})
        config = {"pretrained_config": {"mapping": {"tp_size": tp, "pp_size": 1}},
                  "build_config": {"max_seq_len": 16384, "max_batch_size": 64, "auto_parallel_config": parallel, **build}}
        _write(folder / "config.json", json.dumps(config))
        for rank in range(tp):
            _write(folder / f"rank{rank}.engine", "")
    _write(root / "ensemble" / "config.pbtxt", 'platform: "ensemble"\nensemble_scheduling { step [\n'
           '{ model_name: "preprocessing" model_version: -1 }, { model_name: "tensorrt_llm" model_version: -1 },\n'
           '{ model_name: "postprocessing" model_version: -1 } ] }\n')
    (root / "ensemble" / "1").mkdir(parents=True)
    return root


DEPRECATED = "warning: the TensorRT-engine layout (backend tensorrtllm) is deprecated"


def _messages(root: Path, deployment: TritonDeployment, replica: Replica = H200, notice: bool = False) -> list[str]:
    """The findings as "severity: message"; without `notice`, less the engine layout's deprecation warning."""
    report = validate_repository(root)
    assert report.ok, [f.render() for f in report.errors]
    messages = [f"{f.severity}: {f.message}" for f in check_llm_layout(report, deployment, replica)]
    return messages if notice else [m for m in messages if not m.startswith(DEPRECATED)]


def test_matching_repositories_pass(tmp_path):
    assert _messages(vllm_repository(tmp_path / "v"), _deployment("vllm")) == []
    assert _messages(tensorrt_llm_repository(tmp_path / "t"), _deployment("tensorrtllm")) == []


@pytest.mark.parametrize(
    ("engine_args", "expected"),
    [
        ({"tensor_parallel_size": 4}, "error: tensor_parallel_size 4, but a replica of 'llm' has gpusPerReplica 2"),
        ({"max_model_len": 32768}, "error: max_model_len 32768 is above llm.maxContext 16384"),
        ({"max_model_len": None}, "error: no max_model_len: vLLM then takes the model's whole context"),
        ({"max_num_seqs": 256}, "warning: max_num_seqs 256 is above llm.maxSequences 32"),
        ({"gpu_memory_utilization": 0.97}, "warning: gpu_memory_utilization 0.97 leaves less than the 10%"),
        ({"disable_log_stats": True}, "error: disable_log_stats true: the vLLM backend then exports no vllm: metric"),
    ],
)
def test_vllm_engine_arguments_against_the_deployment(tmp_path, engine_args, expected):
    args = {k: v for k, v in engine_args.items() if v is not None}
    root = vllm_repository(tmp_path, **args)
    if engine_args.get("max_model_len", 0) is None:
        document = json.loads((root / "llm" / "1" / "model.json").read_text())
        del document["max_model_len"]
        (root / "llm" / "1" / "model.json").write_text(json.dumps(document))
    assert any(m.startswith(expected) for m in _messages(root, _deployment("vllm"))), _messages(root, _deployment("vllm"))


@pytest.mark.parametrize("metrics", ["", REPORT_METRICS.replace("true", "false")], ids=["unset", "false"])
def test_a_vllm_model_that_reports_no_metrics_is_refused(tmp_path, metrics):
    """Without REPORT_CUSTOM_METRICS "true" the backend exports no vllm: family (vllm_backend src/model.py), so the
    HPA lacks the sequence and TTFT metrics it reads and never scales down."""
    messages = _messages(vllm_repository(tmp_path, metrics=metrics), _deployment("vllm"))
    assert messages == ['error: no parameter REPORT_CUSTOM_METRICS "true": the vLLM backend then exports no vllm: '
                        "metric, and the HPA, missing its sequence and TTFT metrics, never scales down; add parameters "
                        '{ key: "REPORT_CUSTOM_METRICS" value: { string_value: "true" } }']


def test_tensorrt_llm_engine_against_the_deployment(tmp_path):
    messages = _messages(tensorrt_llm_repository(tmp_path / "a", tp=4, max_seq_len=8192, max_batch_size=16),
                         _deployment("tensorrtllm"))
    assert "error: an engine for 4 GPUs (tp_size x pp_size), but a replica of 'llm' has gpusPerReplica 2" in messages
    assert any(m.startswith("error: max_seq_len 8192 is below llm.maxContext 16384") for m in messages)
    assert any(m.startswith("warning: max_batch_size 16 is below llm.maxSequences 32") for m in messages)
    root = tensorrt_llm_repository(tmp_path / "b")
    (root / "tensorrt_llm" / "1" / "rank1.engine").unlink()
    assert "error: missing: one engine file per GPU" in _messages(root, _deployment("tensorrtllm"))
    no_engine = _messages(tensorrt_llm_repository(tmp_path / "c", engine=False), _deployment("tensorrtllm"))
    assert [m.split(":")[0] for m in no_engine] == ["warning"]


def test_unfilled_templates_and_missing_tokenizer(tmp_path):
    messages = _messages(tensorrt_llm_repository(tmp_path / "a", tokenizer="${tokenizer_dir}"), _deployment("tensorrtllm"))
    assert messages == ["error: parameter tokenizer_dir is still the template's ${tokenizer_dir}: fill it "
                        "(tensorrtllm_backend tools/fill_template.py) before publishing"] * 2
    messages = _messages(tensorrt_llm_repository(tmp_path / "b", tokenizer=""), _deployment("tensorrtllm"))
    assert "error: no tokenizer_dir parameter: the preprocessing model loads its tokenizer from it" in messages


def test_a_repository_of_the_other_backend_is_refused(tmp_path):
    messages = _messages(vllm_repository(tmp_path / "v"), _deployment("tensorrtllm"))
    assert any("backend vllm, but deployment 'llm' declares llm.backend tensorrtllm" in m for m in messages)


def test_cli_checks_the_layout_against_the_stack(tmp_path):
    """gcp-prod's llm: Qwen2.5-72B on vLLM, 2 GPUs per replica, 16384 tokens, 32 sequences."""
    good = run_cli("models", "validate", str(vllm_repository(tmp_path / "good")), "--stack", "gcp-prod", "--deployment", "llm")
    assert good.returncode == 0, good.stderr
    bad = run_cli("models", "validate", str(vllm_repository(tmp_path / "bad", tensor_parallel_size=1)),
                  "--stack", "gcp-prod", "--deployment", "llm")
    assert bad.returncode == 1
    stderr = " ".join(bad.stderr.split())
    assert "tensor_parallel_size 1, but a replica of 'llm' has gpusPerReplica 2" in stderr
    assert "the repository does not serve deployment 'llm' as its llm declares" in stderr


@pytest.mark.parametrize(
    ("key", "gpu"),
    [("H100-SXM", "H100"), ("H100-PCIe", "H100"), ("H200-NVL", "H200"), ("L40S", "L40S"), ("L40", "L40"),
     ("L4", "L4"), ("A100-SXM-80GB", "A100"), ("H20", "H20"), ("NVIDIA-B200", "B200")],
)
def test_engine_gpu_reads_trtllm_build_cluster_keys(key, gpu):
    """infer_cluster_key's keys (TensorRT-LLM tensorrt_llm/auto_parallel/cluster_info.py) and its fallback, the
    device name with dashes (torch names a B200 "NVIDIA B200")."""
    assert engine_gpu(key) == gpu


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("H200-SXM", None),
        ("H200-NVL", None),
        ("H100-SXM", "warning: an engine built on H100 (cluster_key H100-SXM, compute capability 9.0), but deployment "
         "'llm' runs on H200: the same architecture, so TensorRT loads it"),
        ("L40S", "error: an engine built on L40S (cluster_key L40S, compute capability 8.9), but deployment 'llm' runs "
         "on H200 (compute capability 9.0): TensorRT refuses an engine built for another GPU architecture. Rebuild it "
         "with trtllm-build on H200, or move the deployment to a pool of L40S"),
        ("NVIDIA-B200", "error: an engine built on B200 (cluster_key NVIDIA-B200, compute capability 10.0)"),
        ("A100-SXM-80GB", "error: an engine built on A100 (cluster_key A100-SXM-80GB), a GPU tritonfleet's catalog does "
         "not list, but deployment 'llm' runs on H200 (compute capability 9.0): TensorRT-LLM supports an engine only on "
         "the GPU type it was built on. Rebuild it with trtllm-build on H200"),
        (None, "warning: the engine's GPU architecture was not checked: config.json records no "
         "build_config.auto_parallel_config.cluster_key"),
        ("", "warning: the engine's GPU architecture was not checked"),
    ],
)
def test_tensorrt_llm_engine_gpu_against_the_pool(tmp_path, key, expected):
    messages = _messages(tensorrt_llm_repository(tmp_path, cluster_key=key), _deployment("tensorrtllm"))
    if expected is None:
        assert messages == []
    else:
        assert len(messages) == 1 and messages[0].startswith(expected), messages


def test_an_engine_config_with_a_malformed_auto_parallel_config_is_not_checked(tmp_path):
    root = tensorrt_llm_repository(tmp_path, auto_parallel_config="H200-SXM")
    assert [m[:58] for m in _messages(root, _deployment("tensorrtllm"))] == [
        "warning: the engine's GPU architecture was not checked: co"]


def test_cli_refuses_an_engine_for_a_deployment_of_the_llmapi_layout(tmp_path):
    """prod's llm: Llama-3.3-70B on TensorRT-LLM in the LLM API layout (the default), whose HPA and alerts read only
    what that layout exports: an engine repository is refused, with every problem in one message."""
    args = ("--stack", "prod", "--deployment", "llm")
    bad = run_cli("models", "validate", str(tensorrt_llm_repository(tmp_path / "bad", cluster_key="L40S",
                                                                    max_seq_len=8192)), *args)
    assert bad.returncode == 1
    stderr = " ".join(bad.stderr.split())
    assert "the TensorRT-engine layout (backend tensorrtllm), but deployment 'llm' declares llm.layout llmapi " \
           "(default llmapi), whose metrics its HPA and alerts read; set llm.layout engine in the stack, or publish " \
           "the LLM API layout (a python model with model.yaml)" in stderr
    assert "the repository does not serve deployment 'llm' as its llm declares" in stderr


def test_an_llmapi_repository_for_an_engine_deployment_is_refused(tmp_path):
    messages = _messages(llmapi_repository(tmp_path), _deployment("tensorrtllm"))
    assert messages == ["error: the LLM API layout (a python model with model.yaml), but deployment 'llm' declares "
                        "llm.layout engine (default llmapi), whose metrics its HPA and alerts read; set llm.layout "
                        "llmapi in the stack, or publish the TensorRT-engine layout (backend tensorrtllm)"]


# The LLM API layout (NVIDIA/TensorRT-LLM triton_backend/all_models/llmapi): a Python model whose version folder holds
# upstream's model.py and model.yaml; here the checkpoint sits in the version folder, as tritonfleet asks.
RELATIVE = "warning: model checkpoint is relative: upstream's model.py passes it to LLM() unchanged"
LLMAPI_CONFIG = ('name: "tensorrt_llm"\nbackend: "python"\ninstance_group [{ count: 1, kind: KIND_CPU }]\n'
                 'input [{ name: "text_input" data_type: TYPE_STRING dims: [ -1 ] }]\n'
                 'output [{ name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }]\n')


def llmapi_repository(root: Path, config: str = LLMAPI_CONFIG, checkpoint: tuple[str, ...] = ("config.json",
                      "tokenizer.json"), **args) -> Path:
    """model.yaml as upstream's template, filled for the deployment below (TP 2, 8192 tokens, 32 sequences); a key
    given as None is left out."""
    document = {"model": "checkpoint", "backend": "pytorch", "tensor_parallel_size": 2, "pipeline_parallel_size": 1,
                "max_seq_len": 8192, "max_batch_size": 32, "kv_cache_config": {"free_gpu_memory_fraction": 0.85},
                "triton_config": {"max_batch_size": 0, "decoupled": True}, **args}
    folder = root / "tensorrt_llm" / "1"
    _write(root / "tensorrt_llm" / "config.pbtxt", config)
    _write(folder / "model.py", "")
    _write(folder / "model.yaml", yaml.safe_dump({k: v for k, v in document.items() if v is not None}))
    for name in checkpoint:
        _write(folder / "checkpoint" / name, "{}")
    return root


def _llmapi_deployment(**settings) -> TritonDeployment:
    """Qwen2.5-72B in FP8 on 2 H200s, 8192 tokens x 32 sequences: KV cache 42.9 GB of the 90.6 GB free after
    weights (36.4) and headroom (14.1), a share of 0.47."""
    llm = {"backend": "tensorrtllm", "model": "Qwen2.5-72B", "precision": "fp8", "maxContext": 8192, "maxSequences": 32}
    return TritonDeployment.model_validate({"name": "llm", "pool": "h200", "gpusPerReplica": 2, "llm": llm, **settings})


def test_a_matching_llmapi_repository_passes_with_the_working_directory_caveat(tmp_path):
    """TensorRT-LLM's default KV share (0.9 of the memory free after the weights) is at the memory check's headroom."""
    default = _messages(llmapi_repository(tmp_path / "default", kv_cache_config=None), _llmapi_deployment())
    assert _messages(llmapi_repository(tmp_path / "set"), _llmapi_deployment()) == default == [
        RELATIVE + ", which resolves it against tritonserver's working directory, not this folder (Triton copies the "
        "repository to a temporary folder); unless your model.py joins it with pb_utils.get_model_dir(), the load fails"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"tensor_parallel_size": 4}, "error: a model on 4 GPUs (tensor_parallel_size 4 x pipeline_parallel_size 1), "
         "but a replica of 'llm' has gpusPerReplica 2"),
        ({"pipeline_parallel_size": 2}, "error: a model on 4 GPUs (tensor_parallel_size 2 x pipeline_parallel_size 2)"),
        ({"tensor_parallel_size": "2"}, "error: tensor_parallel_size '2': a positive integer"),
        ({"max_seq_len": None}, "error: no max_seq_len: TensorRT-LLM then takes the model's whole context (its "
         "config.json), beyond llm.maxContext 8192 that the memory check assumed; set max_seq_len: 8192"),
        ({"max_seq_len": 16384}, "error: max_seq_len 16384 is above llm.maxContext 8192"),
        ({"max_seq_len": 4096}, "error: max_seq_len 4096 is below llm.maxContext 8192: TensorRT-LLM refuses"),
        ({"max_batch_size": None}, "warning: no max_batch_size: the LLM API then schedules its default number of "
         "sequences, not llm.maxSequences 32"),
        ({"max_batch_size": 256}, "warning: max_batch_size 256 is above llm.maxSequences 32"),
        ({"max_batch_size": 8}, "warning: max_batch_size 8 is below llm.maxSequences 32: a replica serves at most 8"),
        ({"kv_cache_config": {"free_gpu_memory_fraction": 0.95}}, "warning: kv_cache_config.free_gpu_memory_fraction "
         "0.95 leaves less than 10% of the memory free after the weights to the runtime"),
        ({"kv_cache_config": {"free_gpu_memory_fraction": 0.3}}, "warning: kv_cache_config.free_gpu_memory_fraction "
         "0.3 gives the KV cache about 27.2 GB per GPU (of the 90.6 GB one H200 has after weights 36.4 and headroom "
         "14.1 GB), below the 42.9 GB that llm.maxContext x llm.maxSequences take: fewer sequences fit at full "
         "length; raise it to 0.48"),
        ({"kv_cache_config": {"free_gpu_memory_fraction": 1.5}}, "error: kv_cache_config.free_gpu_memory_fraction "
         "1.5: a number in (0, 1]"),
        ({"kv_cache_config": {"free_gpu_memory_fraction": 0.8, "max_tokens": 65536}}, "warning: "
         "kv_cache_config.max_tokens 65536 caps the KV cache below llm.maxContext x llm.maxSequences (262144 tokens)"),
        ({"model": "Qwen/Qwen2.5-72B-Instruct"}, "error: model Qwen/Qwen2.5-72B-Instruct is a Hugging Face id: LLM() "
         "would download it at every start, and a replica's egress reaches only the object store"),
        ({"model": "/models/qwen"}, "warning: model /models/qwen is outside the repository, so it was not checked"),
        ({"model": "weights"}, "error: model weights: no such folder in"),
        ({"model": None}, "error: no model: the Hugging Face checkpoint LLM() loads"),
        ({"triton_config": {"decoupled": True}}, "error: triton_config needs decoupled and max_batch_size"),
        ({"triton_config": {"max_batch_size": 0, "decoupled": False}}, "warning: triton_config.decoupled false: the "
         "model refuses streaming requests"),
        ({"triton_config": {"max_batch_size": 8, "decoupled": True}}, "warning: triton_config.max_batch_size 8: "
         "model.py serves one prompt a request"),
    ],
)
def test_llmapi_model_yaml_against_the_deployment(tmp_path, args, expected):
    messages = _messages(llmapi_repository(tmp_path, **args), _llmapi_deployment())
    assert any(m.startswith(expected) for m in messages), messages


def test_llmapi_checkpoint_files(tmp_path):
    messages = _messages(llmapi_repository(tmp_path / "a", checkpoint=("tokenizer.json",)), _llmapi_deployment())
    assert "error: no config.json: not a Hugging Face checkpoint" in messages
    messages = _messages(llmapi_repository(tmp_path / "b", checkpoint=("config.json",)), _llmapi_deployment())
    assert any(m.startswith("error: no tokenizer (tokenizer.json, tokenizer.model") for m in messages), messages
    named = llmapi_repository(tmp_path / "c", checkpoint=("config.json",), tokenizer="/tokenizer")
    assert [m.split(":")[0] for m in _messages(named, _llmapi_deployment())] == ["warning"]


def test_llmapi_decoupled_in_config_pbtxt_and_poll_mode(tmp_path):
    """Auto-complete copies triton_config into Triton's config but refuses to change what config.pbtxt states; poll
    mode turns auto-complete off (--disable-auto-complete-config), so config.pbtxt must state it."""
    stated = LLMAPI_CONFIG + "model_transaction_policy { decoupled: false }\n"
    messages = _messages(llmapi_repository(tmp_path / "a", config=stated), _llmapi_deployment())
    assert "error: model_transaction_policy decoupled false, but model.yaml's triton_config.decoupled is true: set " \
           "both alike" in messages
    poll = _llmapi_deployment(modelControlMode="poll")
    messages = _messages(llmapi_repository(tmp_path / "b"), poll)
    assert any(m.startswith("error: no model_transaction_policy: poll mode runs Triton with "
                            "--disable-auto-complete-config") for m in messages), messages
    batched = _messages(llmapi_repository(tmp_path / "d", config=LLMAPI_CONFIG + "max_batch_size: 8\n"),
                        _llmapi_deployment())
    assert any(m.startswith("error: max_batch_size 8, above model.yaml's triton_config.max_batch_size 0: "
                            "auto-complete refuses to lower it") for m in batched), batched
    both = LLMAPI_CONFIG + "model_transaction_policy { decoupled: true }\n"
    assert [m.split(":")[0] for m in _messages(llmapi_repository(tmp_path / "c", config=both), poll)] == ["warning"]


def test_an_llmapi_repository_for_a_vllm_deployment_is_refused(tmp_path):
    messages = _messages(llmapi_repository(tmp_path), _deployment("vllm"))
    assert "error: backend tensorrtllm, but deployment 'llm' declares llm.backend vllm (and runs its image)" in messages


def test_the_engine_layout_against_the_tensorrt_llm_of_the_image(tmp_path, monkeypatch):
    """26.07's trtllm image carries TensorRT-LLM 1.2.1, which still loads engines: a deprecation warning; an image
    whose TensorRT-LLM has no engine backend: an error; a release the table lacks: a warning that it is not known."""
    root = tensorrt_llm_repository(tmp_path)
    messages = _messages(root, _deployment("tensorrtllm"), notice=True)
    assert [m for m in messages if m.startswith(DEPRECATED)] == [
        DEPRECATED + ": Triton 26.07's image carries TensorRT-LLM 1.2.1, which still loads it, but TensorRT-LLM has "
        "removed this backend since (NVIDIA/TensorRT-LLM PR #15907); move to the LLM API layout: one python model, "
        "tensorrt_llm, with upstream's model.py and a model.yaml naming a Hugging Face checkpoint, no engine to build "
        "(docs/serving.md)"]
    later = _deployment("tensorrtllm", imageTag="27.01-trtllm-python-py3")
    assert any(m.startswith("warning: the TensorRT-engine layout (backend tensorrtllm): whether Triton 27.01's image "
                            "still loads it is not known here") for m in _messages(root, later, notice=True))
    monkeypatch.setitem(pins.TRITON_TENSORRT_LLM_VERSIONS, "27.01", "1.4.0")
    assert any(m.startswith("error: the TensorRT-engine layout (backend tensorrtllm): Triton 27.01's image carries "
                            "TensorRT-LLM 1.4.0, which has no engine backend to load it") for m in
               _messages(root, later, notice=True))


def test_the_pinned_trtllm_image_has_its_tensorrt_llm_version():
    """Moving the pin needs the new release's TensorRT-LLM (server docs/introduction/compatibility.md) in pins."""
    release = pins.TRITON_LLM_IMAGE_TAGS["tensorrtllm"].split("-")[0]
    assert pins.TRITON_TENSORRT_LLM_VERSIONS[release] == "1.2.1"


def test_cli_checks_an_llmapi_repository_against_the_stack(tmp_path):
    """prod's llm: Llama-3.3-70B FP8 (FP8 KV cache) on TensorRT-LLM, 2 H200s a replica, 8192 tokens, 64 sequences."""
    args = ("--stack", "prod", "--deployment", "llm")
    good = run_cli("models", "validate", str(llmapi_repository(tmp_path / "good", max_batch_size=64)), *args)
    assert good.returncode == 0, good.stderr
    assert "model checkpoint is relative" in " ".join(good.stderr.split())
    bad = run_cli("models", "validate", str(llmapi_repository(tmp_path / "bad", max_batch_size=64,
                                                              model="meta-llama/Llama-3.3-70B-Instruct")), *args)
    assert bad.returncode == 1
    stderr = " ".join(bad.stderr.split())
    assert "model meta-llama/Llama-3.3-70B-Instruct is a Hugging Face id" in stderr
    assert "the repository does not serve deployment 'llm' as its llm declares" in stderr


def test_an_unreadable_model_yaml_is_an_error(tmp_path):
    root = llmapi_repository(tmp_path)
    (root / "tensorrt_llm" / "1" / "model.yaml").write_text("model: [checkpoint\n")
    assert [m[:28] for m in _messages(root, _llmapi_deployment())] == ["error: not readable YAML: wh"]
