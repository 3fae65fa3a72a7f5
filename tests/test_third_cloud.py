"""The cloud seam holds (issue #35, point 2): a test-only third cloud, tests/toy_cloud, registers itself and plans a
stack end to end — config rules, GPU pools and node counts, the bill priced from its own catalog rows, the policy
pack's verdicts on its resources, a diff of two plans — with nothing outside its folder naming it.

Two plans of the stack, each made once in a child of the fork server (the registration is made there, where the plan
runs): the base by `tritonfleet plan --json` as a user runs it, the head (maxNodes 3 -> 4, bigger node disks, the Triton image
mirrored) by build_plan with an edit. A bad stack is refused by `tritonfleet plan` too. The diff and the readers are checked in
this process, under the same registration.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from conftest import ROOT, forked, one_line

from tests.toy_cloud.catalog import GPU_TYPE, ON_DEMAND_USD, REGION, SPOT_USD, SYSTEM_TYPE
from tests.toy_cloud.cloud import MIRROR
from tests.toy_cloud.planning import STACK, STACK_CONFIG, Edit, make_project, toy_cloud
from tests.toy_cloud.storage import ROOT_ENV
from tritonfleet.core.conventions import HOURS_PER_MONTH

TOY_FILES = ("tests/toy_cloud/", "tests/test_third_cloud.py")
SAMPLE_REPOSITORY = ROOT / "tests" / "fixtures" / "model_repository"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("toy-project"))


def plan_command(project, *more):
    policy = project / "toy-policy.json"
    args = ["plan", "--stack", STACK, "--project-dir", str(project), "--policy-config", str(policy), *more]
    return forked("tests.toy_cloud.planning:cli", args)


@pytest.fixture(scope="module")
def planned(project):
    """(base, head, what `tritonfleet plan` printed for the base)."""
    code, printed, errors = plan_command(project, "--json", str(project / "base.json"))
    assert code == 0, errors
    edit = Edit(pool={"maxNodes": 4, "diskGi": 300}, cluster={"imageMirror": True})
    head = forked("tests.toy_cloud.planning:plan", project, edit=edit)
    return json.loads((project / "base.json").read_text()), head, printed


@pytest.fixture(scope="module")
def plans(planned):
    return planned[:2]


def toy_resources(plan, typ):
    return {r["name"]: r["inputs"] for r in plan["resources"] if r["type"] == f"tritonfleet:toy:{typ}"}


def test_the_registry_finds_the_toy_only_while_registered():
    from tritonfleet.core.catalog import load_catalog
    from tritonfleet.core.cloud import cloud, cloud_names
    from tritonfleet.plan.fake_state import fake_outputs

    with toy_cloud():
        assert cloud_names()[-1] == "toy" and cloud("toy").adapter == "tests.toy_cloud.adapter:ToyCloud"
        assert cloud("toy").rules.SERVICE_NAME == "Toy Kubernetes"
        assert load_catalog().default_type("toy", "L40S").name == GPU_TYPE
        assert fake_outputs("tritonfleet:toy:Bucket", "b", {"bucketName": "x"}) == {"name": "b", "bucketName": "x"}
    assert "toy" not in cloud_names() and load_catalog().gpus_on("toy") == []


def test_pools_and_node_counts(plans):
    base, head = plans
    assert base["cloud"] == "toy" and base["region"] == REGION
    (pool,) = base["cost"]["pools"]
    assert (pool["pool"], pool["instanceType"], pool["gpusPerNode"]) == ("l40s", GPU_TYPE, 1)
    assert pool["nodes"] == {"on-demand": {"min": 1, "max": 1}, "spot": {"min": 0, "max": 2}}
    assert head["cost"]["pools"][0]["nodes"]["spot"] == {"min": 0, "max": 3}
    # The adapter built one toy node pool per purchase option, and a system pool, as the config split them.
    node_pools = toy_resources(base, "NodePool")
    assert {name: (p["minNodes"], p["maxNodes"], p["spot"]) for name, p in node_pools.items()} == {
        "tf-toy-l40s-on-demand": (1, 1, False),
        "tf-toy-l40s-spot": (0, 2, True),
        "tf-toy-system": (2, 2, False),
    }
    assert base["outputs"]["toyNodePools"] == {"l40s": ["tf-toy-l40s-on-demand", "tf-toy-l40s-spot"]}
    assert base["outputs"]["modelRepositories"] == {"models": "toy://toy-models-dev"}
    # The Kubernetes layer ran on the toy's facts: its provider, the GPU taint of the toy, the identity annotation.
    triton = next(r for r in base["resources"] if r["name"] == "tf-triton-resnet")
    assert triton["provider"].endswith("pulumi:providers:kubernetes::tf-toy-k8s")
    values = str(triton["inputs"]["values"])
    assert "'value': 'present'" in values and "toy.example/identity" in values
    assert "192.0.2.0/24" in values  # its NetworkPolicy lets Triton reach the toy's object store (exposure_facts)
    assert MIRROR not in values
    # The head mirrors the Triton image in the toy's registry (CloudAdapter.image_mirror).
    assert head["outputs"]["tritonImageMirror"] == MIRROR
    assert MIRROR in str(next(r for r in head["resources"] if r["name"] == "tf-triton-resnet")["inputs"]["values"])


def test_cost_is_priced_from_the_toy_catalog_rows(plans):
    base, head = plans
    month = HOURS_PER_MONTH
    (pool,) = base["cost"]["pools"]
    assert pool["prices"]["on-demand"]["usdPerHour"] == ON_DEMAND_USD and pool["prices"]["spot"]["source"] == "TOYPRICES"
    assert pool["monthlyFloorUsd"] == ON_DEMAND_USD * month
    assert pool["monthlyCeilingUsd"] == ON_DEMAND_USD * month + 2 * SPOT_USD * month
    assert head["cost"]["pools"][0]["monthlyCeilingUsd"] == ON_DEMAND_USD * month + 3 * SPOT_USD * month
    lines = {line["line"]: line for line in base["cost"]["otherLines"]}
    assert lines["control-plane"]["monthlyCeilingUsd"] == round(0.10 * month, 2)
    assert lines["system-nodes"]["what"] == f"2 x {SYSTEM_TYPE} (on-demand)"
    assert lines["system-nodes"]["monthlyCeilingUsd"] == round(2 * 0.20 * month, 2)
    assert all(line["monthlyCeilingUsd"] != "unknown" for line in lines.values())
    totals = base["cost"]["totals"]
    assert totals["totalCeilingUsd"] == round(totals["gpuCeilingUsd"] + totals["otherCeilingUsd"], 2)
    assert base["cloudNotes"] == {"toy": f"a test-only cloud: nothing of {STACK} is deployable"}
    from tritonfleet.plan.text import cloud_note_lines

    assert any("nothing of" in line.text for line in cloud_note_lines(base["cloudNotes"], 100))


def test_the_plan_command_prints_the_toy_stack(planned):
    printed = one_line(planned[2])
    assert f"tritonfleet plan: stack {STACK} (dev, toy {REGION})" in printed
    assert "cluster tf-toy-cluster: enforced (the toy cluster's built-in NetworkPolicy engine)" in printed
    assert f"l40s: on-demand 1..1 at ${ON_DEMAND_USD:.2f}/h, spot 0..2 at ${SPOT_USD:.2f}/h" in printed
    assert "Policies: 0 mandatory violation(s), 5 advisory finding(s)." in printed


def test_policies_read_the_toy_resources(plans):
    base, head = plans
    by_policy = {v["policy"]: v for v in base["policy"]["verdicts"]}
    # The spot-only rule read the toy's on-demand node pool (Cloud.gpu_pool).
    assert "tf-toy-l40s-on-demand" in by_policy["spot-pool-require-spot-only"]["message"]
    # The budget rules priced the toy pools, control plane and system nodes (Cloud.platform_line) and the registered
    # bill lines as the plan does: the warning quotes the plan's own total.
    total = base["cost"]["totals"]["totalCeilingUsd"]
    assert f"${total:,.2f}/month" in by_policy["cost-stack-warn-monthly-budget"]["message"]
    assert base["policy"]["mandatory"] == 0
    # The protection rule read the toy's protected types and its cluster's own deletion protection.
    unprotected = [v["message"] for v in base["policy"]["verdicts"] if v["policy"] == "stateful-resource-require-protect"]
    assert [m.split(" (")[0] for m in unprotected if "protect: false" in m] == ["'tf-toy-models'", "'tf-toy-cluster'"]
    assert "toy cluster 'tf-toy-cluster' has deletionProtection false; required: true in this environment." in unprotected
    # The NetworkPolicy rule found the toy cluster enforcing (Cloud.cluster_enforcement), as the plan's section does.
    assert "cluster-require-network-policy-enforcement" not in by_policy
    assert base["networkPolicy"]["clusters"] == [
        {"cluster": "tf-toy-cluster", "enforced": True, "by": "the toy cluster's built-in NetworkPolicy engine"}
    ]
    head_total = head["cost"]["totals"]["totalCeilingUsd"]
    (over,) = [v for v in head["policy"]["verdicts"] if v["enforcement"] == "mandatory"]
    assert over["policy"] == "cost-stack-enforce-monthly-budget" and f"{head_total:,.2f}" in over["message"]


def test_diff_of_two_toy_plans(plans):
    from tritonfleet.diff import compare_stack, report
    from tritonfleet.diff.compare import Change

    base, head = plans
    with toy_cloud():  # the diff reads the toy's replacement table through the registry
        diff = compare_stack(base, head, STACK)
    changes = {c.name: c for c in diff.resources}
    spot = changes["tf-toy-l40s-spot"]
    assert spot.kind == "node pool" and {p.path: (p.before, p.after) for p in spot.paths}["maxNodes"] == (2, 3)
    assert spot.roll_reasons and "diskGi" in spot.roll_reasons[0] and not spot.replace_reasons
    assert changes["tf-toy-registry"].action == "add"
    assert [(f.action, f.name) for f in diff.flags] == [("roll nodes", "tf-toy-l40s-on-demand"), ("roll nodes", "tf-toy-l40s-spot")]
    (pool,) = diff.pools
    assert (pool.max_gpus.before, pool.max_gpus.after) == (3, 4)
    assert diff.total_ceiling == Change(base["cost"]["totals"]["totalCeilingUsd"], head["cost"]["totals"]["totalCeilingUsd"])
    assert [v.policy for v in diff.added_mandatory] == ["cost-stack-enforce-monthly-budget"] and diff.blocked
    comment = report([diff])
    assert "tf-toy-l40s-spot" in comment and "cost-stack-enforce-monthly-budget" in comment


def test_preflight_asks_the_toy_cloud(project):
    code, printed, errors = forked("tests.toy_cloud.planning:cli", ["preflight", "--stack", STACK, "--project-dir", str(project)])
    assert code == 0, errors
    assert "the toy cloud has no API to ask" in one_line(printed) and "1 check(s) could not be answered" in printed


def test_models_sync_publishes_to_the_toy_store(project, tmp_path, monkeypatch):
    bucket = tmp_path / "store" / STACK_CONFIG["tritonfleet:modelBuckets"][0]["bucketName"]
    bucket.mkdir(parents=True)
    monkeypatch.setenv(ROOT_ENV, str(bucket.parent))  # the fork server's child takes this process's environment
    repository = shutil.copytree(SAMPLE_REPOSITORY, tmp_path / "repository")
    args = ["models", "sync", str(repository), "--stack", STACK, "--deployment", "resnet", "--project-dir", str(project)]
    code, printed, errors = forked("tests.toy_cloud.planning:cli", args)
    assert code == 0, errors
    published = sorted(p.relative_to(bucket).as_posix() for p in bucket.rglob("*") if p.is_file() and p.name != ".index.json")
    assert published == ["resnet/add_version/1/model.py", "resnet/add_version/config.pbtxt"]
    code, printed, errors = forked("tests.toy_cloud.planning:cli", args)
    assert code == 0 and "toy://toy-models-dev/resnet/ is up to date." in printed


def test_a_bad_toy_stack_gets_one_message(tmp_path):
    pool = {**STACK_CONFIG["tritonfleet:gpuPools"][0], "maxNodes": 12}
    bad = {**STACK_CONFIG, "tritonfleet:cluster": {"zones": [f"{REGION}a", f"{REGION}z"]}, "tritonfleet:gpuPools": [pool]}
    code, printed, errors = plan_command(make_project(tmp_path, bad))
    message = one_line(errors)
    assert code == 1 and printed == ""
    assert message.startswith(f"error: stack '{STACK}' has 2 configuration problems: 1. tritonfleet:cluster.zones[1] = ")
    assert f"fix: pulumi config set --path 'tritonfleet:cluster.zones[1]' {REGION}b --stack {STACK}" in message
    assert "allowed: at most 10: Toy Kubernetes runs at most 10 nodes in a node pool" in message
    assert f"fix: pulumi config set --path 'tritonfleet:gpuPools[0].maxNodes' 10 --stack {STACK}" in message
    assert "Traceback" not in message


def test_nothing_outside_its_folder_names_the_toy_cloud():
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    word = re.compile(r"(?<![A-Za-z])toy(?![A-Za-z])", re.IGNORECASE)
    naming = []
    for name in listed:
        path = ROOT / name
        if name.startswith(TOY_FILES) or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        naming += [f"{name}:{n}" for n, line in enumerate(text.splitlines(), 1) if word.search(line)]
    assert naming == []
