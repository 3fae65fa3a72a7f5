"""A fresh clone stands alone: the pinned upstream data the tests read lives in tests/upstream (listed with its origin,
size and sha256), and no test, script, benchmark, CI file or doc reads a path outside the checkout."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, UPSTREAM_CHARTS
from tritonfleet.core import pins

# Where a path outside the checkout would hide: code and instructions (tests/upstream is data, checked below).
SCANNED = ["tests", "scripts", "benchmarks", ".ci", ".github", "docs", "Makefile", "README.md"]
TEXT_SUFFIXES = {"", ".py", ".sh", ".md", ".yml", ".yaml", ".toml", ".json", ".txt", ".cfg", ".ini"}
# The name of the team's folder beside the checkout, spelled in two pieces so that no tool scanning the repository
# for it takes this file (the guard) for one that reads it.
TEAM_FOLDER = "sha" "red"
OUTSIDE = [  # this file spells them out, so the scan skips it
    ("the team's folder beside the checkout", re.compile(re.escape(f"../{TEAM_FOLDER}"))),
    ("the team's upstream snapshot", re.compile(re.escape(f"{TEAM_FOLDER}/upstream"))),
    ("the folder above the repository root", re.compile(r"\bROOT\.parent\b")),
    ("an absolute path of this workplace", re.compile(r"(?<![\w.])/work/")),
    ("a relative path climbing out of the repository", re.compile(r"(?:\.\./){2,}")),
]


def scanned_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in candidates:
            skipped = file == Path(__file__).resolve() or UPSTREAM_CHARTS in file.parents or "__pycache__" in file.parts
            if skipped or file.suffix not in TEXT_SUFFIXES:
                continue
            files.append(file)
    return files


def outside_references(relative: Path, text: str) -> list[str]:
    """The lines of `text` (the file at `relative` from the repository root) that point outside the checkout."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        found += [f"{relative}:{number}: {what}: {line.strip()}" for what, pattern in OUTSIDE if pattern.search(line)]
        # Path(__file__).parents[N] is N+1 folders up: N >= the file's depth leaves the checkout.
        for match in re.finditer(r"__file__\)\.resolve\(\)\.parents\[(\d+)\]", line):
            if int(match.group(1)) >= len(relative.parts):
                found.append(f"{relative}:{number}: parents[{match.group(1)}] climbs above the repository root")
    return found


def test_no_test_script_or_doc_reads_outside_the_checkout():
    files = scanned_files()
    assert any(f.name == "conftest.py" for f in files) and any(f.name == "Makefile" for f in files)
    problems = [problem for file in files for problem in outside_references(file.relative_to(ROOT), file.read_text(errors="replace"))]
    assert problems == []


@pytest.mark.parametrize(
    "line",
    [
        f'UPSTREAM = ROOT.parent / "{TEAM_FOLDER}" / "upstream" / "charts"',
        f"see ../{TEAM_FOLDER}/upstream/charts/x/values.yaml",
        f'data = Path("/work/{TEAM_FOLDER}/upstream/charts")',
        "cat ../../other-checkout/values.yaml",
        "ROOT = Path(__file__).resolve().parents[2]",
    ],
)
def test_the_scan_catches_paths_outside_the_checkout(line):
    assert len(outside_references(Path("tests/test_x.py"), line)) >= 1  # depth 2: parents[2] is above the root


def test_the_scan_accepts_paths_inside_the_checkout():
    text = 'ROOT = Path(__file__).resolve().parents[2]\nDATA = ROOT / "tests" / "upstream"\nup = "../fixtures"\n'
    assert outside_references(Path("tests/policies/test_x.py"), text) == []


def listed_upstream_files() -> dict[str, tuple[int, str]]:
    """The README's file table: path -> (bytes, sha256)."""
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|$", (UPSTREAM_CHARTS / "README.md").read_text(), re.M)
    return {path: (int(size), digest) for path, size, digest in rows}


def test_every_vendored_file_is_listed_with_its_size_and_sha256():
    present = {}
    for file in sorted(p for p in UPSTREAM_CHARTS.rglob("*") if p.is_file() and p.name != "README.md"):
        data = file.read_bytes()
        present[file.relative_to(UPSTREAM_CHARTS).as_posix()] = (len(data), hashlib.sha256(data).hexdigest())
    assert present and present == listed_upstream_files()


def test_vendored_chart_folders_match_the_pins_and_the_refresh_script():
    folders = {p.name for p in UPSTREAM_CHARTS.iterdir() if p.is_dir()}
    for pin in (pins.GPU_OPERATOR_CHART, pins.KUBE_PROMETHEUS_STACK_CHART, pins.PROMETHEUS_ADAPTER_CHART):
        assert f"{pin['chart']}-{pin['version']}" in folders
    script = (ROOT / "scripts" / "vendor_upstream.sh").read_text()
    for folder in folders:
        chart, version = folder.rsplit("-", 1)
        variable = chart.upper().replace("-", "_")
        assert f"{variable}={version}\n" in script, f"scripts/vendor_upstream.sh does not pull {folder}"
