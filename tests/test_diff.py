"""`tritonfleet diff`: crafted plan pairs against checked-in Markdown, real plans of edited stacks, the size bound,
the JSON format and bad input. Set TRITONFLEET_UPDATE_GOLDEN=1 to rewrite tests/data/diff/*.md after a deliberate
change of the comment format (and read the diff of those files before committing them)."""

from __future__ import annotations

import copy
import json
import os
import shutil

import pytest
import yaml
from conftest import ROOT, copy_project, run_cli

from tritonfleet.core.conventions import HOURS_PER_MONTH
from tritonfleet.diff import COMMENT_LIMIT, compare_plans, compare_stack, marker, report, to_json
from tritonfleet.diff.compare import flatten
from tritonfleet.diff.render import NO_CHANGES
from tritonfleet.diff.replacement import node_roll_reasons, replace_reasons, watched

GOLDEN = ROOT / "tests" / "data" / "diff"
AWS = "tritonfleet:aws:AwsCloud"


# ---------------------------------------------------------------- crafted plan documents


def resource(typ: str, name: str, inputs: dict, **options) -> dict:
    return {
        "urn": f"urn:pulumi:demo::tritonfleet::{AWS}${typ}::{name}",
        "type": typ,
        "name": name,
        "custom": True,
        "inputs": inputs,
        "protect": options.get("protect", False),
        "ignoreChanges": options.get("ignoreChanges", []),
        "retainOnDelete": False,
        "deleteBeforeReplace": False,
    }


def pool(name: str, nodes: dict[str, tuple[int, int]], prices: dict[str, float | None], gpus_per_node: int = 1) -> dict:
    def month(bound: int):
        total = 0.0
        for option, rng in nodes.items():
            if rng[bound]:
                if prices[option] is None:
                    return "unknown"
                total += rng[bound] * prices[option] * HOURS_PER_MONTH
        return round(total, 2)

    return {
        "pool": name, "gpu": "L40S", "instanceType": "g6e.xlarge", "gpusPerNode": gpus_per_node,
        "nodes": {o: {"min": lo, "max": hi} for o, (lo, hi) in nodes.items()},
        "maxGpus": sum(hi for _, hi in nodes.values()) * gpus_per_node,
        "monthlyFloorUsd": month(0), "monthlyCeilingUsd": month(1),
    }


def plan(resources: list[dict], pools: list[dict], policy: list[dict] | None = None) -> dict:
    def total(key):
        values = [p[key] for p in pools]
        return "unknown" if "unknown" in values else round(sum(values), 2)

    document = {
        "format": 1, "project": "tritonfleet", "stack": "demo", "cloud": "aws", "environment": "dev", "region": "us-east-1",
        "resources": sorted(resources, key=lambda r: r["urn"]),
        "cost": {"pools": pools, "monthlyFloorUsd": total("monthlyFloorUsd"), "monthlyCeilingUsd": total("monthlyCeilingUsd"),
                 "maxGpus": sum(p["maxGpus"] for p in pools)},
    }
    if policy is not None:
        document["policy"] = {"verdicts": policy}  # the shape `tritonfleet plan` writes
    return document


def node_group(capacity="ON_DEMAND", max_size=2) -> dict:
    return resource(
        "aws:eks/nodeGroup:NodeGroup", "tf-aws-l40s",
        {"capacityType": capacity, "instanceTypes": ["g6e.xlarge"], "scalingConfig": {"desiredSize": 1, "maxSize": max_size, "minSize": 1},
         "labels": {"tritonfleet.io/pool": "l40s"}},
        ignoreChanges=["scalingConfig.desiredSize"], protect=True,
    )


def base_plan(policy=None) -> dict:
    return plan(
        [
            resource("aws:eks/cluster:Cluster", "tf-aws-eks", {"name": "tf-demo", "roleArn": "arn:aws:iam::1:role/a", "version": "1.33"}, protect=True),
            node_group(),
            resource("aws:s3/bucket:Bucket", "tf-aws-models", {"bucket": "tf-demo-models"}, protect=True),
            resource("kubernetes:helm.sh/v3:Release", "tf-triton-resnet", {"values": {"replicas": 1}}),
        ],
        [pool("l40s", {"on-demand": (1, 2)}, {"on-demand": 1.861})],
        policy,
    )


