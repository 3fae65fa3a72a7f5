"""End to end through the CLI, as users and CI run it: `tritonfleet plan` and `tritonfleet policy check`."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
import yaml
from policy_cases import PACK_DIR, ROOT, compliant_plan, find, stack_policy_config

from tests.conftest import STACKS, one_line, run_cli


def _blocking(document: dict) -> set[str]:
    return {v["policy"] for v in document["policy"]["verdicts"] if v["enforcement"] == "mandatory"}


@pytest.fixture(scope="module")
def pack():
    """One pack process over gRPC for the module's in-process checks, in place of one started per check (~0.7 s of
    CPU each): each check still configures it and analyses the whole plan through it. Starting the pack per check is
    what the CLI tests here do (`policy check` in a process of its own)."""
    from tritonfleet.policycheck.engine import PackProcess

    process = PackProcess(PACK_DIR, "tritonfleet", "policy-tests")
    yield process
    process.close()


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stack_passes_its_policy_config(stack, stock_plan, pack, monkeypatch):
    """The plan's own verdicts (direct calls), then the pack over gRPC as `policy check` runs it: no blocking
    verdict and the two agree. (`tritonfleet policy check` itself: test_compliant_plan_exits_zero.)"""
    from tritonfleet.policycheck import check as check_module
    from tritonfleet.policycheck.check import check
    from tritonfleet.policycheck.engine import analyze

    def run_pack(pack_dir, plan, config, config_source):
        assert pack_dir == PACK_DIR
        return analyze(pack, plan, config, config_source)

    monkeypatch.setattr(check_module, "run_pack", run_pack)
    document = stock_plan(stack)
    assert document["policy"]["evaluatedBy"] == "direct calls"
    assert _blocking(document) == set(), document["policy"]
    report = check(ROOT, document)
    assert report.agree is True and report.blocking == [], report.section()


def test_policy_section_is_deterministic(stock_plan):
    from tritonfleet.policycheck.check import check

    document = stock_plan("dev")
    assert check(ROOT, document, through_pack=False).section() == document["policy"]


def _project_with(tmp_path, stack: str, edit) -> tuple:
    """A copy of the project whose stacks/ holds one crafted stack file (code and pack are the real ones)."""
    for item in ("__main__.py", "components", "tritonfleet", "policies", "charts"):
        if (ROOT / item).exists():
            (tmp_path / item).symlink_to(ROOT / item)
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    edit(document["config"])
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def _h200(config):
    return next(p for p in config["tritonfleet:gpuPools"] if p["name"] == "h200")


@pytest.mark.parametrize(
    ("edit", "policies"),
    [
        (
            lambda c: _h200(c).update(maxNodes=9, onDemandBase=4),
            {"cost-stack-enforce-monthly-budget", "gpu-stack-limit-total-gpus"},
        ),
        (lambda c: _h200(c).update(onDemandBase=0, spotShare=1), {"spot-serving-pool-require-on-demand-base"}),
    ],
    ids=["over-budget", "spot-only-in-prod"],
)
def test_crafted_stack_is_blocked(tmp_path, edit, policies):
    project = _project_with(tmp_path, "prod-crafted", edit)
    done = run_cli(
        "policy",
        "check",
        "--stack",
        "prod-crafted",
        "--project-dir",
        str(project),
        "--policy-config",
        str(ROOT / "policies" / "config" / "prod.json"),
    )
    assert done.returncode == 2, done.stdout + done.stderr
    for policy in policies:
        assert policy in done.stdout
    assert "mandatory" in done.stdout


def _crafted_plan(edit):
    plan = copy.deepcopy(compliant_plan("prod"))
    edit(plan)
    return plan


CRAFTED_PLANS = {
    "untainted": (
        lambda p: find(p, "kubernetes:karpenter.sh/v1:NodePool", "h200-burst")["inputs"]["spec"]["template"]["spec"].update(taints=[]),
        "gpu-pool-require-gpu-taint",
    ),
    "public-bucket": (
        lambda p: find(p, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")["inputs"].update(blockPublicPolicy=False),
        "s3-bucket-block-public-access",
    ),
    "unencrypted-bucket": (
        lambda p: p["resources"].remove(
            find(p, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
        ),
        "s3-bucket-require-encryption",
    ),
    "unpinned-chart": (
        lambda p: find(p, "kubernetes:helm.sh/v3:Release", "gpu-operator")["inputs"].pop("version"),
        "helm-release-require-pinned-chart",
    ),
    "static-keys": (
        lambda p: find(p, "kubernetes:helm.sh/v3:Release", "triton-llm")["inputs"]["values"]["env"].update(
            AWS_SECRET_ACCESS_KEY="[secret]"
        ),
        "k8s-disallow-static-cloud-credentials",
    ),
}


@pytest.mark.parametrize("case", sorted(CRAFTED_PLANS))
def test_crafted_plan_is_blocked_with_the_right_policy(tmp_path, case):
    edit, policy = CRAFTED_PLANS[case]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_crafted_plan(edit)))
    done = run_cli("policy", "--stack", "prod", "--plan", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert policy in done.stdout and "1 mandatory violation(s)" in done.stdout


def test_compliant_plan_exits_zero(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(compliant_plan("prod")))
    done = run_cli("policy", "check", "--stack", "prod", "--plan", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 mandatory violation(s), 0 advisory finding(s)" in done.stdout
    ran = len([v for v in stack_policy_config("prod").values() if v != "disabled"])
    assert f"{ran} policies ran" in done.stdout
    assert f"The pack over gRPC and direct calls to its {ran} policies agree." in done.stdout


def _project_for_init(tmp_path, edit) -> tuple:
    """A project copy with its own policies/config (policy init writes there) and a new stack 'qa' made from staging."""
    for item in ("__main__.py", "components", "tritonfleet", "charts"):
        (tmp_path / item).symlink_to(ROOT / item)
    shutil.copytree(ROOT / "policies", tmp_path / "policies", ignore=shutil.ignore_patterns("__pycache__", "venv"))
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.staging.yaml").read_text())
    edit(document["config"])
    (tmp_path / "stacks" / "Pulumi.qa.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def test_policy_init_derives_a_new_stacks_config_from_its_stack_file(tmp_path):
    def smaller(config):
        config["tritonfleet:budget"].update(monthlyUsd=9000, warnFraction=0.7)
        config["tritonfleet:gpuLimit"] = 6

    project = _project_for_init(tmp_path, smaller)
    done = run_cli("policy", "init", "--stack", "qa", "--project-dir", str(project))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "enforcement levels as in policies/config/staging.json" in done.stdout
    written = json.loads((project / "policies" / "config" / "qa.json").read_text())
    expected = stack_policy_config("staging")
    expected["cost-stack-enforce-monthly-budget"]["monthlyUsd"] = 9000
    expected["cost-stack-warn-monthly-budget"].update(monthlyUsd=9000, warnFraction=0.7)
    expected["gpu-stack-limit-total-gpus"]["maxGpus"] = 6
    assert written == expected and list(written) == list(expected)  # the template's order, so diffs stay small

    again = run_cli("policy", "init", "--stack", "qa", "--project-dir", str(project))
    assert again.returncode == 1 and "exists already" in again.stderr and "--force" in again.stderr


def test_policy_init_from_another_cloud_allows_only_the_stacks_own_instance_types(tmp_path):
    project = _project_for_init(tmp_path, lambda config: None)
    done = run_cli("policy", "init", "--stack", "qa", "--like", "gcp-dev", "--project-dir", str(project))
    assert done.returncode == 0, done.stdout + done.stderr
    written = json.loads((project / "policies" / "config" / "qa.json").read_text())
    assert written["gpu-pool-allowed-instance-types"]["allowedInstanceTypes"] == ["g6e.2xlarge"]
    assert "also g6e.2xlarge" in done.stdout


def test_a_missing_policy_config_says_which_command_creates_it(tmp_path):
    project = _project_for_init(tmp_path, lambda config: None)
    done = run_cli("policy", "check", "--stack", "qa", "--plan", str(_minimal_plan(tmp_path, "qa")), "--project-dir", str(project))
    assert done.returncode == 1
    assert "create it with `tritonfleet policy init --stack qa`" in done.stderr


def _minimal_plan(tmp_path, stack: str):
    path = tmp_path / f"{stack}-plan.json"
    path.write_text(json.dumps({"format": 1, "stack": stack, "project": "tritonfleet", "resources": []}))
    return path


def test_bad_policy_config_is_a_user_error(tmp_path, stock_plan):
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"gpu-stack-limit-total-gpus": {"maxGpus": -1}}))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(stock_plan("dev")))
    done = run_cli("policy", "check", "--stack", "dev", "--plan", str(plan), "--policy-config", str(config))
    assert done.returncode == 1
    assert "gpu-stack-limit-total-gpus.maxGpus: -1 is less than the minimum of 0" in done.stderr
    assert "Traceback" not in done.stderr


def _resource(**fields) -> dict:
    return {"urn": "urn:pulumi:dev::tritonfleet::kubernetes:helm.sh/v3:Release::b", "type": "kubernetes:helm.sh/v3:Release", "name": "b", **fields}


@pytest.mark.parametrize(
    ("document", "shown"),
    [
        ([], "is not a tritonfleet plan document: expected a JSON object, got list"),
        ({"format": 1, "stack": {"[/x]": 1}, "project": "p", "resources": []}, "is a plan of stack '{'[/x]': 1}', not 'dev'"),
        ({"format": 1, "stack": "dev", "resources": []}, "'project' (the Pulumi project's name) must be a string"),
        ({"format": 1, "stack": "dev", "project": "p", "resources": "x"}, "'resources' must be a list of objects"),
        ({"format": 1, "stack": "dev", "project": "p", "resources": [5]}, "'resources' must be a list of objects"),
        ({"format": 1, "stack": "dev", "project": "p", "resources": [_resource(type=5)]}, "resources[0].type must be a str"),
        ({"format": 1, "stack": "dev", "project": "p", "resources": [_resource(inputs="x")]}, "resources[0].inputs must be a dict when given"),
        ({"format": 1, "stack": "dev", "project": "p", "resources": [_resource(dependsOn={})]}, "resources[0].dependsOn must be a list when given"),
    ],
    ids=["list", "stack-object", "no-project", "resources-text", "resource-number", "type-number", "inputs-text", "depends-on-object"],
)
def test_a_plan_file_the_pack_cannot_read_is_a_user_error(tmp_path, document, shown):
    """`policy check --plan FILE` with a hand-made or damaged file: exit 1, the problem named, no traceback."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(document))
    done = run_cli("policy", "check", "--stack", "dev", "--plan", str(plan))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert str(plan) in done.stderr and shown in one_line(done.stderr)


def test_numbers_reach_direct_calls_as_the_pack_receives_them(tmp_path):
    """Over gRPC every number is a double; the direct calls get the same, so both give one verdict (a chart version
    written as the number 5 once made them disagree: '5' against '5.0')."""
    plan = tmp_path / "plan.json"
    document = {"format": 1, "stack": "dev", "project": "p", "resources": [_resource(inputs={"chart": "c", "version": 5})]}
    plan.write_text(json.dumps(document))
    done = run_cli("policy", "check", "--stack", "dev", "--plan", str(plan))
    assert "The pack over gRPC and direct calls to its 22 policies agree." in done.stdout, done.stdout + done.stderr
    assert "Helm chart 'c' of 'b' has version '5.0'" in done.stdout
