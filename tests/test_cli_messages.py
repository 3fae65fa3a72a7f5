"""Messages that never break: the ugliest config values, YAML and paths through the CLI, each a clean exit 1.

Everything the CLI prints is plain text, never Rich markup, so a value like `[/x]` or a pattern like
`^[a-z][a-z0-9-]{0,19}$` reaches the user exactly as written (markup would eat it or crash on it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, one_line, run_cli

LONG = "x" * 5000


def _project(tmp_path: Path, edit=None, text: str | None = None) -> Path:
    """A copy of the project whose dev stack file is edited (code and pack are the real ones, linked)."""
    for item in ("__main__.py", "components", "tritonfleet", "policies", "charts"):
        if (ROOT / item).exists():
            (tmp_path / item).symlink_to(ROOT / item)
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    if text is None:
        document = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
        edit(document["config"])
        text = yaml.safe_dump(document, allow_unicode=True)
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _pool(config: dict) -> dict:
    return config["tritonfleet:gpuPools"][0]


def _edits(*edits):
    def apply(config: dict) -> None:
        for key, value in edits:
            if key.startswith("pool."):
                _pool(config)[key[len("pool.") :]] = value
            elif key.startswith("deployment."):
                config["tritonfleet:tritonDeployments"][0][key[len("deployment.") :]] = value
            else:
                config[f"tritonfleet:{key}"] = value

    return apply


# case -> (edits of the dev stack's config, texts the message must show as written). ConfigError lists every
# problem, so one run checks several values.
UGLY_CONFIG = {
    "markup-like": (
        _edits(("environment", "[/x]"), ("region", "[bold]x"), ("deployment.name", "[/x]"), ("pool.gpu", "[red]L4[/red]"),
               ("[/x]", "1")),
        ['"[/x]"', '"[bold]x"', "'^[a-z][a-z0-9-]{0,19}$'", '"[red]L4[/red]"', "tritonfleet:[/x]"],
    ),
    "quotes-unicode-long": (
        _edits(("region", "us-'east\"-1"), ("pool.name", "🚀שלום"), ("deployment.name", LONG)),
        # a value longer than 100 characters is shown cut, with its length (problems.SHOWN_CHARS)
        ["us-'east", "gpuPools[0].name", '"' + LONG[:99] + "… (5002 characters)"],
    ),
    "not-strings": (
        _edits(("environment", True), ("region", {"a": [1]}), ("pool.name", ["a", "[b]"]), ("pool.gpu", {"a": "[/x]"}),
               ("deployment.name", None), ("deployment.pool", 1.5)),
        ['["a", "[b]"]', '{"a": "[/x]"}', '{"a": [1]}', "tritonDeployments[0].name = null", "tritonDeployments[0].pool = 1.5"],
    ),
    "not-lists": (
        _edits(("gpuPools", "[/x]"), ("modelBuckets", 5), ("tritonDeployments", None)),
        ['tritonfleet:gpuPools = "[/x]"', "tritonfleet:modelBuckets"],
    ),
}


@pytest.mark.parametrize("case", sorted(UGLY_CONFIG))
def test_ugly_config_values_are_shown_as_written(tmp_path, case):
    edit, shown = UGLY_CONFIG[case]
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(_project(tmp_path, edit)))
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output and "MarkupError" not in output
    assert "configuration problem" in result.stderr
    for text in shown:
        assert one_line(text) in one_line(result.stderr)  # messages are wrapped to 80 columns


# YAML's own types that JSON lacks, where the engine's config is JSON text: each is shown as text and validated.
YAML_TYPES = [
    ("gpu: L40S", "gpu: 2026-01-01", 'gpuPools[0].gpu = "2026-01-01"'),
    ("gpu: L40S", "gpu: !!binary W2JvbGRdeA==", 'gpuPools[0].gpu = "[bold]x"'),
    ("gpu: L40S", "gpu: {1: a, b: c, null: d, 2026-01-01: e}", '{"1": "a", "2026-01-01": "e", "b": "c", "null": "d"}'),
    ("gpu: L40S", "gpu: !!set {b, a, 2026-01-01}", 'gpuPools[0].gpu = ["2026-01-01", "a", "b"]'),
]


@pytest.mark.parametrize(("written", "replaced", "shown"), YAML_TYPES, ids=["date", "binary", "mixed-keys", "set"])
def test_yaml_types_json_lacks_are_shown_as_text(tmp_path, written, replaced, shown):
    dev = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    assert dev.count(written) == 1
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(_project(tmp_path, text=dev.replace(written, replaced))))
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr
    assert one_line(shown) in one_line(result.stderr)


def test_yaml_types_in_a_free_form_section_plan(tmp_path):
    """Tags take any text: a date and a !!binary value (and a date as a key) plan as their text."""
    dev = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    assert dev.count("team: ml-platform") == 1
    text = dev.replace("team: ml-platform", "team: 2026-01-01\n    2026-01-02: !!binary aGVsbG8=")
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(_project(tmp_path, text=text)), "--json", str(tmp_path / "plan.json"))
    assert result.returncode == 0, result.stderr
    assert {"team": "2026-01-01", "2026-01-02": "hello"}.items() <= _tags(json.loads((tmp_path / "plan.json").read_text())).items()


def _tags(plan: dict) -> dict:
    """The tags of the plan's first AWS resource that has any."""
    return next(r["inputs"]["tags"] for r in plan["resources"] if isinstance(r.get("inputs", {}).get("tags"), dict))


