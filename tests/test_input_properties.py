"""Property tests (hypothesis): no input breaks the tool. Hostile values are fed to
every key of real stacks, to stack files as text, to plan documents and to the CLI's arguments; each must be accepted
or refused cleanly (a ConfigError, ProjectError or DiffInputError listing what is wrong; exit 1 or 64), never a
traceback, a hang, a number JSON lacks in what is written, or a value silently dropped.

Kept fast: the pure validation functions in-process, the CLI through the run's fork server (tests/cli_forkserver.py),
bounded example counts, no example database (nothing written into the checkout), derandomized for a stable suite."""

from __future__ import annotations

import json
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, engine_config, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from tritonfleet.core.config import ConfigError, StackConfig, load_stack_config
from tritonfleet.plan.project import ProjectError, engine_string, load_project, stack_config

# Hypothesis keeps caches (the constants it draws from the code) in .hypothesis/ of the working folder: outside the
# checkout instead.
set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "tritonfleet-hypothesis"))
SETTINGS = settings(
    max_examples=80, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)

# Values that broke, or could break, a tool like this one: bounds of int32/int64/double, NaN and the infinities,
# subnormals, wrong types, long and control-character text, paths that climb, names of system namespaces.
NASTY = [
    0, -1, 1, 2**31 - 1, 2**31, 2**53 + 1, 2**63, 10**20, -(10**20), 0.0, -0.0, 0.5, 1e-320, 5e-324, 1e308, -1e308,
    9.3e18, float("nan"), float("inf"), float("-inf"), True, False, None, "", " ", "x" * 10_000, "\x1b[2J\x00",
    "../" * 3, "/etc/passwd", "kube-system", "a\nb", "[/x]", "1e400", "NaN", "-Infinity", "😀" * 100, [], {}, [1],
    {"a": 1}, [[[[[]]]]], {"secure": "x"},
]
VALUES = st.one_of(
    st.sampled_from(NASTY),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=80),
    st.lists(st.integers(), max_size=3),
)


# ---- stack config: every key of real stacks ----


