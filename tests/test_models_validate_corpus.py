"""`tritonfleet models validate` agrees with tritonserver: a corpus of model repositories, each with the verdict the real
tritonserver (the nvidia-pytriton wheel, CPU) gave it, recorded here. The pure test holds the validator to those
verdicts (an error exactly where tritonserver refuses); the live test loads the whole corpus into one tritonserver
and checks the recorded verdicts are still its own.

Recorded on 2026-12-05 with the tritonserver of the nvidia-pytriton wheel pinned in pyproject.toml.
"""

from __future__ import annotations

import json

import pytest

from tests.local_servers import stop
from tests.test_models_triton import Triton, http, log_tail, wait_for
from tests.triton_wheel import pytriton_dir
from tritonfleet.models.validate import Replica, validate_repository

ONE_L40S = Replica(1, "L40S", "8.9")

PYTHON_MODEL = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(
            r, "INPUT0").as_numpy())]) for r in requests]
"""
TENSORS = """input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
"""
CPU = 'instance_group [ { kind: KIND_CPU, count: 1 } ]\n'


def python(extra: str = "", batch: int = 0, groups: str = CPU) -> str:
    return f'backend: "python"\nmax_batch_size: {batch}\n{TENSORS}{groups}{extra}'


def ensemble(step: str = "batch0_dynamic", key: str = "INPUT0", value: str = "IN", out: str = "OUTPUT0") -> str:
    return f"""platform: "ensemble"
max_batch_size: 0
input [ {{ name: "IN", data_type: TYPE_FP32, dims: [ 4 ] }} ]
output [ {{ name: "OUT", data_type: TYPE_FP32, dims: [ 4 ] }} ]
ensemble_scheduling {{ step [ {{ model_name: "{step}" model_version: -1
  input_map {{ key: "{key}" value: "{value}" }} output_map {{ key: "{out}" value: "OUT" }} }} ] }}
