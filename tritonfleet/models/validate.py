"""Check a Triton model repository the way Triton reads it, with Triton's own ModelConfig protobuf.

A repository is a folder with one sub-folder per model; each model has a `config.pbtxt` and numeric version
folders holding the file its backend loads (`model.onnx`, `model.plan`, `model.py`, ...). Every problem is a
Finding with the path it is about; `errors` are what Triton would refuse or silently ignore.

Errors are what the real tritonserver refuses, and nothing it accepts: tests/test_models_validate_corpus.py keeps a
corpus of repositories with each one's verdict from tritonserver (the nvidia-pytriton wheel), and checks both.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from google.protobuf import text_format

# tritonclient's generated ModelConfig (Triton's model_config.proto); its gencode must suit the protobuf runtime
# pinned in pyproject.toml, which is why tritonclient is pinned to the release matching the Triton image.
from tritonclient.grpc import model_config_pb2

from tritonfleet.core.model_names import MODEL_NAME_RULE, VERSION_RULE, is_model_name, version_number

CONFIG_FILE = "config.pbtxt"

# The file (or folder) each backend loads from a version folder when default_model_filename is not set.
DEFAULT_MODEL_FILE = {
    "onnxruntime": "model.onnx",
    "tensorrt": "model.plan",
    "pytorch": "model.pt",
    "python": "model.py",
    "openvino": "model.xml",
    "vllm": "model.json",
}
TENSORFLOW_MODEL_FILE = {"tensorflow_savedmodel": "model.savedmodel", "tensorflow_graphdef": "model.graphdef"}
PLATFORM_BACKEND = {
    "onnxruntime_onnx": "onnxruntime",
    "tensorrt_plan": "tensorrt",
    "pytorch_libtorch": "pytorch",
    "tensorflow_savedmodel": "tensorflow",
    "tensorflow_graphdef": "tensorflow",
    "ensemble": "ensemble",
}
FOLDER_MODELS = {"model.savedmodel"}  # entries that must be folders, not files

Kind = model_config_pb2.ModelInstanceGroup.Kind


@dataclass(frozen=True)
class Finding:
    severity: Literal["error", "warning"]
    path: Path
    message: str

    def render(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"


@dataclass
class Model:
    """A model whose config parsed: what sync needs to publish it."""

    name: str
    directory: Path
    config: model_config_pb2.ModelConfig
    backend: str  # the resolved backend ("ensemble" for ensembles, "" when neither backend nor platform is set)
    versions: list[int]  # numeric version folders, ascending
    entry: str | None  # the file/folder Triton loads from each version folder; None for ensembles and unknown backends
    files: dict[str, Path] = field(default_factory=dict)  # what sync publishes: path below the model -> file to read

    @property
    def served_versions(self) -> list[int]:
        """The versions Triton serves under this config's version_policy (default: the latest one)."""
        policy = self.config.version_policy
        choice = policy.WhichOneof("policy_choice")
        if choice == "all":
            return list(self.versions)
        if choice == "specific":
            return sorted(v for v in set(policy.specific.versions) if v in self.versions)
        count = policy.latest.num_versions if choice == "latest" else 1
        return self.versions[-count:] if count > 0 else []


@dataclass
class Report:
    root: Path
    models: list[Model] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors


def parse_config(text: str) -> model_config_pb2.ModelConfig:
    """Parse config.pbtxt text; raises google.protobuf.text_format.ParseError with line and column."""
    return text_format.Parse(text, model_config_pb2.ModelConfig())


def resolve_backend(config: model_config_pb2.ModelConfig) -> str:
    return config.backend or PLATFORM_BACKEND.get(config.platform, "")


def entry_file(config: model_config_pb2.ModelConfig, backend: str) -> str | None:
    if backend == "ensemble":
        return None
    if config.default_model_filename:
        return config.default_model_filename
    if backend == "tensorflow":
        return TENSORFLOW_MODEL_FILE.get(config.platform, "model.savedmodel")
    return DEFAULT_MODEL_FILE.get(backend)


def published(name: str) -> bool:
    """Whether sync publishes an entry of a model folder: hidden entries and __pycache__ stay local."""
    return not name.startswith(".") and name != "__pycache__"


