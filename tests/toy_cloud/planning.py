"""A project that plans toy stacks, and the toy cloud's plan of one (run in a fork server child: the registration is
made there, where the plan runs).

The project is a folder of links to this checkout's program (Pulumi.yaml, __main__.py, components/, charts/,
policies/) and a stacks/ folder of its own, so no toy stack file or policy config lands in the repository.
"""

from __future__ import annotations

import io
import json
import os
import runpy
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import yaml

from tests.toy_cloud.catalog import GPU_TYPE, REGION, toy_rows
from tritonfleet.core.cloud import registered

ROOT = Path(__file__).resolve().parents[2]
STACK = "toy-dev"
LINKED = ("Pulumi.yaml", "__main__.py", "pyproject.toml", "components", "charts", "policies")
STACK_CONFIG: dict[str, Any] = {
    "tritonfleet:environment": "dev",
    "tritonfleet:cloud": "toy",
    "tritonfleet:region": REGION,
    "tritonfleet:cluster": {"zones": [f"{REGION}a", f"{REGION}b"]},
    "tritonfleet:gpuPools": [
        {
            "name": "l40s", "gpu": "L40S", "instanceType": GPU_TYPE, "minNodes": 1, "maxNodes": 3,
            "onDemandBase": 1, "spotShare": 1,
        }
    ],
    "tritonfleet:modelBuckets": [{"name": "models", "bucketName": "toy-models-dev", "noncurrentVersionDays": 7}],
    "tritonfleet:tritonDeployments": [
        {
            "name": "resnet", "pool": "l40s", "modelPrefix": "resnet/", "minReplicas": 1, "maxReplicas": 3,
            "throughputPerReplica": 2000, "targetLoad": {"peak": 1200, "average": 200, "unit": "requests/s"},
            "latencyTarget": "50ms",
        }
    ],
    "tritonfleet:budget": {"monthlyUsd": 3000, "warnFraction": 0.8, "basis": "ceiling"},
    "tritonfleet:gpuLimit": 4,
    "tritonfleet:tags": {"team": "ml-platform"},
}


def policy_config() -> dict[str, Any]:
    """The dev stack's policy config, allowing the toy's GPU type, its budget, and on-demand nodes (advisory); the
    protection rule, off in dev, on (advisory) to read the toy's stateful resources."""
    config = json.loads((ROOT / "policies" / "config" / "dev.json").read_text())
    config["gpu-pool-allowed-instance-types"]["allowedInstanceTypes"] = [GPU_TYPE]
    config["spot-pool-require-spot-only"] = "advisory"
    config["stateful-resource-require-protect"] = "advisory"
    for budget in ("cost-stack-enforce-monthly-budget", "cost-stack-warn-monthly-budget"):
        config[budget]["monthlyUsd"] = STACK_CONFIG["tritonfleet:budget"]["monthlyUsd"]
    return config


def make_project(folder: Path, stack_config: dict[str, Any] | None = None) -> Path:
    """A project at `folder` whose stacks/Pulumi.toy-dev.yaml holds `stack_config` (default STACK_CONFIG), and the
    toy's policy config at toy-policy.json."""
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    (folder / "stacks").mkdir()
    text = yaml.safe_dump({"config": stack_config or STACK_CONFIG}, sort_keys=False)
    (folder / "stacks" / f"Pulumi.{STACK}.yaml").write_text(text)
    (folder / "toy-policy.json").write_text(json.dumps(policy_config(), indent=2))
    return folder


@contextmanager
def toy_cloud() -> Iterator[None]:
    """The toy cloud registered and its catalog rows loaded, for the block."""
    with registered("toy", "tests.toy_cloud.cloud"), toy_rows():
        yield


def plan(project: Path, edit: Callable[[dict[str, str]], dict[str, str]] | None = None) -> dict[str, Any]:
    """The plan document of the project's toy stack with its policy section (build_plan, in this process)."""
    from tritonfleet.plan.document import build_plan

    with toy_cloud():
        return build_plan(project, STACK, with_policy=True, policy_config=project / "toy-policy.json", edit=edit)


class _Exited(Exception):
    def __init__(self, code: int):
        self.code = code


def cli(args: list[str]) -> tuple[int, str, str]:
    """`python -m tritonfleet ARGS` in this process with the toy cloud registered: (exit status, stdout, stderr).

    The CLI leaves through os._exit (tritonfleet.cli.main); here that exit is caught, so the outcome comes back."""

    def leave(code: int) -> None:
        raise _Exited(code)

    stdout, stderr = io.StringIO(), io.StringIO()
    real_exit, sys.argv = os._exit, ["tritonfleet", *args]
    os._exit = leave  # type: ignore[assignment]
    try:
        with toy_cloud(), redirect_stdout(stdout), redirect_stderr(stderr):
            runpy.run_module("tritonfleet", run_name="__main__", alter_sys=True)
        code = 0
    except _Exited as exited:
        code = exited.code
    finally:
        os._exit = real_exit
    return code, stdout.getvalue(), stderr.getvalue()


class Edit:
    """An edit of the engine's config: keys of the first GPU pool and of the cluster set to new values (a class, not a
    closure: it travels pickled to the fork server's child)."""

    def __init__(self, pool: dict[str, Any], cluster: dict[str, Any]):
        self.pool, self.cluster = pool, cluster

    def __call__(self, raw: dict[str, str]) -> dict[str, str]:
        pools = json.loads(raw["tritonfleet:gpuPools"])
        pools[0].update(self.pool)
        cluster = {**json.loads(raw["tritonfleet:cluster"]), **self.cluster}
        return {**raw, "tritonfleet:gpuPools": json.dumps(pools), "tritonfleet:cluster": json.dumps(cluster)}
