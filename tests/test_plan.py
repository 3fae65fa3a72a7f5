"""The offline plan: the real program under the mock runtime, for every stack, as a user runs it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, STACKS, run_cli


def assert_summary_fits(stdout: str, plan: dict, width: int) -> None:
    """The terminal summary fits `width` and shows every pool, instance type and figure whole (no ellipsis)."""
    from tritonfleet.plan.text import total, usd

    lines = stdout.splitlines()
    summary = [line for line in lines if not line.startswith("Plan document written to ")]  # echoes the user's path
    assert max(len(line) for line in summary) <= width, "\n".join(line for line in summary if len(line) > width)
    assert "…" not in stdout and "Traceback" not in stdout
    words = [w for line in lines for w in line.split()]
    cost = plan["cost"]
    for pool in cost["pools"]:
        assert pool["pool"] in words and pool["instanceType"] in words
        assert usd(pool["monthlyFloorUsd"]) in words and usd(pool["monthlyCeilingUsd"]) in words
    for pool in cost["disabledPools"]:
        assert any(pool["pool"] in line and "disabled" in line for line in lines)
        assert pool["instanceType"] in words
    for key in ("monthlyFloorUsd", "monthlyCeilingUsd"):
        assert total(cost, key) in stdout
    assert usd(cost["budget"]["monthlyUsd"]) in words
    assert f"up to {cost['maxGpus']}," in stdout and f"limit {cost['budget']['gpuLimit']}." in stdout
    # the summary leads: pools and cost before the verdicts, the resource list only with --resources
    assert stdout.index("GPU pools") < stdout.index("Monthly cost") < stdout.index("Policy verdicts")
    assert "Resources by type" not in stdout


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_plans_with_unique_sorted_urns(stack, stock_plan):
    plan = stock_plan(stack)
    assert plan["stack"] == stack and plan["summary"]["resources"] > 0
    urns = [r["urn"] for r in plan["resources"]]
    assert urns == sorted(urns) and len(urns) == len(set(urns))


def test_the_cli_writes_the_same_bytes_in_every_process(tmp_path, stock_plan):
    """`tritonfleet plan --json` in a fresh process writes byte for byte the document planned in another process
    (the shared test plan, made in-process; two plans of prod in two processes when the cache is cold)."""
    from tritonfleet.plan.document import dumps

    target = tmp_path / "prod.json"
    result = run_cli("plan", "--stack", "prod", "--json", str(target), env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert target.read_text() == dumps(stock_plan("prod"))
    assert_summary_fits(result.stdout, stock_plan("prod"), 80)


@pytest.mark.parametrize(("stack", "width"), [("gcp-prod", 80), ("prod", 200), ("gcp-prod", 200)])
def test_the_summary_fits_the_terminal(stack, width, stock_plan):
    """prod (a disabled pool) and gcp-prod (unknown prices, a longer pool name) at 80 and 200 columns."""
    result = run_cli("plan", "--stack", stack, env={"COLUMNS": str(width)})
    assert result.returncode == 0, result.stderr
    assert_summary_fits(result.stdout, stock_plan(stack), width)


def test_prod_summary_lists_the_disabled_pool_and_resources_only_on_request(stock_plan):
    result = run_cli("plan", "--stack", "prod", "--resources", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert "b200: disabled (enabled: false), so not planned and not in the totals" in result.stdout
    assert "p6-b200.48xlarge" in result.stdout
    # The README's excerpt of this output is the output: its pools and monthly cost, line for line.
    readme = (ROOT / "README.md").read_text()
    excerpt = readme[readme.index("An excerpt of `make plan STACK=prod`") :].split("```\n", 2)[1]
    shown = excerpt[excerpt.index("GPU pools") : excerpt.index("(…")].strip()
    assert shown in result.stdout
    summary = stock_plan("prod")["summary"]
    resources = result.stdout[result.stdout.index(f"Resources by type ({summary['resources']})") : result.stdout.index("Policy verdicts")]
    digits = len(str(max(summary["byType"].values())))
    for typ, count in summary["byType"].items():
        if len(typ) + digits + 4 <= 80:  # longer type names fold onto a second line
            assert f"  {str(count).rjust(digits)}  {typ}\n" in resources


def test_prod_plan_records_what_the_engine_would_see(stock_plan):
    plan = stock_plan("prod")
    clusters = [r for r in plan["resources"] if r["type"] == "aws:eks/cluster:Cluster"]
    assert len(clusters) == 1 and clusters[0]["protect"] is True
    assert clusters[0]["parent"].endswith("tritonfleet:aws:AwsCloud$tritonfleet:aws:EksCluster::tf-aws-eks")
    assert clusters[0]["provider"].startswith("urn:pulumi:prod::tritonfleet::")
    assert plan["outputs"]["kubeconfig"] == "[secret]"
    assert plan["cost"]["monthlyCeilingUsd"] > plan["cost"]["monthlyFloorUsd"] > 0
    b200 = [r for r in plan["resources"] if "b200" in r["name"]]
    assert b200 == []  # the opt-in pool is off in prod until enabled


IMPORT_PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from tritonfleet.plan.document import build_plan
    build_plan(Path(sys.argv[1]), sys.argv[2])
    print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("pulumi_aws", "pulumi_gcp"))))
    """
)