def model_files(directory: Path, root: Path) -> tuple[dict[str, Path], list[Finding]]:
    """The files of a model folder sync publishes (path below the folder -> the file to read), and the entries it
    refuses: a link is published only when it points at a regular file inside the repository (a link to a folder,
    to anything outside the repository, or to nothing is an error), FIFOs and devices are errors, and so are names
    with characters that do not print (a name is shown on terminals and becomes an object key)."""
    real_root = root.resolve()
    files: dict[str, Path] = {}
    findings: list[Finding] = []
    for folder, folders, names in os.walk(directory):  # never descends into a linked folder
        here = Path(folder)
        folders[:] = sorted(f for f in folders if published(f))
        for name in sorted(n for n in names if published(n)) + [f for f in folders if (here / f).is_symlink()]:
            path = here / name
            relative = path.relative_to(directory).as_posix()
            if not name.isprintable():
                findings.append(Finding("error", path, "a name with characters that do not print; rename it"))
            elif path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(real_root):
                    findings.append(Finding("error", path, f"a link to {target}, outside the repository: sync "
                                            "publishes only what is inside it; copy the file in if it is meant"))
                elif target.is_dir():
                    findings.append(Finding("error", path, "a link to a folder: sync follows links to files only"))
                elif not target.is_file():
                    findings.append(Finding("error", path, "a link to nothing (or to a FIFO or device)"))
                else:
                    files[relative] = target
            elif path.is_file():
                files[relative] = path
            else:
                findings.append(Finding("error", path, "not a regular file (a FIFO, socket or device)"))
    return files, findings


@dataclass(frozen=True)
class Replica:
    """What a deployment's replica offers its models: GPUs, their type and CUDA compute capability (the catalog's)."""

    gpus: int
    gpu: str
    compute_capability: str | None


def validate_repository(root: Path, replica: Replica | None = None) -> Report:
    """Check every model of the repository; with a deployment's `replica`, instance groups' GPU ids and TensorRT
    engines against its GPUs too."""
    report = Report(root=root)
    if not root.exists():
        report.findings.append(Finding("error", root, "no such directory"))
        return report
    if not root.is_dir():
        report.findings.append(Finding("error", root, "not a directory: a model repository is a folder of model folders"))
        return report
    entries = sorted(root.iterdir())
    for entry in entries:
        if entry.is_file():
            report.findings.append(Finding("warning", entry, "Triton ignores files at the repository root"))
    model_dirs = [e for e in entries if e.is_dir()]
    if not model_dirs:
        report.findings.append(Finding("error", root, "no model folders: expect <model>/config.pbtxt and <model>/<version>/"))
    for directory in model_dirs:
        if directory.is_symlink():
            report.findings.append(Finding("error", directory, "a link to a folder: sync follows links to files only"))
            continue
        if not is_model_name(directory.name):
            message = f"not a model name tritonfleet accepts: {MODEL_NAME_RULE}"
            report.findings.append(Finding("error", directory, message))
            continue
        model, findings = _check_model(directory, root, replica)
        report.findings.extend(findings)
        if model is not None:
            report.models.append(model)
    report.findings.extend(_check_ensembles(report.models))
    return report


def _check_model(directory: Path, root: Path, replica: Replica | None = None) -> tuple[Model | None, list[Finding]]:
    files, findings = model_files(directory, root)

    def error(path: Path, message: str) -> None:
        findings.append(Finding("error", path, message))

    def warn(path: Path, message: str) -> None:
        findings.append(Finding("warning", path, message))

    config_path = directory / CONFIG_FILE
    if not config_path.is_file():
        error(config_path, "missing: every model needs a config.pbtxt (tritonfleet does not rely on auto-complete)")
        return None, findings
    try:
        config = parse_config(config_path.read_text(encoding="utf-8"))
    except text_format.ParseError as exc:
        error(config_path, f"malformed: {exc}")
        return None, findings
    except UnicodeDecodeError:
        error(config_path, "malformed: not UTF-8 text")
        return None, findings

    if config.name and config.name != directory.name:
        error(config_path, f"name is '{config.name}' but the folder is '{directory.name}': Triton requires them to match")

    backend = resolve_backend(config)
    if not backend:
        error(config_path, "neither backend nor platform is set (e.g. backend: \"onnxruntime\" or \"python\")")
    elif config.backend and config.platform and PLATFORM_BACKEND.get(config.platform, config.backend) != config.backend:
        error(config_path, f"platform '{config.platform}' does not belong to backend '{config.backend}'")
    entry = entry_file(config, backend) if backend else None
    if backend and backend != "ensemble" and entry is None:
        warn(config_path, f"backend '{backend}' is not one tritonfleet knows; its model files were not checked")

    versions: list[int] = []
    for child in sorted(directory.iterdir()):
        if not child.is_dir():
            continue
        number = version_number(child.name)
        if number is None:
            if child.name.isascii() and child.name.isdigit() and not child.name.startswith("0"):
                error(child, f"not a version Triton can read: name it by {VERSION_RULE}")
            elif published(child.name):
                warn(child, "not a version folder (0, 1, 2, ... without leading zeros): Triton ignores it, which suits "
                     "a helper folder but not a version")  # fmt: skip
            continue
        versions.append(number)
        if entry is not None:
            target = child / entry
            if not target.exists():
                error(target, f"missing: backend '{backend}' loads {entry} from every version folder")
            elif entry in FOLDER_MODELS and not target.is_dir():
                error(target, f"{entry} must be a folder")
        elif backend == "ensemble" and any(child.iterdir()):
            warn(child, "an ensemble's version folder holds no files; Triton ignores these")
    versions.sort()
    if not versions:
        error(directory, "no version folder: add at least <model>/1/ (an empty one for an ensemble)")

    findings.extend(_check_version_policy(config, versions, config_path))
    findings.extend(_check_batching(config, config_path))
    findings.extend(_check_instance_groups(config, backend, config_path, replica.gpus if replica else None))
    if backend == "tensorrt" and replica is not None and replica.compute_capability:
        findings.extend(_check_engines(config, directory, versions, replica, config_path))
    findings.extend(_check_tensors(config, config_path))
    findings.extend(_check_warmup(config, config_path))
    if config.model_transaction_policy.decoupled and config.response_cache.enable:
        error(config_path, "response_cache with a decoupled model: Triton refuses it (the cache cannot hold a stream of "
              "responses); remove response_cache or decoupled")  # fmt: skip
    if any(f.severity == "error" for f in findings):
        return None, findings
    return Model(directory.name, directory, config, backend, versions, entry, files), findings