def crafted_cases() -> dict[str, tuple[dict, dict]]:
    base = base_plan()
    resized = copy.deepcopy(base)
    resized["resources"][1] = node_group(max_size=6)
    resized["cost"] = plan([], [pool("l40s", {"on-demand": (1, 6)}, {"on-demand": 1.861})])["cost"]

    spot = copy.deepcopy(base)
    spot["resources"][1] = node_group(capacity="SPOT")
    spot["cost"] = plan([], [pool("l40s", {"spot": (1, 2)}, {"spot": 0.9})])["cost"]

    replaced = copy.deepcopy(base)
    replaced["resources"][0]["inputs"]["roleArn"] = "arn:aws:iam::1:role/b"
    replaced["resources"][0]["inputs"]["version"] = "1.34"

    advisory = {"policy": "spot-share", "enforcement": "advisory", "severity": "low", "urn": base["resources"][1]["urn"], "message": "no spot"}
    mandatory = {"policy": "gpu-budget", "enforcement": "mandatory", "severity": "high", "urn": "", "message": "monthly ceiling $9,000 exceeds the $5,000 budget"}
    violation_base = base_plan(policy=[advisory])
    violation_head = base_plan(policy=[mandatory])

    unknown = copy.deepcopy(base)
    unknown["cost"] = plan([], [pool("l40s", {"on-demand": (1, 2), "spot": (0, 2)}, {"on-demand": 1.861, "spot": None})])["cost"]

    return {
        "no-change": (base, copy.deepcopy(base)),
        "pool-resized": (base, resized),
        "pool-to-spot": (base, spot),
        "cluster-replaced": (base, replaced),
        "new-policy-violation": (violation_base, violation_head),
        "unknown-price": (base, unknown),
    }


