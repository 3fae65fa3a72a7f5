"""`policy check` reuses a saved plan only while its inputs are unchanged; the fingerprint that decides it; and the
plan harness's shortcut past the SDK's source positions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_cli
from tritonfleet.plan.fingerprint import changed_parts, fingerprint_section, input_digests
from tritonfleet.plan.project import load_project
from tritonfleet.policycheck import saved_plan
from tritonfleet.policycheck.saved_plan import plan_for_check

LINKED = ("__main__.py", "components", "policies", "charts")  # the code, shared with the checkout
COPIED = ("Pulumi.yaml", "pyproject.toml")


def project_copy(target: Path) -> Path:
    """A project folder with the checkout's code (linked) and its own copy of the stacks, free to edit."""
    target.mkdir(exist_ok=True)
    for name in LINKED:
        (target / name).symlink_to(ROOT / name)
    for name in COPIED:
        shutil.copy(ROOT / name, target / name)
    shutil.copytree(ROOT / "stacks", target / "stacks")
    return target


@pytest.fixture(autouse=True)
def seals(tmp_path, monkeypatch):
    """Each test records plan seals in a cache folder of its own (inherited by the CLI processes it starts)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(saved_plan.CACHE_ENV, str(folder))
    return folder


def save_plan(project: Path, document: dict, *, sealed: bool = True) -> Path:
    """Save a plan document as `tritonfleet plan --json` does (sealed), or as a checkout brings it (not sealed)."""
    path = project / "plans" / f"{document['stack']}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(document))
    if sealed:
        saved_plan.seal_plan(path)
    return path


def with_public_bucket(document: dict) -> dict:
    """The saved plan, tampered with so that only a check of *this* document blocks (a fresh plan passes)."""
    block = next(r for r in document["resources"] if r["type"] == "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    block["inputs"]["blockPublicPolicy"] = False
    return document


def test_policy_check_reuses_a_saved_plan_whose_inputs_are_unchanged(tmp_path, stock_plan):
    project = project_copy(tmp_path / "project")
    save_plan(project, with_public_bucket(stock_plan("prod")))
    done = run_cli("policy", "check", "--stack", "prod", "--project-dir", str(project))
    assert "reusing plans/prod.json (inputs and content unchanged)" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 2 and "s3-bucket-block-public-access" in done.stdout  # the saved document was checked


def test_a_changed_stack_value_makes_policy_check_plan_afresh(tmp_path, stock_plan):
    project = project_copy(tmp_path / "project")
    save_plan(project, with_public_bucket(stock_plan("prod")))
    stack_file = project / "stacks" / "Pulumi.prod.yaml"
    document = yaml.safe_load(stack_file.read_text())
    next(p for p in document["config"]["tritonfleet:gpuPools"] if p["name"] == "l40s")["minNodes"] = 3
    stack_file.write_text(yaml.safe_dump(document))
    done = run_cli("policy", "check", "--stack", "prod", "--project-dir", str(project))
    assert "planning afresh: plans/prod.json is stale: stacks/Pulumi.prod.yaml changed" in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr  # the fresh plan was checked, not the tampered one


def _over_the_gpu_limit(project: Path) -> None:
    """Edit prod's stack so that its fresh plan breaks the GPU limit (a mandatory violation)."""
    stack_file = project / "stacks" / "Pulumi.prod.yaml"
    document = yaml.safe_load(stack_file.read_text())
    next(p for p in document["config"]["tritonfleet:gpuPools"] if p["name"] == "l40s")["maxNodes"] = 60
    stack_file.write_text(yaml.safe_dump(document))


def _hide_the_gpus(path: Path) -> None:
    """Edit a saved plan as an attacker would: the l40s burst NodePool back to a few GPUs, the fingerprint untouched."""
    document = json.loads(path.read_text())
    for resource in document["resources"]:
        if resource["type"] == "kubernetes:karpenter.sh/v1:NodePool" and resource["name"].endswith("l40s-burst"):
            resource["inputs"]["spec"]["limits"]["nvidia.com/gpu"] = "2"
    path.write_text(json.dumps(document))


