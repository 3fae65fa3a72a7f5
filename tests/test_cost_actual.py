"""`tritonfleet cost actual`: a month of a FOCUS 1.2 export (tests/data/focus, written by make_fixtures.py with the
specification's columns) against the prod plan, per line, with drift, causes and the untagged rows; bad input gets a
clear message and exit 1."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT, engine_config, one_line, run_cli

from tritonfleet.core.config import load_stack_config
from tritonfleet.cost_actual import REQUIRED_COLUMNS, ExportError, actual_report, classify, report_lines
from tritonfleet.plan.document import cost_section

DATA = ROOT / "tests" / "data" / "focus"


@pytest.fixture(scope="module")
def prod():
    config = load_stack_config(engine_config("prod"), "prod")
    return config, cost_section(config)


def test_the_fixture_has_every_column_focus_1_2_requires_here():
    with (DATA / "prod-2026-11.csv").open() as handle:
        columns = next(csv.reader(handle))
    assert set(REQUIRED_COLUMNS) <= set(columns) and len(columns) == 57


def test_each_line_is_matched_and_compared_with_its_causes(prod):
    report = actual_report(*prod, DATA / "prod-2026-11.csv", "2026-11")
    lines = {c.line: c for c in report.lines}
    assert lines["pool h200"].actual_usd == 56453.12 and lines["pool l40s"].actual_usd == 5359.68
    assert any("spot share not reached" in cause for cause in lines["pool l40s"].causes)
    assert any("nodes above the floor" in cause for cause in lines["pool l40s"].causes)
    assert any("discounts or commitments" in cause for cause in lines["pool h200"].causes)  # spot below list
    assert lines["control-plane"].actual_usd == 72.0 and lines["control-plane"].expected_usd == 73.0
    assert lines["nat-processing"].drift_usd == 6.75  # 250 GB against the assumed 100 GB
    assert any("usage differs" in cause for cause in lines["log-ingestion"].causes)
    assert lines["volumes"].actual_usd == 88.0 and lines["traffic"].actual_usd == 1000.0
    # the account's untagged rows are reported, dearest first; October's row and other accounts are not counted
    assert report.untagged == [
        ("i-0untagged", "Amazon Elastic Compute Cloud", 300.0), ("snap-0orphan", "Amazon Elastic Compute Cloud", 12.5)
    ]
    assert report.rows == 13 and report.actual_usd == 63536.96


def test_a_focus_1_0_export_of_the_same_rows_gives_the_same_report(prod):
    """FOCUS 1.0 named every column this command reads as 1.2 does; the report names the release it read."""
    new, old = (actual_report(*prod, DATA / name, "2026-11") for name in ("prod-2026-11-focus-1.0.csv", "prod-2026-11.csv"))
    assert (new.focus_version, old.focus_version) == ("1.0", "1.2")
    assert replace(new, focus_version="1.2") == old
    assert "(FOCUS 1.0, 13 rows of its account" in report_lines(new, width=0)[0]


def test_an_unpriced_plan_line_says_so(prod):
    config, cost = prod
    unpriced = {**cost, "otherLines": [{**line, "monthlyExpectedUsd": "unknown"} if line["line"] == "control-plane"
                                       else line for line in cost["otherLines"]]}
    report = actual_report(config, unpriced, DATA / "prod-2026-11.csv", "2026-11")
    [plane] = [c for c in report.lines if c.line == "control-plane"]
    assert plane.causes == ["the plan has no price for this line (unpriced): add it to the catalog"]


@pytest.mark.parametrize(
    ("export", "month", "message"),
    [
        ("cur-2026-11.csv", "2026-11", "an AWS Cost and Usage Report (CUR), not FOCUS"),
        ("prod-2026-11.csv", "2026-09", "has no rows for 2026-09: it covers 2026-10..2026-11"),
        ("other-account-2026-11.csv", "2026-11", "no rows of the stack's account or project 123456789012"),
        ("missing.csv", "2026-11", "no such file"),
        ("prod-2026-11.csv", "November", "--month 'November': use YYYY-MM"),
        ("make_fixtures.py", "2026-11", "is not a FOCUS 1.0 or 1.2 export: it lacks the columns BilledCost"),
    ],
)
def test_bad_input_gets_a_clear_message(prod, export, month, message):
    with pytest.raises(ExportError) as caught:
        actual_report(*prod, DATA / export, month)
    assert message in str(caught.value)


def test_parquet_without_pyarrow_is_refused_with_what_to_do(prod, tmp_path: Path):
    parquet = tmp_path / "export.parquet"
    parquet.write_bytes(b"PAR1")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ExportError, match="needs pyarrow, which is not installed; export the month as CSV"):
            actual_report(*prod, parquet, "2026-11")
    else:
        pytest.skip("pyarrow is installed: Parquet is read")


def test_gke_node_pool_labels_name_the_pool():
    row = {"ServiceName": "Compute Engine", "ServiceCategory": "Compute", "ChargeDescription": "A3 Ultra"}
    assert classify(row, {"goog-k8s-node-pool-name": "h200-spot"}) == "pool h200"


def test_the_command_prints_the_report_and_exits_1_on_bad_input():
    result = run_cli("cost", "actual", "--stack", "prod", "--month", "2026-11", "--export",
                     str(DATA / "prod-2026-11.csv"), env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert "pool l40s: actual $5,359.68" in result.stdout and "Untagged: 2 row(s)" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    bad = run_cli("cost", "actual", "--stack", "prod", "--month", "2026-11", "--export", str(DATA / "cur-2026-11.csv"))
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "not FOCUS: create a FOCUS 1.2 export in AWS Data Exports" in one_line(bad.stderr)


def test_a_gke_export_names_its_pools_by_node_pool_label():
    config = load_stack_config(engine_config("gcp-prod"), "gcp-prod")
    report = actual_report(config, cost_section(config), DATA / "gcp-prod-2026-11.csv", "2026-11")
    lines = {c.line: c for c in report.lines}
    # node pool h200-spot-spot is pool h200-spot (one purchase option stripped), l4-on-demand is pool l4
    assert (lines["pool h200-spot"].actual_usd, lines["pool l4"].actual_usd) == (4000.0, 1200.0)
    assert lines["control-plane"].actual_usd == 72.0
    assert lines["pool h200"].causes == ["no rows in the export: not yet billed, or its resources lack the stack's tags"]
    assert report.untagged == []
