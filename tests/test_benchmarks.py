"""The benchmark scripts' generated inputs stay valid as the config rules grow (a benchmark of configs that fail
validation measures an error message)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
import yaml

from tests.conftest import ROOT
from tritonfleet.core.config import load_stack_config
from tritonfleet.plan.project import engine_string


def _benchmark(name: str):
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import their shared helpers (measure.py) by name
    try:
        spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.mark.parametrize("count", [1, 100])
def test_plan_speed_projects_are_valid_stacks_within_their_policy_limits(tmp_path, count):
    project = _benchmark("plan_speed").project_with_deployments(tmp_path, count)
    doc = yaml.safe_load((project / "stacks" / "Pulumi.prod.yaml").read_text())
    config = load_stack_config({k: engine_string(v) for k, v in doc["config"].items()}, "prod")
    assert len(config.triton_deployments) == count
    limits = json.loads((project / "policies" / "config" / "prod.json").read_text())
    assert limits["gpu-stack-limit-total-gpus"]["maxGpus"] >= config.gpu_limit


def test_the_suite_benchmark_times_make_tests_own_command():
    """benchmarks/suite_time.py reads the pytest command from the Makefile's test recipe (one place for it)."""
    expected = "venv/bin/python -m pytest -n 5 --dist loadscope --no-loadscope-reorder -q"
    assert _benchmark("suite_time").suite_command() == expected.split()