def test_a_saved_plan_edited_after_it_was_written_is_planned_afresh(tmp_path):
    """Issue 37: an edited plans/prod.json with a matching fingerprint once passed `policy check` for a stack that
    breaks the GPU limit. The seal `tritonfleet plan --json` records binds the reuse to the document's content."""
    project = project_copy(tmp_path / "project")
    _over_the_gpu_limit(project)
    (project / "plans").mkdir()  # a --json folder outside the working folder must exist (tritonfleet/output_paths.py)
    planned = run_cli("plan", "--stack", "prod", "--project-dir", str(project), "--json", str(project / "plans" / "prod.json"))
    assert planned.returncode == 2 and "gpu-stack-limit-total-gpus" in planned.stdout, planned.stdout + planned.stderr
    reused = run_cli("policy", "check", "--stack", "prod", "--project-dir", str(project))
    assert "reusing plans/prod.json (inputs and content unchanged)" in reused.stdout and reused.returncode == 2

    _hide_the_gpus(project / "plans" / "prod.json")
    alone = run_cli("policy", "check", "--stack", "prod", "--project-dir", str(project), "--plan", str(project / "plans" / "prod.json"))
    assert alone.returncode == 0, alone.stdout  # the edit hides the violation from a check of that document
    checked = run_cli("policy", "check", "--stack", "prod", "--project-dir", str(project))
    assert "planning afresh: plans/prod.json is not the document `tritonfleet plan` wrote" in checked.stdout, checked.stdout
    assert checked.returncode == 2 and "gpu-stack-limit-total-gpus" in checked.stdout, checked.stdout + checked.stderr


def test_a_saved_plan_that_came_with_the_checkout_is_planned_afresh(tmp_path, fresh_plans, stock_plan):
    """A plans/ file committed to the repository (git add -f) has the right fingerprint but no seal on this machine."""
    project = project_copy(tmp_path / "project")
    save_plan(project, stock_plan("dev"), sealed=False)
    checked = plan_for_check(project, "dev")
    assert fresh_plans == ["dev"] and "its content has no matching seal" in checked.note


def test_a_seal_binds_one_path_and_one_content(tmp_path, seals, stock_plan):
    project = project_copy(tmp_path / "project")
    path = save_plan(project, stock_plan("dev"))
    assert saved_plan._sealed(path, path.read_bytes())
    assert not saved_plan._sealed(path, path.read_bytes() + b" ")
    other = project / "plans" / "copy.json"
    other.write_bytes(path.read_bytes())
    assert not saved_plan._sealed(other, other.read_bytes())  # sealed where it was written, not wherever copied
    assert [p.parent for p in seals.rglob("*") if p.is_file()] == [seals / "plan-seals"]  # outside the project


def test_an_unwritable_cache_means_no_reuse_not_an_error(tmp_path, monkeypatch, fresh_plans, stock_plan):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv(saved_plan.CACHE_ENV, str(blocker))
    project = project_copy(tmp_path / "project")
    save_plan(project, stock_plan("dev"))  # the seal cannot be written: no exception
    assert plan_for_check(project, "dev").note.startswith("planning afresh: ") and fresh_plans == ["dev"]


@pytest.fixture
def fresh_plans(monkeypatch):
    """plan_for_check with a stand-in for build_plan: which plan it would use, without planning."""
    planned: list[str] = []

    def build_plan(project_dir, stack):
        planned.append(stack)
        return {"stack": stack, "fresh": True}

    monkeypatch.setattr("tritonfleet.plan.document.build_plan", build_plan)
    return planned


def test_a_missing_plan_is_planned_afresh_and_says_how_to_save_one(tmp_path, fresh_plans):
    project = project_copy(tmp_path / "project")
    checked = plan_for_check(project, "dev")
    assert checked.document == {"stack": "dev", "fresh": True} and fresh_plans == ["dev"]
    assert checked.note.startswith("planning afresh: no plans/dev.json")
    assert "make plan STACK=dev" in checked.note