def _check_version_policy(config, versions: list[int], path: Path) -> Iterable[Finding]:
    policy = config.version_policy
    choice = policy.WhichOneof("policy_choice")
    if choice == "specific":
        if not policy.specific.versions:
            yield Finding("error", path, "version_policy.specific lists no versions")
        for missing in sorted(set(policy.specific.versions) - set(versions)):
            yield Finding("error", path, f"version_policy.specific names version {missing}, which has no folder")
    elif choice == "latest" and policy.latest.num_versions < 1:
        yield Finding("error", path, "version_policy.latest.num_versions must be at least 1")


def _check_batching(config, path: Path) -> Iterable[Finding]:
    if config.max_batch_size < 0:
        yield Finding("error", path, "max_batch_size must be 0 (no batching) or positive")
        return
    if config.HasField("dynamic_batching"):
        batching = config.dynamic_batching
        if config.max_batch_size == 0:
            yield Finding("warning", path, "dynamic_batching with max_batch_size 0 combines no requests (it still "
                          "queues them: priorities, queue policy); set max_batch_size > 0 to batch")  # fmt: skip
        if batching.priority_levels and not 1 <= batching.default_priority_level <= batching.priority_levels:
            yield Finding("error", path, f"default_priority_level {batching.default_priority_level} is not in 1.."
                          f"{batching.priority_levels} (priority_levels): Triton refuses the model")  # fmt: skip
        for size in config.dynamic_batching.preferred_batch_size:
            if size < 1 or size > config.max_batch_size > 0:
                yield Finding("error", path, f"preferred_batch_size {size} is not in 1..{config.max_batch_size} (max_batch_size)")
    elif config.max_batch_size > 0 and not config.HasField("sequence_batching") and resolve_backend(config) != "ensemble":
        yield Finding("warning", path, "max_batch_size > 0 without dynamic_batching: Triton will not combine requests")


def _check_instance_groups(config, backend: str, path: Path, gpus_per_replica: int | None) -> Iterable[Finding]:
    if backend == "ensemble" and config.instance_group:
        yield Finding("warning", path, "instance_group has no effect on an ensemble")
        return
    for i, group in enumerate(config.instance_group):
        at = f"instance_group[{i}]"
        if group.count < 0:
            yield Finding("error", path, f"{at}.count must not be negative (0 or unset means 1)")
        if group.gpus and group.kind not in (Kind.KIND_GPU, Kind.KIND_AUTO):
            yield Finding("error", path, f"{at} lists gpus but its kind is {Kind.Name(group.kind)}; use KIND_GPU")
        if any(gpu < 0 for gpu in group.gpus):
            yield Finding("error", path, f"{at}.gpus must be GPU indices >= 0")
        beyond = sorted({gpu for gpu in group.gpus if gpus_per_replica is not None and gpu >= gpus_per_replica})
        if beyond:
            yield Finding("error", path, f"{at}.gpus names GPU {', '.join(map(str, beyond))}, but a replica has "
                          f"{gpus_per_replica} GPU(s) (ids 0..{gpus_per_replica - 1}): Triton refuses the model; "
                          "drop gpus (every GPU of the replica) or raise gpusPerReplica")  # fmt: skip


def _check_tensors(config, path: Path) -> Iterable[Finding]:
    for section, tensors in (("input", config.input), ("output", config.output)):
        seen: set[str] = set()
        for tensor in tensors:
            label = f"{section} '{tensor.name}'"
            if not tensor.name:
                yield Finding("error", path, f"an {section} has no name")
            if tensor.name in seen:
                yield Finding("error", path, f"{label} is declared twice")
            seen.add(tensor.name)
            if tensor.data_type == model_config_pb2.DataType.TYPE_INVALID:
                yield Finding("error", path, f"{label} has no data_type (e.g. TYPE_FP32)")
            if any(d < -1 or d == 0 for d in tensor.dims):
                yield Finding("error", path, f"{label} has dims {list(tensor.dims)}: each must be positive or -1 (variable)")


