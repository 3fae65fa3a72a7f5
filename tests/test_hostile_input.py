"""Input written to break the tool: alias bombs, duplicate keys, deep nesting, text that is not
UTF-8, numbers that are not finite or out of range, unwritable output paths. Each is a clean exit 1 naming what is wrong,
never a traceback, a hang or a value silently dropped. tests/test_input_properties.py feeds generated input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, one_line, run_cli

from tritonfleet.plan.project import MAX_YAML_DEPTH, MAX_YAML_VALUES, ProjectError, read_yaml, stack_config

DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()


def _laughs(levels: int) -> str:
    """A "billion laughs" document: each anchor a list of ten aliases of the one before (10**levels values)."""
    lines = ["lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _read(tmp_path: Path, text: str | bytes):
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return read_yaml(path)


# ---- stack files: what the YAML parser would build ----


def test_an_alias_bomb_is_refused_before_anything_is_built(tmp_path):
    with pytest.raises(ProjectError) as caught:
        _read(tmp_path, _laughs(9))  # 10**9 values once expanded
    assert f"more than {MAX_YAML_VALUES:,} values through its aliases (*name)" in str(caught.value)
    assert "Pulumi.dev.yaml, line 5:\n" in str(caught.value)  # lol4 holds 10**5 values and more: past the bound


def test_aliases_within_the_bound_and_merges_still_load(tmp_path):
    text = "base: &base {x: 1, y: 2}\nmerged:\n  <<: *base\n  x: 3\nagain: *base\n" + _laughs(4)
    document = _read(tmp_path, text)
    assert document["merged"] == {"x": 3, "y": 2} and document["again"] == {"x": 1, "y": 2}  # own keys override <<


def test_duplicate_keys_are_refused_with_every_key_and_its_lines(tmp_path):
    text = DEV.replace("  tritonfleet:gpuLimit: 4\n", "  tritonfleet:gpuLimit: 4\n  tritonfleet:gpuLimit: 400\n")
    text = text.replace("      maxNodes: 2\n", "      maxNodes: 2\n      maxNodes: 20\n")
    with pytest.raises(ProjectError) as caught:
        _read(tmp_path, text)
    message = str(caught.value)
    assert "2 key(s) given twice in one mapping\n" in message and "(YAML would keep the last silently" in message
    lines = text.splitlines()
    for key, value in (("maxNodes", "20"), ("tritonfleet:gpuLimit", "400")):
        again = next(i for i, line in enumerate(lines, 1) if line.strip() == f"{key}: {value}")
        assert f'"{key}" on line {again - 1} and again on line {again}' in message


@pytest.mark.parametrize("text", ["a: " + "[" * 10_000 + "]" * 10_000, "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v\n"],
                         ids=["flow", "block"])
def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path, text):
    with pytest.raises(ProjectError) as caught:
        _read(tmp_path, text)
    assert f"nested more than {MAX_YAML_DEPTH} levels deep" in str(caught.value)


def test_a_stack_file_that_is_not_utf8_names_the_line_and_byte(tmp_path):
    with pytest.raises(ProjectError) as caught:
        _read(tmp_path, DEV.encode().replace(b"team: ml-platform", b"team: caf\xe9"))
    line = next(i for i, text in enumerate(DEV.splitlines(), 1) if "team: ml-platform" in text)
    assert f"Pulumi.dev.yaml, line {line}, column 14:\n  not UTF-8 text (byte 0xe9); save the file as UTF-8" in str(caught.value)


def test_deeply_nested_json_from_the_engine_is_a_config_problem():
    """`pulumi config set --path` can hand the program JSON text of any depth: the parser's RecursionError and a
    depth the schema would recurse through are one problem naming the key."""
    from tritonfleet.core.config import ConfigError, load_stack_config
    from tritonfleet.plan.project import load_project

    raw, _ = stack_config(load_project(ROOT), "dev")
    raw["tritonfleet:cluster"] = '{"a":' * 100_000 + "1" + "}" * 100_000
    raw["tritonfleet:tags"] = '{"a":' * 100 + '"b"' + "}" * 100
    with pytest.raises(ConfigError) as caught:
        load_stack_config(raw, "dev")
    assert {p.key for p in caught.value.problems} == {"cluster", "tags"}
    assert all("nested at most 64 levels deep" in p.allowed for p in caught.value.problems)


def _project_with(tmp_path: Path, text: str | bytes) -> Path:
    for item in ("__main__.py", "components", "tritonfleet", "policies", "charts"):
        (tmp_path / item).symlink_to(ROOT / item)
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_bytes(text if isinstance(text, bytes) else text.encode())
    return tmp_path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DEV + _laughs(9), "values through its aliases"),
        (DEV.replace("  tritonfleet:gpuLimit: 4\n", "  tritonfleet:gpuLimit: 4\n  tritonfleet:gpuLimit: 400\n"), "given twice"),
        (DEV + "deep: " + "[" * 5000 + "]" * 5000 + "\n", "levels deep"),
    ],
    ids=["alias-bomb", "duplicate-key", "deep"],
)
@pytest.mark.parametrize("command", [["plan"], ["policy", "check"], ["size", "--deployment", "resnet"]], ids=["plan", "policy-check", "size"])
def test_every_command_that_reads_a_stack_refuses_it_cleanly(tmp_path, text, message, command):
    result = run_cli(*command, "--stack", "dev", "--project-dir", str(_project_with(tmp_path, text)), timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert one_line(message) in one_line(result.stderr) and "Traceback" not in result.stdout + result.stderr


# ---- plan documents: read strictly, written as valid JSON ----

PLAN_TEXTS = {
    "nan": ('{"format": 1, "cost": {"monthlyCeilingUsd": NaN}}', "plan.json, line 1:\n  the number NaN, which JSON does not have"),
    "infinity": ('{"format": 1,\n "cost": -Infinity}', "plan.json, line 2:\n  the number -Infinity"),
    "overflow": ('{"format": 1, "cost": 1e400}', "the number 1e400"),
    "duplicate-key": ('{"stack": "dev",\n "cost": {},\n "stack": "prod"}', 'a key given twice in one object (JSON readers disagree on which counts):\n  "stack" (lines 1, 3)'),
    "deep": ("[" * 50_000 + "]" * 50_000, "nested more than 100 levels deep"),
    "not-json": ('{"a": }', "is not JSON (line 1, column 7: Expecting value)"),
}


@pytest.mark.parametrize("case", sorted(PLAN_TEXTS))
def test_plan_documents_are_read_strictly(tmp_path, case):
    from tritonfleet.diff.documents import DiffInputError, read_document

    text, message = PLAN_TEXTS[case]
    (tmp_path / "plan.json").write_text(text)
    with pytest.raises(DiffInputError) as caught:
        read_document(tmp_path / "plan.json")
    assert message in str(caught.value)


def test_a_plan_document_that_is_not_utf8_is_refused(tmp_path):
    from tritonfleet.diff.documents import DiffInputError, read_document

    (tmp_path / "plan.json").write_bytes(b'{"stack": "dev",\n "x": "\xff"}')
    with pytest.raises(DiffInputError, match=r"plan.json, line 2:\n  not UTF-8 text \(byte 0xff\)"):
        read_document(tmp_path / "plan.json")


def test_a_plan_that_holds_a_number_that_is_not_finite_is_never_written():
    from tritonfleet.plan.document import PlanDocumentError, dumps

    with pytest.raises(PlanDocumentError, match=r"not finite at cost.pools\[0\].monthlyCeilingUsd, sizing.x: not written"):
        dumps({"cost": {"pools": [{"monthlyCeilingUsd": float("inf")}]}, "sizing": {"x": float("nan")}, "ok": 1.5})


@pytest.mark.parametrize("case", ["nan", "duplicate-key"])
@pytest.mark.parametrize("command", ["diff", "policy"])
def test_commands_that_read_plan_documents_refuse_bad_ones(tmp_path, stock_plan, case, command):
    import json

    good = tmp_path / "good.json"
    good.write_text(json.dumps(stock_plan("dev")))
    text = good.read_text()
    bad_text = {"nan": text.replace('"format": 1', '"format": NaN', 1), "duplicate-key": text.replace('"format": 1', '"format": 1, "format": 2', 1)}[case]
    (tmp_path / "bad.json").write_text(bad_text)
    args = ["diff", str(good), str(tmp_path / "bad.json")] if command == "diff" else ["policy", "check", "--stack", "dev", "--plan", str(tmp_path / "bad.json")]
    result = run_cli(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "bad.json" in result.stderr and "Traceback" not in result.stdout + result.stderr
    assert ("NaN" if case == "nan" else '"format"') in result.stderr


# ---- output paths ----


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("/nonexistent-tritonfleet/x.json", "cannot write /nonexistent-tritonfleet/x.json:\n  folder /nonexistent-tritonfleet does not exist"),
        ("{tmp}", "cannot write {tmp}:\n  it is a folder"),
        ("{tmp}/file/x.json", "cannot write {tmp}/file/x.json:\n  {tmp}/file is a file, not a folder"),
        ("/proc/x.json", "cannot write /proc/x.json:\n  folder /proc takes no new files"),
    ],
    ids=["missing-folder", "a-folder", "under-a-file", "read-only"],
)
@pytest.mark.parametrize("command", ["plan", "diff", "preflight"])
def test_unwritable_output_paths_are_user_errors(tmp_path, target, message, command):
    target, message = target.format(tmp=tmp_path), message.format(tmp=tmp_path)
    (tmp_path / "file").write_text("x")
    args = {
        "plan": ["plan", "--stack", "dev", "--json", target],
        "diff": ["diff", str(tmp_path / "file"), str(tmp_path / "file"), "--output", target],
        "preflight": ["preflight", "--stack", "dev", "--json", target],
    }[command]
    result = run_cli(*args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert one_line(message) in one_line(result.stderr) and "Traceback" not in result.stdout + result.stderr
    assert not Path("/nonexistent-tritonfleet").exists()


def test_a_missing_folder_inside_the_working_folder_is_created(tmp_path, monkeypatch):
    from tritonfleet.output_paths import OutputError, make_output_folder, write_output

    monkeypatch.chdir(tmp_path)
    write_output(Path("plans/sub/x.json"), "{}\n")
    assert (tmp_path / "plans" / "sub" / "x.json").read_text() == "{}\n"
    make_output_folder(tmp_path.parent / f"{tmp_path.name}-comments")  # the folder named is made where its parent is
    with pytest.raises(OutputError, match="does not exist"):
        make_output_folder(tmp_path.parent / f"{tmp_path.name}-missing" / "comments")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"all": "mandatory", "all": "advisory"}', "a key given twice in one object"),
        (b'{"gpu-stack-limit-total-gpus": {"maxGpus": NaN}}', "the number NaN, which JSON does not have"),
        (b'{"x": "caf\xe9"}', "not UTF-8 text (byte 0xe9)"),
        (b"[" * 5000 + b"]" * 5000, "nested more than 100 levels deep"),
    ],
    ids=["duplicate-key", "nan", "latin-1", "deep"],
)
def test_policy_configs_and_load_test_results_are_read_strictly(tmp_path, data, message):
    """The other JSON files the tool reads go through the same strict reader (tritonfleet/core/strict_json.py)."""
    from tritonfleet.core.loadtest_result import ResultError, read_result
    from tritonfleet.policycheck.pack_config import PackConfigError, load

    path = tmp_path / "file.json"
    path.write_bytes(data)
    with pytest.raises(PackConfigError, match=re.escape(message)):
        load(path)
    with pytest.raises(ResultError, match=re.escape(message)):
        read_result(path)


def test_a_stack_file_too_big_to_be_one_is_refused_before_it_is_parsed(tmp_path):
    """PyYAML reads about 0.4 MB/s: a 50 MB value would read like a hang."""
    with pytest.raises(ProjectError, match=r":\n  2,097,156 characters: a stack file takes a few thousand \(at most 1,048,576\)"):
        _read(tmp_path, "a: " + "x" * (2 << 20) + "\n")
    with pytest.raises(ProjectError, match=r"line 10000:\n  more than 20,000 values; a stack file holds a few hundred$"):
        _read(tmp_path, "".join(f"k{i}: {i}\n" for i in range(30_000)))


@pytest.mark.parametrize("command", [["policy", "init"], ["policy", "check"], ["plan"], ["size", "--deployment", "x"]])
def test_a_stack_name_with_a_path_is_refused_and_nothing_is_written(tmp_path, command):
    stack = "../" * 2 + str(tmp_path / "evil").lstrip("/")
    result = run_cli(*command, "--stack", stack)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "a stack name has letters, digits, '-', '_' and '.' only" in one_line(result.stderr)
    assert "Traceback" not in result.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["resources"][5].update(type=[]), "resources[5].type: input should be a valid string"),
        (lambda d: d["cost"].update(monthlyCeilingUsd=1.7e308), "cost.monthlyCeilingUsd: input should be less than or equal to 9007199254740991"),
        (lambda d: d["cost"]["pools"][0].update(nodes={"spot": {"min": "x"}}), "cost.pools[0].nodes.spot.min: input should be a valid integer"),
    ],
    ids=["type-not-text", "money-past-json-integers", "node-count-not-a-number"],
)
def test_a_plan_document_with_fields_of_the_wrong_type_is_refused_by_name(stock_plan, edit, message):
    """An edited or foreign document is refused before the comparison, not halfway through it with a TypeError."""
    from tritonfleet.diff.documents import DiffInputError, check_plan

    document = stock_plan("dev")
    edit(document)
    with pytest.raises(DiffInputError, match=re.escape(f"head.json is not a tritonfleet plan document:\n  {message}")):
        check_plan(document, "head.json")


def test_integers_too_long_for_python_are_refused_where_they_are_read(tmp_path):
    """Python refuses to read an integer of more than 4,300 digits (a ValueError): in a stack file, in the engine's
    JSON text and in a JSON file alike that is a message at its place, not a traceback."""
    from tritonfleet.core.config import ConfigError, load_stack_config
    from tritonfleet.core.strict_json import StrictJsonError, loads_json
    from tritonfleet.plan.project import load_project

    digits = "9" * 5000
    with pytest.raises(ProjectError, match=r"Pulumi.dev.yaml, line 2, column 4: not valid YAML: a number of 5,000 digits"):
        _read(tmp_path, f"a: 1\nb: {digits}\n")
    with pytest.raises(StrictJsonError, match=r"x.json, line 2:\n  a number of 5,000 digits; none this long is a value"):
        loads_json('{\n"a": ' + digits + "}", "x.json")
    raw, _ = stack_config(load_project(ROOT), "dev")
    raw["tritonfleet:budget"] = '{"monthlyUsd": ' + digits + "}"
    with pytest.raises(ConfigError) as caught:
        load_stack_config(raw, "dev")
    assert "numbers of at most 4,300 digits" in caught.value.problems[0].allowed


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("2026-13-45", "not a valid timestamp (month must be in 1..12)"),
        ("2026-02-30 10:00:00", "not a valid timestamp (day is out of range for month)"),
        ("!!bool maybe", "not a valid bool ('maybe')"),
        ("!!float x", "not a valid float"),
        ("!!timestamp x", "not a valid timestamp"),
        ("!!map [1]", "expected a mapping node, but found sequence"),
        ("!!set [1]", "expected a mapping node, but found sequence"),
    ],
)
def test_values_pyyaml_cannot_build_are_yaml_errors_at_their_place(tmp_path, value, why):
    """PyYAML's constructors fail on these with ValueError, KeyError, AttributeError or TypeError (tracebacks)."""
    with pytest.raises(ProjectError, match=re.escape(f"Pulumi.dev.yaml, line 2, column 12: not valid YAML: {why}")):
        _read(tmp_path, f"a: 1\nb: [1, {{c: {value}}}]\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "--stack", "dev", "--stack", "prod"], "--stack given 2 times ('dev', 'prod'): give each once"),
        (["plan", "-sdev", "--stack=prod", "-s", "x"], "--stack given 3 times ('dev', 'prod', 'x')"),
        (["policy", "check", "--stack", "dev", "--stack", "prod"], "--stack given 2 times ('dev', 'prod')"),
        (["loadtest", "--model", "m", "--rate", "1", "--rate", "2", "--url", "127.0.0.1:1"], "--rate given 2 times ('1', '2')"),
    ],
    ids=["long", "short-and-equals", "group-and-command", "loadtest"],
)
def test_an_option_given_twice_is_a_usage_error_not_last_wins(args, message):
    """Click keeps the last value of a one-value option silently: `--stack dev --stack prod` planned prod."""
    result = run_cli(*args)
    assert result.returncode == 64, result.stdout + result.stderr
    assert one_line(message) in one_line(result.stderr) and "Traceback" not in result.stderr


def test_repeatable_options_flags_and_what_follows_a_separator_are_not_repeats():
    import typer

    from tritonfleet.cli import app
    from tritonfleet.cli_args import repeated_options

    def command():
        return typer.main.get_command(app)

    assert repeated_options(command, ["diff", "a", "b", "--stack", "x", "--stack", "y"]) == []  # --stack repeats there
    assert repeated_options(command, ["plan", "--stack", "dev", "--resources", "--resources"]) == []
    assert repeated_options(command, ["plan", "--stack", "dev", "--", "--stack", "x"]) == []
    assert repeated_options(command, ["plan", "-s", "dev", "--json", "x.json"]) == []