@pytest.mark.parametrize(
    "stack,forbidden,needed", [("gcp-prod", "pulumi_aws", "pulumi_gcp"), ("prod", "pulumi_gcp", "pulumi_aws")]
)
def test_a_plan_imports_only_its_own_cloud_sdk(stack, forbidden, needed):
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, str(ROOT), stack],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    modules = result.stdout.strip().split(",")
    assert any(m.startswith(needed) for m in modules)
    assert not any(m.startswith(forbidden) for m in modules)


def test_duplicate_resource_names_are_an_error(tmp_path: Path):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    (tmp_path / "__main__.py").write_text(
        textwrap.dedent(
            """
            from components.platform import Platform
            from components.stack_config import read_stack_config

            config = read_stack_config()
            Platform("tf", config)
            Platform("tf", config)  # the same names twice: the real engine refuses this
            """
        )
    )
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(tmp_path))
    assert result.returncode == 1
    assert "duplicate resource URNs" in result.stderr and "Traceback" not in result.stderr


def test_a_program_error_is_reported_without_traceback(tmp_path: Path):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    (tmp_path / "__main__.py").write_text("raise ValueError('boom')\n")
    result = run_cli("plan", "--stack", "dev", "--project-dir", str(tmp_path))
    assert result.returncode == 1
    assert "ValueError: boom" in result.stderr and "Traceback" not in result.stderr


def test_two_stacks_in_one_process_do_not_leak_state():
    from tritonfleet.plan.document import build_plan

    dev_alone = build_plan(ROOT, "dev")
    build_plan(ROOT, "prod")
    dev_again = build_plan(ROOT, "dev")
    assert dev_alone == dev_again


def test_only_the_programs_own_modules_are_forgotten_between_runs(monkeypatch):
    import types

    from tritonfleet.plan.harness import _purge_program_modules

    installed = types.ModuleType("installed_in_project_venv")
    installed.__file__ = str(ROOT / "venv" / "lib" / "python3.11" / "site-packages" / "installed_in_project_venv.py")
    program = types.ModuleType("components.fake")
    program.__file__ = str(ROOT / "components" / "fake.py")
    monkeypatch.setitem(sys.modules, installed.__name__, installed)
    monkeypatch.setitem(sys.modules, program.__name__, program)
    main_module = sys.modules["__main__"]
    _purge_program_modules(ROOT)
    assert installed.__name__ in sys.modules and sys.modules["__main__"] is main_module
    assert program.__name__ not in sys.modules


def test_an_unknown_total_shows_only_the_priced_part_as_a_lower_bound(tmp_path: Path):
    import yaml

    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    shutil.copy(ROOT / "__main__.py", tmp_path)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    stack = tmp_path / "stacks" / "Pulumi.gcp-dev.yaml"
    doc = yaml.safe_load(stack.read_text())
    h100 = {"name": "h100", "gpu": "H100", "instanceType": "a3-highgpu-8g", "minNodes": 1, "maxNodes": 1}
    b200 = {"name": "b200", "gpu": "B200", "instanceType": "a4-highgpu-8g", "maxNodes": 1, "spotShare": 1}
    doc["config"]["tritonfleet:gpuPools"] += [h100, b200]  # priced, and unpriced (a4-highgpu-8g has no known price)
    stack.write_text(yaml.safe_dump(doc))
    result = run_cli("plan", "--stack", "gcp-dev", "--project-dir", str(tmp_path))
    lines = result.stdout.splitlines()
    floor = next(line for line in lines if line.startswith("  GPU floor (minReplicas, minNodes)"))
    ceiling = next(line for line in lines if line.startswith("  GPU ceiling (every pool at maxNodes)"))  # GKE: no fallback
    # one a3-highgpu-8g at $87.83/h, the spot L4 node resnet's one replica keeps up, B200 at 0 nodes
    assert floor.endswith(" $64,364.52")
    assert ceiling.endswith(" unknown (≥ $64,613.13 priced)")  # plus two spot g2-standard-8 at $0.34057/h
