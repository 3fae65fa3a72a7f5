"""checkov on our chart's rendered manifests (the planned values of every shipped stack and the edge values, and the
chart in every exposure mode): no failed check; every accepted finding is skipped in the chart with a reason (a
`checkov.io/skip` annotation). One checkov run scans both sets (checkov takes seconds to start)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.access_helpers import ACCESS_CASES, chart_values
from tests.conftest import ROOT
from tests.plan_cache import shared_text, tool_stamp
from tests.serving_helpers import planned_values, render, triton_cases
from tests.test_triton_chart import EDGE_VALUES

# checkov conflicts with pulumi's pins, so it lives in its own virtualenv (`make test` creates venv-checkov/).
CHECKOV = os.environ.get("CHECKOV") or shutil.which("checkov") or str(ROOT / "venv-checkov" / "bin" / "checkov")
# Explained in docs/serving.md, docs/access.md and the chart's annotations (CKV_K8S_23: the model cache's prefetch
# DaemonSet writes its root-owned hostPath as root, components/k8s/model_cache.py).
ACCEPTED = {"CKV_K8S_43", "CKV_K8S_15", "CKV_K8S_40", "CKV_K8S_35", "CKV_K8S_23"}


STACKS_AND_EDGES, EXPOSURE_MODES = "stacks-and-edges", "exposure-modes"


@pytest.fixture(scope="module")
def scans(tmp_path_factory) -> dict[str, dict]:
    """checkov's results per rendered set: STACKS_AND_EDGES and EXPOSURE_MODES (a folder each, one checkov run,
    shared by the test processes through tests/plan_cache.py's cache folder)."""
    if not Path(CHECKOV).exists():
        pytest.skip(f"checkov not installed (looked for {CHECKOV}; it needs its own venv, see docs/serving.md)")
    folder = tmp_path_factory.mktemp("rendered")
    renderings = [(STACKS_AND_EDGES, f"{s}-{n}", planned_values(s, n), n) for s, n in triton_cases()]
    renderings += [(STACKS_AND_EDGES, f"edge-{label}", values, "triton-edge") for label, values in EDGE_VALUES.items()]
    renderings += [(EXPOSURE_MODES, label, chart_values(cloud, access), "triton-llm") for label, cloud, access in ACCESS_CASES]
    for group, label, values, name in renderings:
        (folder / group).mkdir(exist_ok=True)
        (folder / group / f"{label}.yaml").write_text(yaml.safe_dump_all(render(values, name=name)))
    (folder / STACKS_AND_EDGES / "model-cache-prefetch.yaml").write_text(yaml.safe_dump_all(_prefetch()))
    results = json.loads(shared_text("checkov", _digest(folder), lambda: _checkov(folder)))["results"]
    checks = ("passed_checks", "failed_checks", "skipped_checks")
    return {
        group: {
            **{kind: [c for c in results[kind] if Path(c["file_path"]).parent.name == group] for kind in checks},
            "parsing_errors": [f for f in results["parsing_errors"] if Path(f).parent.name == group],
        }
        for group in (STACKS_AND_EDGES, EXPOSURE_MODES)
    }


def _prefetch() -> list[dict]:
    """The node-local model cache's prefetch objects for dev's deployment (its image pinned by digest, as prod wants)."""
    from components.k8s.model_cache import network_policy, prefetch_daemonset, service_account
    from tests.conftest import engine_config
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.core.scheduling import pool_facts

    config = load_stack_config(engine_config("dev"), "dev")
    deployment = config.triton_deployments[0]
    pool = pool_facts(config, config.pool(deployment.pool))
    image = f"registry.example/tritonfleet-model-cache@sha256:{'0' * 64}"
    daemonset = prefetch_daemonset(deployment, pool, "s3://models/resnet", "/var/lib/x", image, {})
    return [daemonset, service_account(deployment), network_policy()]


def _digest(folder: Path) -> str:
    """The rendered files (names and content), the checkov install and its options: what the scan's answer depends
    on."""
    digest = hashlib.sha256(tool_stamp(CHECKOV).encode() + " ".join(CHECKOV_OPTIONS).encode())
    for path in sorted(folder.rglob("*.yaml")):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


# --compact leaves each check's code block out of the report: the same checks and results (compared on the shipped
# renderings), in 4 MB of JSON instead of 106 MB, and 6 s of checkov's CPU instead of 18 s (2026-12-05, 2 cores).
CHECKOV_OPTIONS = ("--framework", "kubernetes", "--skip-download", "-o", "json", "--compact")


def _checkov(folder: Path) -> str:
    """checkov's JSON report on the folder (file paths in it are relative to the folder)."""
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE"}
    result = subprocess.run(
        [CHECKOV, "-d", str(folder), *CHECKOV_OPTIONS],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def checkov_results(scans) -> dict:
    return scans[STACKS_AND_EDGES]


def test_no_failed_checks(checkov_results):
    failed = {(c["check_id"], Path(c["file_path"]).name) for c in checkov_results["failed_checks"]}
    # The one edge rendering that opts out of the read-only root filesystem is caught; nothing else fails.
    assert failed == {("CKV_K8S_22", "edge-poll-fixed-replicas.yaml")}
    assert checkov_results["parsing_errors"] == []
    assert len(checkov_results["passed_checks"]) > 50


def test_every_skip_is_accepted_and_explained(checkov_results):
    skipped = checkov_results["skipped_checks"]
    assert {c["check_id"] for c in skipped} == ACCEPTED
    for check in skipped:
        assert len(check["check_result"].get("suppress_comment", "")) > 30, check["check_id"]


def test_no_failed_checks_in_any_exposure_mode(scans):
    results = scans[EXPOSURE_MODES]
    failed = sorted({(c["check_id"], c["resource"], Path(c["file_path"]).name) for c in results["failed_checks"]})
    assert failed == []
    assert results["parsing_errors"] == []
    kinds = {c["resource"].split(".")[0] for c in results["passed_checks"]}
    assert {"Deployment", "Service", "Ingress"} <= kinds


def test_exposure_modes_have_only_the_charts_explained_skips(scans):
    assert {c["check_id"] for c in scans[EXPOSURE_MODES]["skipped_checks"]} <= ACCEPTED
