"""`tritonfleet models validate`: small generated repositories, good and bad, checked with Triton's ModelConfig."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, one_line, run_cli
from tritonfleet.models.validate import validate_repository

SAMPLE = ROOT / "tests" / "fixtures" / "model_repository"

ONNX_CONFIG = """
name: "{name}"
platform: "onnxruntime_onnx"
max_batch_size: 4
dynamic_batching {{ }}
input [ {{ name: "x" data_type: TYPE_FP32 dims: [ 3 ] }} ]
output [ {{ name: "y" data_type: TYPE_FP32 dims: [ 3 ] }} ]
instance_group [ {{ kind: KIND_GPU count: 1 }} ]
"""


def make_model(root: Path, name: str, config: str | None, files: dict[str, str]) -> Path:
    model = root / name
    model.mkdir(parents=True)
    if config is not None:
        (model / "config.pbtxt").write_text(config)
    for relative, content in files.items():
        path = model / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if relative.endswith("/"):
            path.mkdir(exist_ok=True)
        else:
            path.write_text(content)
    return model


def onnx(root: Path, name: str = "resnet", *, config: str | None = None, files: dict[str, str] | None = None) -> Path:
    return make_model(root, name, ONNX_CONFIG.format(name=name) if config is None else config, files or {"1/model.onnx": "x"})


def messages(report) -> list[tuple[str, str, str]]:
    return [(f.severity, str(f.path.relative_to(report.root)), f.message) for f in report.findings]


def only_error(report) -> tuple[str, str]:
    [error] = report.errors
    return str(error.path.relative_to(report.root)), error.message


def test_the_sample_repository_is_valid():
    report = validate_repository(SAMPLE)
    assert report.ok and not report.findings
    [model] = report.models
    assert (model.name, model.backend, model.versions, model.entry, model.served_versions) == (
        "add_version", "python", [1], "model.py", [1]
    )
    assert model.config.max_batch_size == 8 and model.config.HasField("dynamic_batching")


def test_a_valid_onnx_and_ensemble_repository(tmp_path):
    onnx(tmp_path, files={"1/model.onnx": "x", "2/model.onnx": "y"})
    make_model(
        tmp_path,
        "pipeline",
        'name: "pipeline" platform: "ensemble" max_batch_size: 4 '
        'input [ { name: "x" data_type: TYPE_FP32 dims: [ 3 ] } ] output [ { name: "y" data_type: TYPE_FP32 dims: [ 3 ] } ] '
        'ensemble_scheduling { step [ { model_name: "resnet" model_version: -1 '
        'input_map { key: "x" value: "x" } output_map { key: "y" value: "y" } } ] }',
        {"1/": ""},
    )
    report = validate_repository(tmp_path)
    assert report.ok, messages(report)
    assert {m.name: m.served_versions for m in report.models} == {"resnet": [2], "pipeline": [1]}


def test_missing_directory(tmp_path):
    report = validate_repository(tmp_path / "nope")
    assert only_error(report) == (".", "no such directory")


def test_an_empty_repository(tmp_path):
    assert "no model folders" in only_error(validate_repository(tmp_path))[1]


@pytest.mark.parametrize("folder", ["v2", "0", "01", "latest", "99999999999999999999999", "9223372036854775808", "\u0661"])
def test_version_folders_must_be_positive_integers(tmp_path, folder):
    onnx(tmp_path, files={"1/model.onnx": "x", f"{folder}/model.onnx": "x"})
    path, message = only_error(validate_repository(tmp_path))
    assert path == f"resnet/{folder}" and "positive integer" in message


def test_a_config_naming_a_version_beyond_int64_is_malformed_not_a_crash(tmp_path):
    onnx(tmp_path, config=ONNX_CONFIG.format(name="resnet") + "version_policy { specific { versions: [ 99999999999999999999999 ] } }")
    path, message = only_error(validate_repository(tmp_path))
    assert path == "resnet/config.pbtxt" and "malformed" in message and "out of range" in message


def test_the_largest_int64_version_is_a_version(tmp_path):
    onnx(tmp_path, files={"9223372036854775807/model.onnx": "x"})
    report = validate_repository(tmp_path)
    assert report.ok and report.models[0].versions == [2**63 - 1]


@pytest.mark.parametrize("name", ["\x1b[2Jclear", "two\nlines", "-dash", ".hidden-not", "a b", "a%2F..", "x" * 129])
def test_model_folder_names_follow_the_config_pattern(tmp_path, name):
    """The same pattern as requiredModels/loadModels (tritonfleet/core/model_names.py): names that would need
    escaping in a URL, an object key or a terminal are refused before anything is published."""
    onnx(tmp_path, name=name, config=ONNX_CONFIG.format(name="m"))
    path, message = only_error(validate_repository(tmp_path))
    assert path == name and "not a model name tritonfleet accepts" in message


def test_a_link_to_a_file_outside_the_repository_is_refused(tmp_path):
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = x")
    root = tmp_path / "repo"
    onnx(root, files={"1/model.onnx": "x"})
    (root / "resnet" / "1" / "labels.txt").symlink_to(secret)
    path, message = only_error(validate_repository(root))
    assert path == "resnet/1/labels.txt" and "outside the repository" in message and str(secret) in message


def test_a_link_inside_the_repository_is_published_as_its_file(tmp_path):
    onnx(tmp_path, files={"1/model.onnx": "x", "2/other.bin": "w"})
    (tmp_path / "resnet" / "2" / "model.onnx").symlink_to("../1/model.onnx")
    report = validate_repository(tmp_path)
    assert report.ok, messages(report)
    files = report.models[0].files
    assert files["2/model.onnx"] == (tmp_path / "resnet" / "1" / "model.onnx").resolve()


@pytest.mark.parametrize("link", ["folder", "model", "dangling"])
def test_links_to_folders_or_nothing_are_refused(tmp_path, link):
    root = tmp_path / "repo"
    onnx(root, files={"1/model.onnx": "x"})
    if link == "folder":
        (root / "resnet" / "2").symlink_to(root / "resnet" / "1")
        expected = ("resnet/2", "a link to a folder")
    elif link == "model":
        (root / "copy").symlink_to(root / "resnet")
        expected = ("copy", "a link to a folder")
    else:
        (root / "resnet" / "1" / "weights.bin").symlink_to(root / "nowhere")
        expected = ("resnet/1/weights.bin", "a link to nothing")
    path, message = only_error(validate_repository(root))
    assert (path, message[: len(expected[1])]) == expected


def test_fifos_and_unprintable_file_names_are_refused(tmp_path):
    import os

    onnx(tmp_path, files={"1/model.onnx": "x", "1/\x1b[31mred.txt": "x"})
    os.mkfifo(tmp_path / "resnet" / "1" / "pipe")
    found = sorted(messages(validate_repository(tmp_path)))
    assert found == [
        ("error", "resnet/1/\x1b[31mred.txt", "a name with characters that do not print; rename it"),
        ("error", "resnet/1/pipe", "not a regular file (a FIFO, socket or device)"),
    ]


def test_cli_escapes_control_characters_in_what_it_prints(tmp_path):
    onnx(tmp_path, name="\x1b[2Jx", config=ONNX_CONFIG.format(name="m"))
    result = run_cli("models", "validate", str(tmp_path))
    assert result.returncode == 1 and "\x1b" not in result.stderr and "\\u001b[2Jx" in result.stderr


def test_config_name_must_match_the_folder(tmp_path):
    onnx(tmp_path, config=ONNX_CONFIG.format(name="resnet50"))
    path, message = only_error(validate_repository(tmp_path))
    assert path == "resnet/config.pbtxt" and "'resnet50'" in message and "'resnet'" in message


@pytest.mark.parametrize(
    ("backend_line", "expected"),
    [
        ('platform: "onnxruntime_onnx"', "1/model.onnx"),
        ('backend: "onnxruntime"', "1/model.onnx"),
        ('platform: "tensorrt_plan"', "1/model.plan"),
        ('backend: "pytorch"', "1/model.pt"),
        ('backend: "python"', "1/model.py"),
        ('platform: "tensorflow_savedmodel"', "1/model.savedmodel"),
        ('backend: "python" default_model_filename: "serve.py"', "1/serve.py"),
    ],
)
def test_each_backend_needs_its_model_file(tmp_path, backend_line, expected):
    make_model(tmp_path, "m", f'name: "m" {backend_line}', {"1/weights.bin": "x"})
    path, message = only_error(validate_repository(tmp_path))
    assert path == f"m/{expected}" and message.startswith("missing")


def test_a_savedmodel_must_be_a_folder(tmp_path):
    make_model(tmp_path, "tf", 'platform: "tensorflow_savedmodel"', {"1/model.savedmodel": "not a folder"})
    assert only_error(validate_repository(tmp_path)) == ("tf/1/model.savedmodel", "model.savedmodel must be a folder")


def test_missing_and_malformed_config(tmp_path):
    make_model(tmp_path, "noconfig", None, {"1/model.onnx": "x"})
    make_model(tmp_path, "broken", 'name: "broken"\nmax_batch_size: lots\n', {"1/model.onnx": "x"})
    report = validate_repository(tmp_path)
    found = {path: message for _, path, message in messages(report)}
    assert found["noconfig/config.pbtxt"].startswith("missing")
    assert found["broken/config.pbtxt"].startswith("malformed: 2:") and "lots" in found["broken/config.pbtxt"]
    assert report.models == []


def test_one_scheduler_only(tmp_path):
    onnx(tmp_path, config='platform: "onnxruntime_onnx" max_batch_size: 2 dynamic_batching {} sequence_batching {}')
    assert "oneof" in only_error(validate_repository(tmp_path))[1]


def test_dynamic_batching_needs_max_batch_size(tmp_path):
    onnx(tmp_path, config='name: "resnet" platform: "onnxruntime_onnx" dynamic_batching { }')
    assert "needs max_batch_size > 0" in only_error(validate_repository(tmp_path))[1]


def test_preferred_batch_sizes_fit_max_batch_size(tmp_path):
    onnx(tmp_path, config='platform: "onnxruntime_onnx" max_batch_size: 4 dynamic_batching { preferred_batch_size: [ 2, 8 ] }')
    assert "preferred_batch_size 8" in only_error(validate_repository(tmp_path))[1]


def test_batching_without_a_batcher_is_a_warning(tmp_path):
    onnx(tmp_path, config='platform: "onnxruntime_onnx" max_batch_size: 4')
    report = validate_repository(tmp_path)
    assert report.ok and "Triton will not combine requests" in report.findings[0].message


def test_instance_group_kinds(tmp_path):
    onnx(tmp_path, config='platform: "onnxruntime_onnx" instance_group [ { kind: KIND_CPU gpus: [ 0 ] }, { count: -1 } ]')
    found = [message for _, _, message in messages(validate_repository(tmp_path))]
    assert any("instance_group[0] lists gpus but its kind is KIND_CPU" in m for m in found)
    assert any("instance_group[1].count must not be negative" in m for m in found)


def test_unknown_instance_group_kind_is_a_parse_error(tmp_path):
    onnx(tmp_path, config='platform: "onnxruntime_onnx" instance_group [ { kind: KIND_TPU } ]')
    assert "KIND_TPU" in only_error(validate_repository(tmp_path))[1]


def test_tensors_need_a_data_type_and_sane_dims(tmp_path):
    tensors = 'input [ { name: "x" dims: [ 3 ] } ] output [ { name: "y" data_type: TYPE_FP32 dims: [ 0 ] } ]'
    onnx(tmp_path, config=f'platform: "onnxruntime_onnx" {tensors}')
    found = [message for _, _, message in messages(validate_repository(tmp_path))]
    assert "input 'x' has no data_type (e.g. TYPE_FP32)" in found
    assert any(m.startswith("output 'y' has dims [0]") for m in found)


def test_version_policy_must_name_existing_versions(tmp_path):
    onnx(tmp_path, config='platform: "onnxruntime_onnx" version_policy { specific { versions: [ 1, 3 ] } }')
    assert only_error(validate_repository(tmp_path))[1] == "version_policy.specific names version 3, which has no folder"


def test_version_policies_select_served_versions(tmp_path):
    files = {f"{v}/model.onnx": "x" for v in (1, 2, 10)}
    onnx(tmp_path, "latest", config='platform: "onnxruntime_onnx" version_policy { latest { num_versions: 2 } }', files=files)
    onnx(tmp_path, "all", config='platform: "onnxruntime_onnx" version_policy { all { } }', files=files)
    onnx(tmp_path, "default", config='platform: "onnxruntime_onnx"', files=files)
    served = {m.name: m.served_versions for m in validate_repository(tmp_path).models}
    assert served == {"latest": [2, 10], "all": [1, 2, 10], "default": [10]}


def test_an_ensemble_needs_steps_and_a_version_folder(tmp_path):
    make_model(tmp_path, "pipe", 'platform: "ensemble"', {})
    found = {message for _, _, message in messages(validate_repository(tmp_path))}
    assert any(m.startswith("no version folder") for m in found)


def test_every_problem_is_reported_with_its_path(tmp_path):
    onnx(tmp_path, "a", config=ONNX_CONFIG.format(name="b"))
    onnx(tmp_path, "c", files={"x/model.onnx": "x", "1/weights": "x"})
    make_model(tmp_path, "d", "name: ", {"1/model.onnx": "x"})
    paths = {path for severity, path, _ in messages(validate_repository(tmp_path)) if severity == "error"}
    assert paths == {"a/config.pbtxt", "c/x", "c/1/model.onnx", "d/config.pbtxt"}


def test_cli_exit_codes_and_paths(tmp_path):
    good = run_cli("models", "validate", str(SAMPLE))
    assert good.returncode == 0, good.stderr
    assert "1 model(s) OK (add_version [1])" in one_line(good.stdout)  # wrapped to 80 columns
    shutil.copytree(SAMPLE, tmp_path / "repo")
    (tmp_path / "repo" / "add_version" / "1" / "model.py").unlink()
    bad = run_cli("models", "validate", str(tmp_path / "repo"))
    assert bad.returncode == 1
    assert f"error: {tmp_path / 'repo' / 'add_version' / '1' / 'model.py'}: missing" in one_line(bad.stderr)
    assert "Traceback" not in bad.stderr