@pytest.mark.parametrize(
    ("saved", "reason"),
    [
        ("{not json", "plans/dev.json cannot be read"),
        ('["a list"]', "plans/dev.json is not a plan document"),
        ('{"stack": "prod", "resources": []}', "plans/dev.json is a plan of stack 'prod'"),
        ('{"stack": "dev", "format": 1, "resources": []}', "records no input fingerprint"),
        ('{"stack": "dev", "format": 99, "resources": [], "fingerprint": {}}', "has plan format 99, not 1"),
    ],
    ids=["not-json", "not-a-plan", "other-stack", "no-fingerprint", "other-format"],
)
def test_a_saved_plan_that_cannot_stand_is_planned_afresh(tmp_path, fresh_plans, saved, reason):
    project = project_copy(tmp_path / "project")
    (project / "plans").mkdir()
    (project / "plans" / "dev.json").write_text(saved)
    checked = plan_for_check(project, "dev")
    assert checked.document["fresh"] and checked.note.startswith("planning afresh: ") and reason in checked.note


def test_a_current_saved_plan_is_used_without_planning(tmp_path, fresh_plans, stock_plan):
    project = project_copy(tmp_path / "project")
    saved = save_plan(project, stock_plan("dev"))
    checked = plan_for_check(project, "dev")
    assert fresh_plans == [] and checked.document == json.loads(saved.read_text())
    assert checked.note == "reusing plans/dev.json (inputs and content unchanged)"
    assert saved_plan.saved_plan_path(project, "dev") == saved


def test_the_fingerprint_is_the_same_in_another_folder_and_names_what_changed(tmp_path):
    here = input_digests(load_project(ROOT), "dev")
    copy = tmp_path / "clone"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "venv", "venv-*", ".*cache", "plans", "__pycache__"))
    assert input_digests(load_project(copy), "dev") == here
    assert set(here) == {
        "stacks/Pulumi.dev.yaml", "Pulumi.yaml", "__main__.py", "pyproject.toml", "charts/", "components/", "policies/", "tritonfleet/",
    }

    (copy / "components" / "__pycache__").mkdir(exist_ok=True)
    (copy / "components" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"compiled")
    assert input_digests(load_project(copy), "dev") == here  # caches are not inputs

    chart_values = next((copy / "charts").rglob("values.yaml"))
    chart_values.write_text(chart_values.read_text() + "\n# edited\n")
    (copy / "policies" / "config" / "dev.json").write_text("{}")
    edited = input_digests(load_project(copy), "dev")
    assert changed_parts(fingerprint_section(here), edited) == ["charts/", "policies/"]
    assert fingerprint_section(edited)["digest"] != fingerprint_section(here)["digest"]
    assert input_digests(load_project(copy), "prod").keys() != here.keys()  # each stack has its own file


def test_a_measured_capacity_file_is_an_input(tmp_path):
    """A deployment that sizes from a loadtest result: a new measurement makes the saved plan stale."""
    project = project_copy(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(stack_file.read_text())
    document["config"]["tritonfleet:tritonDeployments"][0]["loadtestResult"] = {"path": "loadtests/resnet.json", "model": "resnet"}
    stack_file.write_text(yaml.safe_dump(document))
    before = input_digests(load_project(project), "dev")
    assert before["loadtests/resnet.json"] == "missing"
    (project / "loadtests").mkdir()
    (project / "loadtests" / "resnet.json").write_text('{"measured": 1}')
    after = input_digests(load_project(project), "dev")
    assert changed_parts(fingerprint_section(before), after) == ["loadtests/resnet.json"]


def test_a_plan_document_carries_the_fingerprint_of_its_inputs(stock_plan):
    document = stock_plan("gcp-dev")
    assert document["fingerprint"] == fingerprint_section(input_digests(load_project(ROOT), "gcp-dev"))


def test_the_harness_skips_source_positions_only_during_a_run():
    """The harness swaps out a private SDK function while the program runs: an SDK upgrade that renames it must fail
    here, not silently slow every plan down, and the SDK must get its own function back."""
    from pulumi.runtime import resource as sdk_resource

    from tritonfleet.plan import harness

    walk = sdk_resource._get_stack_trace
    with harness._no_source_positions():
        assert sdk_resource._get_stack_trace is not walk and not sdk_resource._get_stack_trace().frames
    assert sdk_resource._get_stack_trace is walk