def _check_engines(config, directory: Path, versions: list[int], replica: Replica, path: Path) -> Iterable[Finding]:
    """A TensorRT engine deserialises only on the GPU architecture it was built for. Triton picks the file for the
    GPU's compute capability from cc_model_filenames, else the default file."""
    capability = replica.compute_capability
    engines = dict(config.cc_model_filenames)
    if capability in engines:
        for version in versions:
            engine = directory / str(version) / engines[capability]
            if not engine.exists():
                yield Finding("error", engine, f"missing: the deployment's {replica.gpu} (compute capability "
                              f"{capability}) loads it through cc_model_filenames")  # fmt: skip
    elif engines:
        yield Finding("error", path, f"cc_model_filenames has engines for {', '.join(sorted(engines))} but not for the "
                      f"deployment's {replica.gpu} (compute capability {capability}): Triton falls back to "
                      f"{config.default_model_filename or 'model.plan'}, which is one of those; add "
                      f"cc_model_filenames {{ key: \"{capability}\" value: \"model_{capability}.plan\" }}")  # fmt: skip
    else:
        yield Finding("warning", path, f"TensorRT engines run only on the architecture they were built for: build "
                      f"{config.default_model_filename or 'model.plan'} on {replica.gpu} (compute capability "
                      f"{capability}), or list one engine per architecture in cc_model_filenames")  # fmt: skip


def _check_warmup(config, path: Path) -> Iterable[Finding]:
    """Triton runs each warmup sample at load and refuses the model when one names an input it does not have or
    leaves a required one out."""
    inputs = {tensor.name for tensor in config.input}
    required = {tensor.name for tensor in config.input if not tensor.optional}
    for sample in config.model_warmup:
        given = set(sample.inputs)
        for name in sorted(given - inputs):
            yield Finding("error", path, f"model_warmup '{sample.name}' gives input '{name}', which the model does not "
                          f"have (inputs: {', '.join(sorted(inputs)) or 'none'})")  # fmt: skip
        missing = sorted(required - given)
        if missing and inputs:
            yield Finding("error", path, f"model_warmup '{sample.name}' leaves out required input(s) "
                          f"{', '.join(missing)}: Triton fails the warmup and the model")  # fmt: skip


def _check_ensembles(models: list[Model]) -> Iterable[Finding]:
    """An ensemble's steps are models of the same repository (a deployment serves one), and its maps name tensors
    that exist: a step's input_map keys are that model's inputs, its output_map keys that model's outputs; every
    value read is an ensemble input or an earlier step's output; every ensemble input is read and every ensemble
    output is written."""
    by_name = {m.name: m for m in models}
    for model in models:
        if model.backend != "ensemble":
            continue
        path = model.directory / CONFIG_FILE
        steps = model.config.ensemble_scheduling.step
        if not steps:
            yield Finding("error", path, "an ensemble needs ensemble_scheduling with at least one step")
        inputs = {t.name for t in model.config.input}
        produced = {tensor for step in steps for tensor in step.output_map.values()}
        read = {tensor for step in steps for tensor in step.input_map.values()}
        for step in steps:
            called = by_name.get(step.model_name)
            if called is None:
                yield Finding("error", path, f"step model '{step.model_name}' is not a model of this repository "
                              "(a deployment serves one repository): Triton refuses the ensemble")  # fmt: skip
                continue
            step_inputs = {t.name for t in called.config.input}
            step_outputs = {t.name for t in called.config.output}
            for key in sorted(set(step.input_map) - step_inputs):
                yield Finding("error", path, f"step '{step.model_name}' input_map names input '{key}', which that model "
                              f"does not have (inputs: {', '.join(sorted(step_inputs)) or 'none'})")  # fmt: skip
            for key in sorted(set(step.output_map) - step_outputs):
                yield Finding("error", path, f"step '{step.model_name}' output_map names output '{key}', which that "
                              f"model does not have (outputs: {', '.join(sorted(step_outputs)) or 'none'})")  # fmt: skip
            for value in sorted(set(step.input_map.values()) - inputs - produced):
                yield Finding("error", path, f"step '{step.model_name}' reads '{value}', which is neither an ensemble "
                              "input nor any step's output")  # fmt: skip
        for name in sorted(inputs - read):
            yield Finding("error", path, f"ensemble input '{name}' is read by no step: Triton refuses the ensemble")
        for tensor in model.config.output:
            if tensor.name not in produced:
                yield Finding("error", path, f"ensemble output '{tensor.name}' is written by no step's output_map")
