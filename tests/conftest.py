"""Shared test helpers: the repository root, stack configs as the engine passes them, and the CLI as users run it."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The pinned upstream chart data (test data, copied into the repository: origin and versions in its README.md).
UPSTREAM_CHARTS = ROOT / "tests" / "upstream"
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


FIRST_PARTY_PACKAGES = ("tritonfleet", "components", "policies")


def run_cli(
    *args: str, cwd: Path = ROOT, timeout: int = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `tritonfleet ARGS` the way a user does, in a process of its own (`env`: variables to set for it).

    The process is forked from a warm one that has the modules imported (tests/cli_forkserver.py, one for the whole
    run: pytest_configure starts it) and runs `python -m tritonfleet` from there; a working folder with packages of
    its own gets a fresh interpreter."""
    if any((Path(cwd) / package).exists() for package in FIRST_PARTY_PACKAGES) and Path(cwd).resolve() != ROOT:
        # Another checkout: `python -m` would import its own packages (the working folder comes first on the path).
        return run_cli_fresh(*args, cwd=cwd, timeout=timeout, env=env)
    from tests.cli_forkserver import SOCKET_ENV, run

    return run(os.environ[SOCKET_ENV], list(args), cwd, {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout)


def forked(target: str, *args, **kwargs):
    """`module:function`(*args, **kwargs) run in a child of the run's fork server (tests/cli_forkserver.py), where the
    provider SDKs' modules are imported already: the test processes that plan never import them (2–3 s per cloud)."""
    from tests.cli_forkserver import SOCKET_ENV, call

    return call(os.environ[SOCKET_ENV], target, *args, **kwargs)


def run_program(*args, **kwargs):
    """tritonfleet.plan.harness.run_program, forked (the same arguments, a ProgramRun back)."""
    return forked("tritonfleet.plan.harness:run_program", *args, **kwargs)


def build_plan(*args, **kwargs):
    """tritonfleet.plan.document.build_plan, forked (the same arguments, the plan document back)."""
    return forked("tritonfleet.plan.document:build_plan", *args, **kwargs)


def one_line(text: str) -> str:
    """`text` with every run of whitespace one space: a message as written, whatever the terminal wrapped."""
    return " ".join(text.split())


def run_cli_fresh(
    *args: str, cwd: Path = ROOT, timeout: int = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m tritonfleet ARGS` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tritonfleet", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def copy_project(target: Path) -> Path:
    """The project's own files at `target`: not its history, virtualenvs (venv-checkov and venv-nca hold 350 MB),
    tests, plans or caches."""
    ignored = (".git", "venv", "venv-*", ".venv", "tests", "plans", "__pycache__", "*.egg-info", ".*_cache")
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*ignored))
    return target


def engine_config(stack: str) -> dict[str, str]:
    """The merged config of a stack, as the engine hands it to the program (a fresh copy: tests may edit it)."""
    files = (ROOT / "Pulumi.yaml", ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    return dict(_merged_config(stack, tuple(path.read_bytes() if path.is_file() else b"" for path in files)))


@functools.cache
def _merged_config(stack: str, contents: tuple[bytes, ...]) -> dict[str, str]:
    """engine_config's answer, once per test process for each content of Pulumi.yaml and the stack's file (the
    project's YAML reader costs 0.1 s a call, and tests ask for the shipped stacks' configs hundreds of times)."""
    from tritonfleet.plan.project import load_project, stack_config

    raw, _ = stack_config(load_project(ROOT), stack)
    return raw


def config_problems(raw: dict[str, str], stack: str) -> dict[str, tuple[object, str, str]]:
    """An engine config that must fail to load: each problem's key -> (value, allowed, fix)."""
    from tritonfleet.core.config import ConfigError, load_stack_config

    with pytest.raises(ConfigError) as caught:
        load_stack_config(raw, stack)
    return {p.key: (p.value, p.allowed, p.fix) for p in caught.value.problems}


@pytest.fixture
def stack_config():
    from tritonfleet.core.config import load_stack_config

    return lambda stack: load_stack_config(engine_config(stack), stack)


# ---- order: the modules that mostly wait on real servers first, then the longest busy ones ----

# Their tests spend most of their time waiting (tritonserver, Prometheus, load at a fixed rate), so they run first, the
# longest first: the CPU-bound modules then fill those waits, instead of the waits making the run's tail. pytest-xdist
# (--dist loadscope) hands modules out in collection order. The rest keep their order.
WAITING_MODULES = (
    "test_autoscaling_llm_live.py",
    "test_autoscaling_live.py",
    "test_rollout_live.py",
    "test_autoscaling_live_batched.py",
    "test_triton_live.py",
    "test_triton_hardening_live.py",
    "test_models_triton.py",
    "test_loadtest_live.py",
    "test_loadtest_llm_live.py",
    "test_models_validate_corpus.py",
    "test_model_control_live.py",
    "test_models_control.py",
    "test_rollout_pins.py",
    "test_monitoring_live.py",
    "test_llm_metrics_live.py",
    "test_grpc_balancing.py",
    "test_node_cache.py",
    "test_warmup_live.py",
    "test_input_properties.py",
    "test_hostile_input.py",
)


# Then the modules that keep a CPU busy longest (the suite's --durations on 2 cores, 2026-12-05, after that day's CPU
# savings), longest first, so that the many short modules fill the run's end instead of one long module starting last
# and making its tail.
BUSY_MODULES = (
    "test_policy_engine.py",
    "test_plan.py",
    "test_models_sync.py",
    "test_policy_cli.py",
    "test_diff_base_ref.py",
    "test_config.py",
    "test_triton_chart_checkov.py",
    "test_plan_reuse.py",
    "test_monitoring_quiet.py",
    "test_cli_forkserver.py",
    "test_aws_preflight.py",
    "test_network_deadlines.py",
    "test_access_connectivity.py",
    "test_rollout_chart.py",
    "test_bill.py",
    "test_gcp_plan.py",
    "test_diff.py",
    "test_columns.py",
    "test_focus_validator.py",
    "test_monitoring_rules.py",
    "test_aws_program.py",
    "test_access_plan.py",
)
ORDER = WAITING_MODULES + BUSY_MODULES


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        name = item.path.name
        return ORDER.index(name) if name in ORDER else len(ORDER)

    items.sort(key=rank)  # stable: each module's tests and the other modules keep their order


# ---- plans of the shipped stacks, shared by all tests and xdist workers (tests/plan_cache.py) ----


def pytest_configure(config):
    from tests.plan_cache import use_folder

    cache = getattr(config, "cache", None)  # None with `-p no:cacheprovider`: plans are then shared in-process only
    use_folder(cache.mkdir("tritonfleet-plans") if cache is not None else None)
    if not hasattr(config, "workerinput"):  # pytest's main process: the CLI fork server for this run's processes
        from tests.cli_forkserver import start_shared

        start_shared(ROOT)


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        from tests.cli_forkserver import stop_shared

        stop_shared()


@pytest.fixture(scope="session")
def stock_plan():
    """stock_plan(stack): the plan document of a shipped stack (a fresh copy), planned once per code state."""
    from tests.plan_cache import stock_plan

    return stock_plan


def pytest_collection_finish(session):
    """After collection, the modules and test items a worker holds live to its end: frozen, the cyclic GC stops
    walking them, and it runs less often. Measured on 2 cores (the whole suite, as `make test` runs it): 368 s of CPU
    became 333 s, 3:30 became 3:03 to 3:10 of wall time, for about 50 MB more memory per worker."""
    import gc

    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