"""


# name: (config.pbtxt, folders holding model.py (an ensemble's stay empty), tritonserver's verdict: None = it loads the
# model, else a fragment of its refusal, from its log or its repository index)
CORPUS: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    # tritonfleet once blocked these three; tritonserver loads them (few Python models: each starts a stub process)
    "batch0_dynamic": (python("dynamic_batching { }\n"), ("1",), None),
    "version_zero_and_helper_folder": (python(), ("0", "utils"), None),
    # tritonfleet once passed these; tritonserver refuses them
    "ensemble_missing_step": (ensemble(step="nope"), ("1",), "contains models that are not available or ambiguous: nope"),
    "ensemble_bad_input": (ensemble(key="WRONG"), ("1",), "is mapping to non-existing input WRONG in model batch0_dynamic"),
    "ensemble_bad_output": (ensemble(out="WRONG"), ("1",), "is mapped from non-existing output WRONG in model batch0_dynamic"),
    "ensemble_unread_input": (ensemble(value="ELSEWHERE"), ("1",), "ensemble input 'IN' for ensemble"),
    "priority_above": (python("dynamic_batching { priority_levels: 2 default_priority_level: 3 }\n", batch=4), ("1",),
                       "default priority level must be in range [1, 2]"),
    "warmup_unknown_input": (python('model_warmup [ { name: "w" batch_size: 1 inputs { key: "NOPE" value { '
                                    'data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } } ]\n'), ("1",),
                             "missing required input(s) ['INPUT0']"),
    "decoupled_cache": (python("model_transaction_policy { decoupled: true }\nresponse_cache { enable: true }\n"),
                        ("1",), "Response Cache does not currently support model decoupled_cache"),
    # on a 1-GPU replica (validated with gpusPerReplica 1); this CPU-only server refuses every GPU id
    "gpu_beyond_replica": (python(groups="instance_group [ { kind: KIND_GPU, count: 1, gpus: [ 3 ] } ]\n"), ("1",),
                           "specifies invalid or unsupported gpu id 3"),
    "leading_zero_only": (python(), ("01",), "at least one version must be available"),
    "ensemble_ok": (ensemble(), ("1",), None),
}  # fmt: skip


def write_corpus(root) -> None:
    for name, (config, folders, _) in CORPUS.items():
        model = root / name
        model.mkdir(parents=True)
        (model / "config.pbtxt").write_text(f'name: "{name}"\n{config}')
        for folder in folders:
            (model / folder).mkdir()
            if "ensemble" not in config:
                (model / folder / "model.py").write_text(PYTHON_MODEL)


def test_the_validator_refuses_exactly_what_tritonserver_refuses(tmp_path):
    write_corpus(tmp_path)
    report = validate_repository(tmp_path, ONE_L40S)
    refused = {f.path.relative_to(tmp_path).parts[0] for f in report.errors}
    expected = {name for name, (_, _, verdict) in CORPUS.items() if verdict is not None}
    assert refused == expected


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("ensemble_missing_step", "step model 'nope' is not a model of this repository"),
        ("ensemble_bad_input", "input_map names input 'WRONG', which that model does not have (inputs: INPUT0)"),
        ("ensemble_bad_output", "output_map names output 'WRONG'"),
        ("ensemble_unread_input", "reads 'ELSEWHERE', which is neither an ensemble input nor any step's output"),
        ("priority_above", "default_priority_level 3 is not in 1..2 (priority_levels)"),
        ("warmup_unknown_input", "model_warmup 'w' gives input 'NOPE', which the model does not have"),
        ("decoupled_cache", "response_cache with a decoupled model"),
        ("gpu_beyond_replica", "names GPU 3, but a replica has 1 GPU(s) (ids 0..0)"),
        ("leading_zero_only", "no version folder"),
    ],
)
def test_each_refusal_says_why(tmp_path, name, fragment):
    write_corpus(tmp_path)
    messages = [f.message for f in validate_repository(tmp_path, ONE_L40S).errors
                if f.path.relative_to(tmp_path).parts[0] == name]  # fmt: skip
    assert any(fragment in m for m in messages), messages


def test_gpu_ids_are_checked_only_against_a_known_replica(tmp_path):
    write_corpus(tmp_path)
    assert not any("gpu_beyond_replica" in str(f.path) for f in validate_repository(tmp_path).errors)
    assert not any("gpu_beyond_replica" in str(f.path) for f in validate_repository(tmp_path, Replica(4, "L40S", "8.9")).errors)


def test_tritonserver_still_gives_the_recorded_verdicts(tmp_path):
    """One tritonserver loads the whole corpus at start (models load in parallel, failures do not stop it)."""
    server = Triton(pytriton_dir(), tmp_path)
    repository = tmp_path / "corpus"
    write_corpus(repository)
    process, url, _, log = server.start(str(repository), "--exit-on-error=false", "--strict-readiness=false")
    try:
        started = wait_for(lambda: http("GET", f"{url}/v2/health/live")[0] == 200, 120, process)
        assert started, log_tail(log)
        status, body = http("POST", f"{url}/v2/repository/index", {})
        assert status == 200, body
        ready = {m["name"] for m in json.loads(body) if m.get("state") == "READY"}
        text = log.read_text(errors="replace") + body
    finally:
        stop(process)
    assert ready == {name for name, (_, _, verdict) in CORPUS.items() if verdict is None}
    for name, (_, _, verdict) in CORPUS.items():
        if verdict is not None:
            assert verdict in text, f"{name}: tritonserver no longer says {verdict!r}"


TENSORRT = """name: "engine"
platform: "tensorrt_plan"
max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 1 ] } ]
"""


@pytest.mark.parametrize(
    ("extra", "files", "severity", "fragment"),
    [
        ("", ["model.plan"], "warning", "build model.plan on H200 (compute capability 9.0)"),
        ('cc_model_filenames { key: "9.0" value: "h200.plan" }', ["model.plan", "h200.plan"], None, ""),
        ('cc_model_filenames { key: "9.0" value: "h200.plan" }', ["model.plan"], "error", "missing: the deployment's H200"),
        ('cc_model_filenames { key: "8.9" value: "l40s.plan" }', ["model.plan", "l40s.plan"], "error",
         "engines for 8.9 but not for the deployment's H200 (compute capability 9.0)"),
    ],
)
def test_tensorrt_engines_are_checked_against_the_pools_gpu(tmp_path, extra, files, severity, fragment):
    """A TensorRT engine deserialises only on the architecture it was built for (TensorRT: engines are not portable
    across compute capabilities); Triton picks the engine per GPU from cc_model_filenames."""
    model = tmp_path / "engine"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(TENSORRT + extra)
    for name in files:
        (model / "1" / name).write_text("engine")
    report = validate_repository(tmp_path, Replica(1, "H200", "9.0"))
    found = [(f.severity, f.message) for f in report.findings]
    if severity is None:
        assert found == []
    else:
        assert any(s == severity and fragment in m for s, m in found), found
    without = validate_repository(tmp_path).findings  # without a deployment: no GPU to check against
    assert not [f for f in without if "compute capability" in f.message or "cc_model_filenames" in f.message]


def test_every_gpu_of_the_catalog_has_a_compute_capability():
    from tritonfleet.core.catalog import load_catalog

    catalog = load_catalog()
    assert {g: v.compute_capability for g, v in catalog.gpus.items()} == {
        "L4": "8.9", "L40S": "8.9", "H100": "9.0", "H200": "9.0", "B200": "10.0"
    }  # fmt: skip
    assert "developer.nvidia.com/cuda-gpus" in catalog.sources["CUDAGPUS"].title
