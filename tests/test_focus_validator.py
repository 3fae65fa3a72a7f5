"""The FOCUS 1.0 fixture export checked by the FinOps Foundation's focus-validator (PyPI focus-validator 1.0.0, which
validates FOCUS 0.5 and 1.0 only), run from its own virtualenv (`make install-test` creates venv-focus/).

The validator's "1.0" rules still name five FOCUS 1.0-preview columns; tests/data/focus/validator-overrides-1.0.yaml
skips those checks and says why, and the one they stand for that matters here (SkuPriceId on Usage rows) is
asserted below. The 1.2 fixtures have no validator release to check them (VERIFY in docs/cost.md).
"""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

FOCUS = ROOT / "tests" / "data" / "focus"
FIXTURE_1_0 = FOCUS / "prod-2026-11-focus-1.0.csv"
PYTHON = Path(os.environ.get("FOCUS_VALIDATOR_PYTHON") or ROOT / "venv-focus" / "bin" / "python")


def validate(export: Path) -> subprocess.CompletedProcess:
    if not PYTHON.exists():
        message = f"focus-validator not installed at {PYTHON} (`make install-test` creates venv-focus): FOCUS NOT checked"
        if os.environ.get("TRITONFLEET_REQUIRE_TOOLS") == "1":
            pytest.fail(message + "; TRITONFLEET_REQUIRE_TOOLS=1 forbids skipping")
        pytest.skip(message)
    command = [str(PYTHON), str(FOCUS / "validate.py"), str(export), "1.0", str(FOCUS / "validator-overrides-1.0.yaml")]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_focus_1_0_fixture_passes_the_validator():
    result = validate(FIXTURE_1_0)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation passed" in result.stdout


def test_the_validator_rejects_an_export_without_a_mandatory_column(tmp_path):
    broken = tmp_path / "broken.csv"
    table = rows(FIXTURE_1_0)
    with broken.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, [c for c in table[0] if c != "ChargeCategory"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(table)
    result = validate(broken)
    assert result.returncode == 1
    assert "ChargeCategory_Required failed" in result.stdout


def test_the_1_0_fixture_holds_the_1_2_rows_in_1_0_columns():
    """Same rows, the 43 FOCUS 1.0 columns (the 1.1 and 1.2 additions left out), and what the validator's skipped
    rule stands for: Usage rows name their SkuId and SkuPriceId."""
    from tests.data.focus.make_fixtures import ADDED_AFTER_1_0, COLUMNS, COLUMNS_1_0

    old, new = rows(FOCUS / "prod-2026-11.csv"), rows(FIXTURE_1_0)
    assert len(COLUMNS_1_0) == 43 and set(COLUMNS) - set(COLUMNS_1_0) == set(ADDED_AFTER_1_0)
    assert list(new[0]) == COLUMNS_1_0
    assert new == [{c: row[c] for c in COLUMNS_1_0} for row in old]
    assert all(r["SkuId"] and r["SkuPriceId"] for r in new if r["ChargeCategory"] == "Usage")
