"""Conventions every policy keeps (names are stable ids, full metadata), and the pack's packaging rules."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib

import pytest
from policy_cases import PACK_DIR, ROOT, stack_policy_config

from policies.registry import ALL_POLICIES, MODULES
from tritonfleet.policycheck.direct import policy_meta
from tritonfleet.policycheck.pack_config import reconcile

NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")
STACKS = sorted(p.stem for p in (PACK_DIR / "config").glob("*.json"))


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=lambda p: p.name)
def test_policy_has_stable_name_and_full_metadata(policy):
    assert NAME.match(policy.name) and len(policy.name) <= 100
    assert policy.description[0].isupper() and policy.description.endswith(".")
    assert policy.severity is not None and policy.enforcement_level is not None
    assert policy.remediation_steps and policy.remediation_steps.rstrip().endswith((".", ")"))


def test_names_are_unique_and_match_their_module():
    names = [p.name for p in ALL_POLICIES]
    assert len(names) == len(set(names))
    assert [m.__name__.rsplit(".", 1)[-1] for m in MODULES] == [n.replace("-", "_") for n in names]


def test_every_rule_module_is_in_the_pack():
    on_disk = sorted(p.stem for p in (PACK_DIR / "rules").glob("*.py") if p.stem != "__init__")
    assert on_disk == sorted(m.__name__.rsplit(".", 1)[-1] for m in MODULES)


def test_every_shipped_stack_has_a_policy_config():
    assert STACKS == sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("stack", STACKS)
def test_stack_policy_config_names_every_policy_and_fits_the_schemas(stack):
    config = stack_policy_config(stack)
    assert sorted(config) == sorted(p.name for p in ALL_POLICIES), "name every policy, with 'disabled' where it does not apply"
    reconcile(policy_meta(ALL_POLICIES), config)  # raises on a value the pack's schemas reject


@pytest.mark.parametrize("stack", STACKS)
def test_budget_policies_share_one_budget(stack):
    config = stack_policy_config(stack)
    enforce, warn = config["cost-stack-enforce-monthly-budget"], config["cost-stack-warn-monthly-budget"]
    assert (enforce["monthlyUsd"], enforce["basis"]) == (warn["monthlyUsd"], warn["basis"])


def test_pack_requirements_pin_the_project_versions():
    pinned = dict(line.split("==") for line in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    lines = [ln for ln in (PACK_DIR / "requirements.txt").read_text().splitlines() if ln and not ln.startswith("#")]
    for name, version in (ln.split("==") for ln in lines):
        assert pinned[name] == version
    assert not any(n.startswith(("pulumi-aws", "pulumi-gcp", "pulumi-kubernetes")) for n, _ in (ln.split("==") for ln in lines))


def test_pack_imports_without_cloud_sdks_and_main_only_serves_when_run():
    """Importing the pack (its __main__ included, under another name) loads no cloud SDK and starts no server."""
    code = (
        "import runpy, sys; runpy.run_path(sys.argv[1], run_name='imported');"
        "from policies.registry import ALL_POLICIES;"
        "loaded = ('pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes', 'typer', 'rich');"
        "print(sorted(m for m in loaded if m in sys.modules), len(ALL_POLICIES))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(PACK_DIR / "__main__.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", str(len(ALL_POLICIES))]


def test_pulumi_policy_yaml_declares_a_python_pack_with_a_version():
    import yaml

    project = yaml.safe_load((PACK_DIR / "PulumiPolicy.yaml").read_text())
    assert project["runtime"]["name"] == "python" and re.match(r"^\d+\.\d+\.\d+$", project["version"])


def test_rules_modules_import_no_pulumi_program_sdks():
    for module in MODULES:
        source = importlib.util.find_spec(module.__name__).origin
        text = open(source).read()
        assert not re.search(r"^\s*(import|from) (pulumi_aws|pulumi_gcp|pulumi_kubernetes|components)\b", text, re.M), source