UGLY_YAML = {
    "top-level-list": ("- a\n- b\n", "must be a mapping of keys to values, not list"),
    "config-is-a-list": ("config:\n  - a\n", "config must be a mapping of keys to values, not list"),
    "config-is-text": ("config: '[/x]'\n", 'config must be a mapping of keys to values, not str "[/x]"'),
    "numeric-key": ("config:\n  1: x\n", "config key '1' needs a namespace"),
    "tab": ("config:\n\ttritonfleet:cloud: aws\n", "line 2, column 1: not valid YAML: found character '\\t' that cannot start any token"),
}


@pytest.mark.parametrize("case", sorted(UGLY_YAML))
def test_malformed_stack_files_are_user_errors(tmp_path, case):
    text, message = UGLY_YAML[case]
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(_project(tmp_path, text=text)))
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert one_line(message) in one_line(result.stderr) and "Pulumi.dev.yaml" in result.stderr


def test_yaml_syntax_error_names_file_line_column_and_the_parsers_message(tmp_path):
    text = "config:\n  tritonfleet:cloud: aws\n  tritonfleet:cluster: {zones: [us-east-1a, us-east-1b}\n"
    project = _project(tmp_path, text=text)
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(project))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    where = f"{project / 'stacks' / 'Pulumi.dev.yaml'}, line 3, column 55: not valid YAML: expected ',' or ']', but got '}}'"
    assert where in one_line(result.stderr)
    assert "while parsing a flow sequence at line 3, column 32" in one_line(result.stderr)
    assert "<unicode string>" not in result.stderr


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["plan", "--stack", "[/x]"], "no stack '[/x]'"),
        (["diff", "[/x]/base.json", "[bold]head.json"], "[/x]/base.json does not exist"),
        (["models", "validate", "[/x]"], "[/x]"),
    ],
    ids=["unknown-stack", "diff-missing-files", "models-missing-folder"],
)
def test_bracketed_names_and_paths_in_messages(args, shown):
    result = run_cli(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert shown in result.stderr


def test_bracketed_policy_config_keys_are_reported(tmp_path):
    plan, config = tmp_path / "plan.json", tmp_path / "policy.json"
    plan.write_text(json.dumps({"format": 1, "stack": "prod", "project": "tritonfleet", "resources": []}))  # the config is read first
    config.write_text(json.dumps({"[/x]": "mandatory", "all": "[bold]"}))
    result = run_cli("policy", "check", "--stack", "prod", "--plan", str(plan), "--policy-config", str(config))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "[/x]: no such policy in the pack" in result.stderr and 'all: "[bold]" is not one of' in result.stderr