def _leaves(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths to every value of a decoded config (the containers too: a list or object may be replaced whole)."""
    found = [path] if path else []
    if isinstance(value, dict):
        found += [p for key, item in value.items() for p in _leaves(item, (*path, key))]
    elif isinstance(value, list):
        found += [p for i, item in enumerate(value) for p in _leaves(item, (*path, i))]
    return found


# Optional keys the shipped stacks leave unset, so their bounds are fed too.
UNSET = [
    ("tritonfleet:tritonDeployments", 0, "maxUnavailable"), ("tritonfleet:tritonDeployments", 0, "queueTimeTarget"),
    ("tritonfleet:tritonDeployments", 0, "namespace"), ("tritonfleet:tritonDeployments", 0, "gpusPerReplica"),
    ("tritonfleet:tritonDeployments", 0, "repositoryGi"), ("tritonfleet:tritonDeployments", 0, "modelLoadThreads"),
    ("tritonfleet:tritonDeployments", 0, "loadtestResult"), ("tritonfleet:gpuPools", 0, "assumedPrice"),
    ("tritonfleet:gpuPools", 0, "diskGi"), ("tritonfleet:gpuPools", 0, "zones"), ("tritonfleet:sizing",),
    ("tritonfleet:tritonDeployments", 0, "targetLoad", "inferencesPerRequest"), ("tritonfleet:protect",),
]


@cache
def _decoded(stack: str) -> dict[str, Any]:
    return {key: json.loads(text) if text[:1] in "[{" else text for key, text in engine_config(stack).items()}


def _with(data: Any, path: tuple, value: Any) -> Any:
    """`data` with the value at `path` replaced (a list index one past the end appends), copying only along the path."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    # A scalar here: an earlier draw replaced the container this path goes through; it becomes one again.
    copied: Any = list(data) if isinstance(data, list) else dict(data) if isinstance(data, dict) else {}
    if isinstance(copied, list) and head >= len(copied):
        copied.append(_with({}, rest, value))
    elif isinstance(copied, dict) and head not in copied:  # a key the stack leaves unset
        copied[head] = _with({}, rest, value)
    else:
        copied[head] = _with(copied[head], rest, value)
    return copied


def _paths(stack: str) -> list[tuple]:
    decoded = _decoded(stack)
    return sorted(set(_leaves(decoded)) | {p for p in UNSET if p[0] in decoded}, key=repr)


def _sections(config: StackConfig) -> None:
    """What a plan computes from a valid config before the program runs, written as the plan document would be."""
    from tritonfleet.monitoring.autoscaling import autoscaling_alerts, autoscaling_rules
    from tritonfleet.plan.document import cost_section, disruption_section, monitoring_section, startup_section
    from tritonfleet.plan.sizing import plan_sizing

    sections = [cost_section(config), monitoring_section(config), disruption_section(config), startup_section(config),
                autoscaling_rules(config), autoscaling_alerts(config)]
    try:
        sections.append(plan_sizing(config, ROOT))
    except ConfigError as error:
        _check_report(error)
    json.dumps(sections, allow_nan=False, default=str)  # never NaN or Infinity in a document


def _check_report(error: ConfigError) -> None:
    text = str(error)
    assert error.problems and "configuration problem" in text.splitlines()[0]
    for problem in error.problems:
        assert problem.key and problem.allowed and problem.fix.startswith("pulumi config ")
    assert all(len(line) < 1200 for line in text.splitlines()), "values are shown cut"
    assert "\x1b" not in text and "\x00" not in text


def _validate(stack: str, data: dict[str, Any]) -> None:
    raw = {key: engine_string(value) for key, value in data.items()}
    try:
        config = load_stack_config(raw, stack)
    except ConfigError as error:
        _check_report(error)
    else:
        _sections(config)


@pytest.mark.parametrize("stack", ["dev", "gcp-prod"])
@SETTINGS
@given(data=st.data())
def test_any_value_at_any_key_is_accepted_or_a_config_error(stack, data):
    paths = _paths(stack)
    decoded = _decoded(stack)
    for _ in range(data.draw(st.integers(1, 3), label="keys changed")):
        path = data.draw(st.sampled_from(paths), label="key")
        try:
            decoded = _with(decoded, path, data.draw(VALUES, label="value"))
        except (KeyError, IndexError, TypeError):  # an earlier change removed the path's parent
            continue
    _validate(stack, decoded)


NUMBERS = st.floats(allow_nan=True, allow_infinity=True) | st.integers(min_value=-(2**80), max_value=2**80)


@settings(SETTINGS, max_examples=15)
@given(value=NUMBERS)
@example(value=5e-324)
@example(value=1e308)
@example(value=float("nan"))
@example(value=2**31)
@example(value=10**20)
@example(value=-1)
@example(value=0)
@pytest.mark.parametrize("stack", ["dev", "gcp-prod"])
def test_every_numeric_key_takes_any_number_cleanly(stack, value):
    """Each number of the stack, one at a time, set to the value (the examples are values that once broke a plan)."""
    decoded = _decoded(stack)
    for path in _numeric_paths(stack):
        _validate(stack, _with(decoded, path, value))


@cache
def _numeric_paths(stack: str) -> list[tuple]:
    decoded = _decoded(stack)
    return [p for p in _paths(stack) if isinstance(_get(decoded, p), (int, float)) and not isinstance(_get(decoded, p), bool)]


def _get(data: Any, path: tuple) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


# ---- stack files as text ----

DEV_TEXT = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
MAPPING_LINES = [i for i, line in enumerate(DEV_TEXT.splitlines()) if re.match(r"^\s+[A-Za-z][\w:.-]*: \S", line)]
INSERTS = st.one_of(
    st.sampled_from(["&a [x, x]", "*a", "*nope", "[" * 200, "{" * 70 + "}" * 70, "!!python/object:os.system ls",
                     "\t", "? [a]\n", "<<: *a", "---\n", "\ufeff", "%YAML 1.1\n", "9" * 5000, "1.0e400",
                     " 2026-13-45", " !!bool maybe", " !!float x", " !!timestamp x", " !!map [1]", " !!set [1]", " !!binary 1"]),
    st.text(max_size=20),
    st.binary(max_size=8).map(lambda b: b.decode("latin-1")),
)


def _stack_file(tmp: Path, text: bytes) -> None:
    (tmp / "stacks").mkdir(exist_ok=True)
    (tmp / "stacks" / "Pulumi.dev.yaml").write_bytes(text)


@pytest.fixture(scope="module")
def text_project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-text")
    (folder / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    return folder


def _load_text(folder: Path, text: bytes) -> None:
    _stack_file(folder, text)
    try:
        raw, secrets = stack_config(load_project(folder), "dev")
        load_stack_config(raw, "dev", secrets)
    except ProjectError as error:
        assert str(error) and "Traceback" not in str(error)
    except ConfigError as error:
        _check_report(error)


@settings(SETTINGS, max_examples=50)
@given(at=st.integers(0, len(DEV_TEXT)), insert=INSERTS, encoding=st.sampled_from(["utf-8", "latin-1", "utf-16"]))
def test_any_edit_of_a_stack_file_is_read_or_refused_cleanly(text_project, at, insert, encoding):
    text = DEV_TEXT[:at] + insert + DEV_TEXT[at:]
    _load_text(text_project, text.encode(encoding, errors="replace"))


@settings(SETTINGS, max_examples=25)
@given(line=st.sampled_from(MAPPING_LINES), value=st.sampled_from(["1", "x", "[]", "{}", "2026-01-01", "~"]))
def test_a_key_given_twice_is_never_last_wins(text_project, line, value):
    lines = DEV_TEXT.splitlines()
    key = lines[line].split(": ", 1)[0]
    lines.insert(line + 1, f"{key}: {value}")
    _stack_file(text_project, "\n".join(lines).encode())
    with pytest.raises(ProjectError, match="given twice in one mapping"):
        stack_config(load_project(text_project), "dev")


# ---- plan documents ----


@cache
def _plan_text() -> str:
    from tests.plan_cache import stock_plan

    return json.dumps(stock_plan("dev"), indent=2, sort_keys=True)


def _compare(base_text: str, head_text: str) -> None:
    """What `tritonfleet diff BASE HEAD` does with two documents, in-process."""
    from tritonfleet.diff import DiffInputError, compare_plans, report, to_json
    from tritonfleet.diff.documents import check_plan, parse_document

    try:
        base = check_plan(parse_document(base_text, "base.json"), "base.json")
        head = check_plan(parse_document(head_text, "head.json"), "head.json")
    except DiffInputError as error:
        assert str(error).startswith(("base.json", "head.json"))
        return
    diffs = compare_plans({"dev": base}, {"dev": head})
    report(diffs)
    json.dumps(to_json(diffs), allow_nan=False)


@cache
def _plan_paths() -> list[tuple]:
    return [p for p in _leaves(json.loads(_plan_text())) if p[0] != "resources" or len(p) <= 4]


@settings(SETTINGS, max_examples=30)
@given(data=st.data())
def test_any_value_in_a_plan_document_is_compared_or_refused_cleanly(data):
    document = json.loads(_plan_text())
    paths = _plan_paths()
    for _ in range(data.draw(st.integers(1, 3), label="changes")):
        path = data.draw(st.sampled_from(paths), label="path")
        try:
            document = _with(document, path, data.draw(VALUES, label="value"))
        except (KeyError, IndexError, TypeError):
            continue
    _compare(_plan_text(), json.dumps(document, indent=2, sort_keys=True))


@settings(SETTINGS, max_examples=40)
@given(at=st.integers(0, 20_000), insert=st.sampled_from([": NaN", "NaN", "Infinity", "-Infinity", "1e400", '"format": 1,', "[" * 300, "\ud800", '"', ","]))
def test_any_edit_of_a_plan_documents_text_is_compared_or_refused_cleanly(at, insert):
    text = _plan_text()
    _compare(text, text[:at] + insert + text[at:])


# ---- CLI arguments ----

WORDS = ["--stack", "dev", "nope", "--json", "/nonexistent/x.json", "/proc/x.json", ".", "--project-dir", "/", "-x",
         "--rate", "--concurrency", "--duration", "nan", "inf", "-1", "0", "1e400", "99999999999999999999", "--url",
         "127.0.0.1:1", "--model", "m", "--deployment", "resnet", "--plan", "README.md", "--format", "json", "x" * 5000,
         "--base-ref", "--output", "--replica", "=", "--benchmark-model"]
COMMANDS = [["loadtest"], ["size"], ["diff"], ["policy", "check"], ["models", "validate"], ["models", "sync", "--dry-run"],
            ["models", "load"], ["plan", "--stack", "nope"], ["policy", "init"], ["preflight", "--stack", "nope"]]


@settings(SETTINGS, max_examples=12)
@given(command=st.sampled_from(COMMANDS), words=st.lists(st.sampled_from(WORDS), max_size=6))
def test_any_arguments_are_a_result_or_a_clear_error(command, words):
    result = run_cli(*command, *words, timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode in (0, 1, 64), output
    assert "Traceback" not in output
    if result.returncode:
        assert result.stderr.strip(), "an error says what is wrong"
