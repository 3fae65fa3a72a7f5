"""checkov on our chart rendered in every exposure mode: nothing fails; the only skips are the chart's explained ones."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.access_helpers import ACCESS_CASES, chart_values
from tests.serving_helpers import render
from tests.test_triton_chart_checkov import ACCEPTED, CHECKOV


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    if not Path(CHECKOV).exists():
        pytest.skip(f"checkov not installed (looked for {CHECKOV}; it needs its own venv)")
    folder = tmp_path_factory.mktemp("access-rendered")
    for label, cloud, access in ACCESS_CASES:
        (folder / f"{label}.yaml").write_text(yaml.safe_dump_all(render(chart_values(cloud, access), name="triton-llm")))
    result = subprocess.run(
        [CHECKOV, "-d", str(folder), "--framework", "kubernetes", "--skip-download", "-o", "json"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return json.loads(result.stdout)["results"]


def test_no_failed_checks_in_any_exposure_mode(results):
    failed = sorted({(c["check_id"], c["resource"], Path(c["file_path"]).name) for c in results["failed_checks"]})
    assert failed == []
    assert results["parsing_errors"] == []
    kinds = {c["resource"].split(".")[0] for c in results["passed_checks"]}
    assert {"Deployment", "Service", "Ingress"} <= kinds or {"Deployment", "Service"} <= kinds


def test_only_the_charts_explained_skips(results):
    assert {c["check_id"] for c in results["skipped_checks"]} <= ACCEPTED