@pytest.mark.parametrize("case", sorted(crafted_cases()))
def test_crafted_pair_matches_the_checked_in_comment(case):
    base, head = crafted_cases()[case]
    rendered = report([compare_stack(base, head)])
    golden = GOLDEN / f"{case}.md"
    if os.environ.get("TRITONFLEET_UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text(), f"comment for {case} changed; see TRITONFLEET_UPDATE_GOLDEN in this file"


def test_crafted_pairs_say_what_matters():
    cases = crafted_cases()
    assert compare_stack(*cases["no-change"]).status == "unchanged"

    resized = compare_stack(*cases["pool-resized"])
    assert (resized.max_gpus.before, resized.max_gpus.after, resized.max_gpus.delta) == (2, 6, 4)
    assert resized.monthly_ceiling.delta == round(4 * 1.861 * HOURS_PER_MONTH, 2) and not resized.flags
    (change,) = resized.resources
    assert [p.path for p in change.paths if not p.ignored] == ["scalingConfig.maxSize"]

    spot = compare_stack(*cases["pool-to-spot"])
    assert [(f.action, f.kind, f.reasons) for f in spot.flags] == [("replace", "node pool", ("capacityType",))]
    assert spot.flags[0].notes == ("protected: `pulumi up` fails until protect is lifted",)
    assert spot.monthly_ceiling.delta < 0

    replaced = compare_stack(*cases["cluster-replaced"])
    assert [(f.action, f.kind, f.reasons) for f in replaced.flags] == [("replace", "cluster", ("roleArn",))]

    policy = compare_stack(*cases["new-policy-violation"]).policy
    assert [v.policy for v in policy.new] == ["gpu-budget"] and [v.policy for v in policy.resolved] == ["spot-share"]

    unknown = compare_stack(*cases["unknown-price"])
    assert unknown.monthly_ceiling.after == "unknown" and unknown.monthly_ceiling.delta == "unknown"
    assert unknown.monthly_floor.delta == 0  # the floor buys no spot node, so its price is known


def test_changes_under_ignore_changes_do_not_count():
    base = base_plan()
    head = copy.deepcopy(base)
    head["resources"][1]["inputs"]["scalingConfig"]["desiredSize"] = 2
    diff = compare_stack(base, head)
    assert diff.status == "unchanged" and [r.action for r in diff.resources] == ["ignored"]


def test_flatten_uses_pulumi_property_paths():
    flat = flatten({"a": {"b": 1}, "labels": {"x.io/y": "z"}, "list": [{"k": 1}], "scalars": ["p", "q"], "empty": {}})
    assert flat == {"a.b": 1, 'labels["x.io/y"]': "z", "list[0].k": 1, "scalars": ["p", "q"], "empty": {}}


def test_replacement_table_is_small_and_matches_paths_with_indices():
    assert len(watched()) <= 10 and {w.kind for w in watched().values()} == {"cluster", "node pool", "node class", "bucket"}
    pool = "gcp:container/nodePool:NodePool"
    assert replace_reasons(pool, ["nodeConfig.guestAccelerators[0].gpuDriverInstallationConfig.gpuDriverVersion"]) == [
        "nodeConfig.guestAccelerators"
    ]
    assert replace_reasons(pool, ["autoscaling.maxNodeCount"]) == []
    assert replace_reasons("aws:eks/nodeGroup:NodeGroup", ["launchTemplate.name"]) == ["launchTemplate.name"]
    assert replace_reasons("aws:eks/nodeGroup:NodeGroup", ["launchTemplate.version"]) == []
    # Karpenter: a renamed NodePool is replaced (its nodes drained); a new template drifts its nodes; limits do neither.
    knp = "kubernetes:karpenter.sh/v1:NodePool"
    assert replace_reasons(knp, ["metadata.name"]) == ["metadata.name"]
    assert node_roll_reasons(knp, ["spec.template.spec.requirements[0].values[1]"]) == ["spec.template.spec.requirements"]
    assert replace_reasons(knp, ["spec.limits.nvidia.com/gpu"]) == node_roll_reasons(knp, ["spec.limits.cpu", "spec.weight"]) == []
    assert node_roll_reasons("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", ["spec.amiSelectorTerms[0].alias"]) == [
        "spec.amiSelectorTerms"
    ]


# ---------------------------------------------------------------- size bound, marker, JSON


def huge_pair() -> tuple[dict, dict]:
    long = "x" * 500
    base_resources = [resource("aws:s3/bucket:Bucket", f"bucket-{i:04d}", {"bucket": f"b{i}", "blob": long}, protect=True) for i in range(300)]
    base_resources += [resource("kubernetes:core/v1:ConfigMap", f"cm-{i:05d}", {"data": {f"k{j}": long for j in range(5)}}) for i in range(3000)]
    head_resources = [resource("kubernetes:core/v1:ConfigMap", f"cm-{i:05d}", {"data": {f"k{j}": long + "!" for j in range(5)}}) for i in range(3000)]
    head_resources += [resource("kubernetes:core/v1:Secret", f"new-{i:05d}", {"data": long}) for i in range(2000)]
    policy = [{"policy": f"p{i}", "enforcement": "mandatory", "severity": "high", "urn": "", "message": long} for i in range(200)]
    pools = [pool("l40s", {"on-demand": (1, 2)}, {"on-demand": 1.861})]
    return plan(base_resources, pools, []), plan(head_resources, pools, policy)


def test_a_huge_change_stays_under_the_comment_limit_with_the_summary_intact():
    diff = compare_stack(*huge_pair())
    comment = report([diff])
    assert len(comment) <= COMMENT_LIMIT
    assert comment.startswith(marker() + "\n")
    assert "2000 to add, 3000 to change, 300 to remove" in comment
    assert "300 deletions of clusters, node pools or buckets" in comment
    assert "…and 270 more replacements or deletions" in comment and "…and 170 more blocking items" in comment
    assert "more resource changes not shown" in comment
    assert comment.count("<details>") == comment.count("</details>") == 1

    many = report([compare_stack(*huge_pair()) for _ in range(4)])
    assert len(many) <= COMMENT_LIMIT and many.count(marker()) == 1
    assert many.count("| `demo` | ⛔ blocked |") == 4 and "report cut here" in many  # every headline row survives


def test_one_comment_for_all_stacks_with_a_headline_row_per_changed_stack_and_json_has_everything():
    base, head = crafted_cases()["pool-resized"]
    other = copy.deepcopy(head)
    other["stack"] = "other"
    same = copy.deepcopy(base)
    same["stack"] = "same"
    diffs = compare_plans({"demo": base, "same": same}, {"demo": head, "other": other, "same": same})
    markdown = report(diffs)
    assert markdown.count("<!-- tritonfleet-plan:") == 1 and markdown.startswith(marker())
    assert "| `demo` | ✅ not blocked | +$5,434 (+200%) | — | 2 → 6 |" in markdown
    assert "No changes in `same`." in markdown and "### `same`" not in markdown
    assert [d.status for d in diffs] == ["changed", "added", "unchanged"]

    data = json.loads(json.dumps(to_json(diffs)))
    demo, added, _ = data["stacks"]
    assert demo["maxGpus"] == {"base": 2, "head": 6, "delta": 4}
    assert demo["pools"][0]["maxGpus"]["delta"] == 4
    assert demo["blocked"] is False and demo["addedMandatory"] == []
    (change,) = demo["resources"]
    assert {"path": "scalingConfig.maxSize", "base": 2, "head": 6, "baseSet": True, "headSet": True, "ignored": False} in change["paths"]
    assert added["status"] == "added" and added["counts"]["add"] == len(head["resources"])


def test_no_stack_changed_is_one_short_comment_the_workflow_does_not_post_anew():
    base = base_plan()
    markdown = report(compare_plans({"demo": base}, {"demo": copy.deepcopy(base)}))
    assert markdown.startswith(marker()) and NO_CHANGES in markdown and "No changes in `demo`." in markdown
    assert NO_CHANGES not in report([compare_stack(*crafted_cases()["pool-resized"])])


def test_a_blocked_stack_leads_with_its_headline_and_the_full_fix_text():
    """Blocking items come before advisory ones and carry their whole message (no cut at ~200 characters)."""
    fix = "Lower gpuPools[].maxNodes, or raise maxGpus in this stack's policy config after review. " * 4
    advisory = {"policy": "spot-share", "enforcement": "advisory", "severity": "low", "urn": "", "message": "advice"}
    mandatory = {"policy": "gpu-stack-limit-total-gpus", "enforcement": "mandatory", "severity": "high", "urn": "", "message": fix}
    base, head = base_plan(policy=[]), base_plan(policy=[advisory, mandatory])
    head["cost"] = plan([], [pool("l40s", {"on-demand": (1, 6)}, {"on-demand": 1.861})])["cost"]
    for document, use in ((base, 0.5), (head, 1.5)):
        document["cost"]["budget"] = {"monthlyUsd": document["cost"]["monthlyCeilingUsd"] / use, "basis": "ceiling", "gpuLimit": 4}
    diff = compare_stack(base, head)
    assert diff.blocked and [v.policy for v in diff.added_mandatory] == ["gpu-stack-limit-total-gpus"]
    comment = report([diff])
    assert "> **`demo` is blocked:** 1 mandatory policy violation, 1 added here." in comment
    assert "| `demo` | ⛔ blocked | +$5,434 (+200%) | 50% → 150% | 2 → 6 |" in comment
    assert "- **GPUs (max):** 2 → 6 (+4), limit 4" in comment
    assert " ".join(fix.split()) in comment
    assert comment.index("**Blocking**") < comment.index("`spot-share`") and comment.count("gpu-stack-limit-total-gpus") == 1
    data = to_json([diff])["stacks"][0]
    assert data["budget"]["use"] == {"base": 0.5, "head": 1.5, "delta": 1.0}
    assert [v["policy"] for v in data["addedMandatory"]] == ["gpu-stack-limit-total-gpus"]

    # The same violation at the base blocks the stack but is not added by the change.
    again = compare_stack(base_plan(policy=[mandatory]), base_plan(policy=[mandatory]))
    assert again.blocked and again.added_mandatory == []
    # Raised to mandatory is added; a base without verdicts cannot tell, so the head's count as added.
    raised = compare_stack(base_plan(policy=[dict(mandatory, enforcement="advisory")]), base_plan(policy=[mandatory]))
    assert [v.policy for v in raised.added_mandatory] == ["gpu-stack-limit-total-gpus"]
    assert compare_stack(base_plan(), base_plan(policy=[mandatory])).added_mandatory != []


def _rule_resource(rules: list[dict], panels: list[dict]) -> dict:
    return resource("kubernetes:monitoring.coreos.com/v1:PrometheusRule", "tf-monitoring-rules", {
        "spec": {"groups": [{"name": "tritonfleet", "rules": rules}]},
        "data": {"gpu.json": json.dumps({"title": "GPU", "panels": panels})},
    })


def test_alert_rules_and_dashboard_panels_are_compared_by_name_not_position():
    rules = [{"alert": f"Alert{i}", "expr": f"x{i} > 1", "labels": {"severity": "warning"}} for i in range(40)]
    rules += [{"alert": "PerDeployment", "expr": f"y{{d='{d}'}} > 1", "labels": {"deployment": d}} for d in ("a", "b")]
    panels = [{"title": f"Panel {i}", "targets": [{"refId": "A", "expr": f"p{i}"}]} for i in range(20)]
    head_rules = [{"alert": "Inserted", "expr": "z > 1"}, *rules[:41], {**rules[41], "expr": "changed"}]
    head_panels = [{"title": "New panel", "targets": []}, *panels]
    base, head = plan([_rule_resource(rules, panels)], []), plan([_rule_resource(head_rules, head_panels)], [])
    (change,) = compare_stack(base, head).resources
    paths = [p.path for p in change.paths]
    assert paths == [
        'data["gpu.json"].panels[title=New panel].targets',
        'data["gpu.json"].panels[title=New panel].title',
        "spec.groups[name=tritonfleet].rules[alert=Inserted].alert",
        "spec.groups[name=tritonfleet].rules[alert=Inserted].expr",
        "spec.groups[name=tritonfleet].rules[alert=PerDeployment{deployment=b}].expr",
    ]
    # Watched types keep Pulumi's index paths (the replacement table is written in them).
    assert flatten({"a": [{"name": "x"}]}) == {"a[0].name": "x"}


# ---------------------------------------------------------------- real plan documents of edited stacks


@pytest.fixture(scope="module")
def project_copy(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("project") / "tritonfleet")


def edited_plan(project, stack: str, edit) -> dict:
    from tests.conftest import build_plan

    path = project / "stacks" / f"Pulumi.{stack}.yaml"
    original = path.read_text()
    document = yaml.safe_load(original)
    edit(document["config"])
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    try:
        return build_plan(project, stack)
    finally:
        path.write_text(original)


def test_real_plans_show_gpu_and_cost_deltas_replacements_and_deletions(project_copy):
    def two_buckets(config):
        config["tritonfleet:modelBuckets"].append({"name": "archive"})

    def edited(config):
        pool_config = config["tritonfleet:gpuPools"][0]
        pool_config["maxNodes"] = 4
        pool_config["instanceType"] = "g6e.2xlarge"

    base = edited_plan(project_copy, "dev", two_buckets)
    head = edited_plan(project_copy, "dev", edited)
    diff = compare_stack(base, head)

    (l40s,) = diff.pools
    assert (l40s.max_gpus.before, l40s.max_gpus.after) == (2, 4) and diff.max_gpus.delta == 2
    assert l40s.instance_type.after == "g6e.2xlarge"
    assert isinstance(diff.monthly_ceiling.delta, float) and diff.monthly_ceiling.delta > 0
    flags = {(f.action, f.kind, f.name) for f in diff.flags}
    # A new instance type drifts the Karpenter NodePool: its nodes are replaced, the NodePool itself is not.
    assert ("roll nodes", "node pool", "tf-aws-gpu-l40s-burst") in flags and ("delete", "bucket", "tf-aws-archive") in {
        (f.action, f.kind, f.name.split("$")[-1]) for f in diff.flags
    }
    rolled = next(f for f in diff.flags if f.action == "roll nodes" and f.name == "tf-aws-gpu-l40s-burst")
    assert "spec.template.spec.requirements" in rolled.reasons
    comment = report([diff])
    assert comment.startswith(marker()) and "### `dev`" in comment and "node pool" in comment and len(comment) <= COMMENT_LIMIT


# ---------------------------------------------------------------- the command


def test_cli_diffs_two_files_in_both_formats(tmp_path):
    base, head = crafted_cases()["pool-resized"]
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    markdown = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--comments-dir", str(tmp_path / "c"))
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout.startswith(marker() + "\n## tritonfleet plan diff") and "### `demo`" in markdown.stdout
    assert (tmp_path / "c" / "plan-diff.md").read_text() == markdown.stdout == report([compare_stack(base, head)])

    as_json = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--format", "json", "--stack", "demo")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["stacks"][0]["maxGpus"]["delta"] == 4


def test_cli_exits_2_when_the_head_adds_a_mandatory_violation_and_still_writes_the_comment(tmp_path):
    base, head = crafted_cases()["new-policy-violation"]
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    added = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--comments-dir", str(tmp_path / "c"))
    assert added.returncode == 2 and "mandatory: demo: gpu-budget" in added.stderr
    assert "⛔ blocked" in (tmp_path / "c" / "plan-diff.md").read_text()
    kept = run_cli("diff", str(tmp_path / "head.json"), str(tmp_path / "head.json"))  # already at the base: not added
    assert kept.returncode == 0 and "mandatory:" not in kept.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "is not JSON"),
        ('{"stack": "dev"}', "is not a tritonfleet plan document: missing format, resources, cost"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_input_exits_1_with_a_clear_message(tmp_path, content, message):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(base_plan()))
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    result = run_cli("diff", str(bad), str(good))
    assert result.returncode == 1
    assert message in " ".join(result.stderr.split()) and "Traceback" not in result.stderr


