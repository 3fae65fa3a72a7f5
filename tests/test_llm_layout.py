"""`models validate --stack S --deployment D` knows both LLM repository layouts and checks them against the
deployment's llm: vLLM's model.json, TensorRT-LLM's ensemble and engine config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tritonfleet.core.config import TritonDeployment
from tritonfleet.models.llm_layout import check_llm_layout, engine_gpu
from tritonfleet.models.validate import Replica, validate_repository

H200 = Replica(2, "H200", "9.0")  # the catalog's compute capability


def _deployment(backend: str, gpus: int = 2) -> TritonDeployment:
    llm = {"backend": backend, "model": "Qwen2.5-72B", "precision": "fp8", "maxContext": 16384, "maxSequences": 32}
    return TritonDeployment.model_validate({"name": "llm", "pool": "h200", "gpusPerReplica": gpus, "llm": llm})


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def vllm_repository(root: Path, **engine_args) -> Path:
    """The vLLM backend's layout (vllm_backend samples/model_repository): config.pbtxt and 1/model.json."""
    args = {"model": "Qwen/Qwen2.5-72B-Instruct", "tensor_parallel_size": 2, "max_model_len": 16384,
            "max_num_seqs": 32, "gpu_memory_utilization": 0.9, **engine_args}
    _write(root / "llm" / "config.pbtxt", 'backend: "vllm"\ninstance_group [{ count: 1, kind: KIND_MODEL }]\n')
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


def _messages(root: Path, deployment: TritonDeployment, replica: Replica = H200) -> list[str]:
    report = validate_repository(root)
    assert report.ok, [f.render() for f in report.errors]
    return [f"{f.severity}: {f.message}" for f in check_llm_layout(report, deployment, replica)]


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


def test_cli_refuses_an_engine_for_another_gpu(tmp_path):
    """prod's llm: Llama-3.3-70B on TensorRT-LLM, H200 pool, 2 GPUs per replica, 8192 tokens, 64 sequences."""
    args = ("--stack", "prod", "--deployment", "llm")
    good = run_cli("models", "validate", str(tensorrt_llm_repository(tmp_path / "good", max_seq_len=8192)), *args)
    assert good.returncode == 0, good.stderr
    bad = run_cli("models", "validate", str(tensorrt_llm_repository(tmp_path / "bad", cluster_key="L40S",
                                                                    max_seq_len=8192)), *args)
    assert bad.returncode == 1
    stderr = " ".join(bad.stderr.split())
    assert "an engine built on L40S (cluster_key L40S, compute capability 8.9), but deployment 'llm' runs on H200 " \
           "(compute capability 9.0)" in stderr
    assert "Rebuild it with trtllm-build on H200, or move the deployment to a pool of L40S" in stderr