def test_wrong_usage_exits_64_and_an_unknown_stack_1(tmp_path):
    """Plan documents missing or given both ways is a usage error (64, as Click's own); a stack with no plan is bad input."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(base_plan()))
    for args in ((), (str(good),), (str(good), str(good), "--base-ref", "HEAD"), ("--base-ref", "HEAD", str(good))):
        wrong = run_cli("diff", *args)
        assert wrong.returncode == 64 and "give BASE and HEAD plan documents" in wrong.stderr and "not both" in wrong.stderr
    unknown = run_cli("diff", str(good), str(good), "--stack", "nope")
    assert unknown.returncode == 1 and "no plan for stack nope" in unknown.stderr


def test_policy_verdicts_of_real_plans_are_compared(stock_plan, tmp_path):
    """The verdicts as `tritonfleet plan` writes them: gcp-prod with its B200 pool on (a4-highgpu-8g is unpriced)."""
    from tests.conftest import build_plan

    for item in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / item, tmp_path)
    for folder in ("stacks", "policies"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    stack_file = tmp_path / "stacks" / "Pulumi.gcp-prod.yaml"
    doc = yaml.safe_load(stack_file.read_text())
    b200 = next(p for p in doc["config"]["tritonfleet:gpuPools"] if p["name"] == "b200")
    b200.update(enabled=True, capacity="mixed", spotShare=1)
    stack_file.write_text(yaml.safe_dump(doc))
    head = build_plan(tmp_path, "gcp-prod", with_policy=True)
    base = stock_plan("gcp-prod")
    base["policy"]["verdicts"] = []
    policy = compare_stack(base, head).policy
    assert policy.base_available and policy.head_available
    assert [v.policy for v in policy.new] == [v["policy"] for v in head["policy"]["verdicts"]] != []


# ---------------------------------------------------------------- datapath changes replace a GKE cluster


def _gke(datapath: str | None) -> dict:
    inputs = {"name": "tf-gcp-prod", "location": "us-central1"}
    if datapath:
        inputs["datapathProvider"] = datapath
    return resource("gcp:container/cluster:Cluster", "tf-gcp-gke", inputs, protect=True)


def _datapath_pair(environment: str, acknowledged: list[str] | None = None) -> tuple[dict, dict]:
    base, head = plan([_gke(None)], []), plan([_gke("ADVANCED_DATAPATH")], [])
    for document in (base, head):
        document["environment"] = environment
    if acknowledged is not None:
        head["acknowledged"] = acknowledged
    return base, head


def test_a_datapath_change_is_a_replacement_said_in_words():
    diff = compare_stack(*_datapath_pair("dev"))
    (flag,) = diff.flags
    assert flag.action == "replace" and flag.reasons == ("datapathProvider",)
    assert any("deletes the cluster, its node pools and every workload" in n for n in flag.notes)
    assert diff.refused == []  # dev: said, not refused
    assert "Dataplane V2" in report([diff])


def test_prod_refuses_a_datapath_replacement_without_the_acknowledgement(tmp_path):
    diff = compare_stack(*_datapath_pair("prod"))
    (refusal,) = diff.refused
    assert "cluster.acknowledgeDatapathReplacement" in refusal and "pulumi config set --path" in refusal
    assert "**refused in prod:**" in report([diff]) and diff.blocked
    assert compare_stack(*_datapath_pair("prod", ["cluster.acknowledgeDatapathReplacement"])).refused == []
    base, head = _datapath_pair("prod")
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    result = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"))
    assert result.returncode == 1 and "refused" in result.stderr and "acknowledgeDatapathReplacement" in result.stderr


def test_the_plan_lists_the_acknowledgements_its_config_sets():
    """The plan's `acknowledged` keys come from every cloud's prod acknowledgements, read from the stack's config."""
    from conftest import engine_config

    from tritonfleet.core.config import load_stack_config
    from tritonfleet.plan.document import acknowledged_keys

    raw = engine_config("gcp-prod")
    assert acknowledged_keys(load_stack_config(raw, "gcp-prod")) == []
    raw["tritonfleet:cluster"] = json.dumps({**json.loads(raw["tritonfleet:cluster"]), "acknowledgeDatapathReplacement": True})
    assert acknowledged_keys(load_stack_config(raw, "gcp-prod")) == ["cluster.acknowledgeDatapathReplacement"]
    assert acknowledged_keys(load_stack_config(engine_config("prod"), "prod")) == []
