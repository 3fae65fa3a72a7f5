"""The `tritonfleet` command: offline plans of the Pulumi program, with GPU inventory and monthly cost."""

from __future__ import annotations

import gc
import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from tritonfleet.core.config import ConfigError

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False)

EXIT_OK, EXIT_USER_ERROR, EXIT_POLICY_VIOLATION = 0, 1, 2


@app.callback()
def _group() -> None:
    """tritonfleet: plan, cost and govern GPU inference platforms for NVIDIA Triton on EKS and GKE."""


def _total(cost: dict, key: str) -> str:
    """A stack total; when a price is unknown, also the part that is priced (a lower bound, never a guess)."""
    if not isinstance(cost[key], str):
        return _usd(cost[key])
    priced = [p[key] for p in cost["pools"] if not isinstance(p[key], str)]
    return f"unknown (≥ {_usd(sum(priced))} priced)" if priced else "unknown"


def _usd(value) -> str:
    return value if isinstance(value, str) else f"${value:,.2f}"


def print_plan(plan: dict) -> None:
    summary = plan["summary"]
    out.print(
        f"[bold]tritonfleet plan[/bold] stack [bold]{plan['stack']}[/bold] "
        f"({plan['environment']}, {plan['cloud']} {plan['region']}): "
        f"{summary['resources']} resources in {summary['components']} components"
    )
    resources = Table(title="Resources by type")
    resources.add_column("type")
    resources.add_column("count", justify="right")
    for typ, count in summary["byType"].items():
        resources.add_row(typ, str(count))
    out.print(resources)

    cost = plan["cost"]
    gpus = Table(title=f"GPU pools and monthly cost ({cost['hoursPerMonth']} h/month, {cost['scope']})")
    for column in ("pool", "GPU", "type", "nodes (min..max)", "max GPUs", "$/node-hour", "monthly floor", "monthly ceiling"):
        gpus.add_column(column, justify="right" if column not in ("pool", "GPU", "type") else "left")
    for pool in cost["pools"]:
        nodes = ", ".join(f"{o} {r['min']}..{r['max']}" for o, r in pool["nodes"].items())
        prices = ", ".join(f"{o} {_usd(p['usdPerHour']) if isinstance(p, dict) else p}" for o, p in pool["prices"].items())
        gpus.add_row(
            pool["pool"],
            pool["gpu"],
            pool["instanceType"],
            nodes,
            str(pool["maxGpus"]),
            prices,
            _usd(pool["monthlyFloorUsd"]),
            _usd(pool["monthlyCeilingUsd"]),
        )
    gpus.add_row(
        "[bold]total[/bold]", "", "", "", str(cost["maxGpus"]), "", _total(cost, "monthlyFloorUsd"), _total(cost, "monthlyCeilingUsd")
    )
    out.print(gpus)
    budget = cost["budget"]
    out.print(f"Budget: {_usd(budget['monthlyUsd'])}/month on the {budget['basis']} basis; GPU limit {budget['gpuLimit']}.")
    for d in cost["deployments"]:
        per_million = d["usdPer1MInferences"]
        shown = (
            f"${per_million:,.4f} per 1M inferences at full utilisation"
            if not isinstance(per_million, str)
            else (
                "cost per 1M inferences: set throughputPerReplica"
                if per_million == "not given"
                else f"cost per 1M inferences {per_million}"
            )
        )
        out.print(f"Triton '{d['deployment']}' on pool {d['pool']}: {shown}")


def print_policy(section: dict) -> None:
    """The pack's verdicts, blocking first, with the enforcement level the engine would apply."""
    verdicts = section["verdicts"]
    if verdicts:
        table = Table(title=f"Policy verdicts (pack {section['pack']}, config {section['config']})")
        for column in ("policy", "enforcement", "severity", "resource", "message"):
            table.add_column(column, overflow="fold")
        for v in verdicts:
            resource = "/".join(v["urn"].split("::")[-2:]).rsplit("$", 1)[-1] if v["urn"] else "(stack)"
            level = f"[red]{v['enforcement']}[/red]" if v["enforcement"] == "mandatory" else v["enforcement"]
            table.add_row(v["policy"], level, v["severity"], resource, v["message"])
        out.print(table)
    out.print(f"Policies: {section['mandatory']} mandatory violation(s), {section['advisory']} advisory finding(s).")


def _policy_exit(section: dict) -> None:
    if section["directCallsAgree"] is False:
        err.print("[red]error:[/red] the policy pack over gRPC and direct calls to its policies disagree (a tritonfleet bug)")
        raise typer.Exit(EXIT_USER_ERROR)
    if section["mandatory"]:
        raise typer.Exit(EXIT_POLICY_VIOLATION)


def _without_cyclic_gc() -> None:
    """For a command that plans and exits: no cyclic garbage collection for the rest of this short process.

    The program under the SDK's mocks allocates millions of objects while the provider SDKs' modules are live, so the
    collector's full passes cost about a quarter of a plan; reference counting still frees nearly everything (a plan
    of 100 Triton deployments peaks about 4 % higher). benchmarks/cli_speed.py measures it."""
    gc.disable()


def _user_error(error: Exception) -> typer.Exit:
    err.print(f"[red]error:[/red] {error}", markup=True, soft_wrap=True)
    return typer.Exit(EXIT_USER_ERROR)


StackOption = Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")]
ProjectOption = Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")]
PolicyConfigOption = Annotated[
    Path | None, typer.Option("--policy-config", help="policy pack config (default: policies/config/<stack>.json)")
]


@app.command()
def plan(
    stack: StackOption,
    json_file: Annotated[Path | None, typer.Option("--json", help="write the plan document (deterministic JSON) here")] = None,
    project_dir: ProjectOption = None,
    policy_config: PolicyConfigOption = None,
) -> None:
    """Run the real program offline under the Pulumi mock runtime; print resources, GPUs, monthly cost and policy verdicts.

    Exit 2 when a mandatory policy is violated (the plan document is still written)."""
    _without_cyclic_gc()
    from tritonfleet.plan.document import build_plan, dumps
    from tritonfleet.plan.harness import PlanError
    from tritonfleet.plan.project import ProjectError, find_project
    from tritonfleet.policycheck.engine import PackError
    from tritonfleet.policycheck.pack_config import PackConfigError

    try:
        directory = project_dir or find_project(Path.cwd())
        document = build_plan(directory, stack, with_policy=True, policy_config=policy_config)
    except (ConfigError, ProjectError, PlanError, PackConfigError, PackError) as error:
        raise _user_error(error) from None
    print_plan(document)
    print_policy(document["policy"])
    if json_file:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(dumps(document))
        out.print(f"Plan document written to {json_file}")
    _policy_exit(document["policy"])


policy_app = typer.Typer(add_completion=False, help="Run the policy pack offline, as `pulumi preview --policy-pack` would.")
app.add_typer(policy_app, name="policy")


def _policy_check(stack: str, plan_file: Path | None, project_dir: Path | None, policy_config: Path | None) -> None:
    _without_cyclic_gc()
    import json

    from tritonfleet.plan.harness import PlanError
    from tritonfleet.plan.project import ProjectError, find_project
    from tritonfleet.policycheck.check import check
    from tritonfleet.policycheck.engine import PackError
    from tritonfleet.policycheck.pack_config import PackConfigError
    from tritonfleet.policycheck.saved_plan import plan_for_check

    try:
        directory = project_dir or find_project(Path.cwd())
        if plan_file:
            document = json.loads(plan_file.read_text())
            if document.get("stack") != stack:
                raise ProjectError(f"{plan_file} is a plan of stack '{document.get('stack')}', not '{stack}'")
            note = f"checking {plan_file}"
        else:
            checked = plan_for_check(directory, stack)
            document, note = checked.document, checked.note
        section = check(directory, document, policy_config).section()
    except (OSError, json.JSONDecodeError, ConfigError, ProjectError, PlanError, PackConfigError, PackError) as error:
        raise _user_error(error) from None
    out.print(f"[bold]tritonfleet policy check[/bold] stack [bold]{stack}[/bold]")
    out.print(note, markup=False)
    print_policy(section)
    _policy_exit(section)


PlanFileOption = Annotated[Path | None, typer.Option("--plan", help="a plan document (tritonfleet plan --json) to check instead")]


@policy_app.callback(invoke_without_command=True)
def policy(
    ctx: typer.Context,
    stack: Annotated[str | None, typer.Option("--stack", "-s", help="stack name (same as `policy check --stack`)")] = None,
    plan_file: PlanFileOption = None,
    project_dir: ProjectOption = None,
    policy_config: PolicyConfigOption = None,
) -> None:
    """`tritonfleet policy --stack NAME` is `tritonfleet policy check --stack NAME`."""
    if ctx.invoked_subcommand is None:
        if stack is None:
            raise _user_error(ValueError("give --stack NAME (or use `tritonfleet policy check --stack NAME`)"))
        _policy_check(stack, plan_file, project_dir, policy_config)


@policy_app.command("check")
def policy_check(
    stack: StackOption,
    plan_file: PlanFileOption = None,
    project_dir: ProjectOption = None,
    policy_config: PolicyConfigOption = None,
) -> None:
    """Start the policy pack, feed it the stack's offline plan over the Analyzer gRPC protocol, print the verdicts.

    Exit 2 when a mandatory policy is violated; exit 1 for a bad stack, plan or policy config."""
    _policy_check(stack, plan_file, project_dir, policy_config)


class DiffFormat(StrEnum):
    markdown = "markdown"
    json = "json"


@app.command()
def diff(
    base: Annotated[Path | None, typer.Argument(help="base plan document (or a folder of them)", show_default=False)] = None,
    head: Annotated[Path | None, typer.Argument(help="head plan document (or a folder of them)", show_default=False)] = None,
    base_ref: Annotated[
        str | None, typer.Option("--base-ref", help="plan every stack at this git ref and in the working tree, then diff")
    ] = None,
    stacks: Annotated[list[str] | None, typer.Option("--stack", "-s", help="only this stack (repeatable)")] = None,
    output_format: Annotated[DiffFormat, typer.Option("--format", help="markdown (PR comment) or json")] = DiffFormat.markdown,
    comments_dir: Annotated[
        Path | None, typer.Option(help="also write one comment per stack to DIR/<stack>.md, each under the size limit")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write the report here instead of stdout")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="also write the JSON diff here (any --format)")] = None,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
    jobs: Annotated[int, typer.Option(help="stacks planned at once with --base-ref")] = 2,
) -> None:
    """Diff plans for a pull request: resources, replacements, GPUs, monthly cost and policy verdicts per stack.

    Exit status: 0 report written; 1 bad input (missing file, not a plan document, unknown ref or stack)
    or a stack that could not be planned (the report still shows why).
    """
    from rich.markup import escape

    from tritonfleet.diff import DiffInputError, compare_plans, error_stack, report, stack_comment, to_json
    from tritonfleet.diff.documents import plans_from_paths
    from tritonfleet.diff.render import safe_name
    from tritonfleet.plan.project import ProjectError, find_project

    try:
        if base_ref is not None:
            if base or head:
                raise DiffInputError("give either BASE HEAD plan documents or --base-ref, not both")
            from tritonfleet.diff.base_ref import plans_at_ref

            base_plans, head_plans, errors = plans_at_ref(project_dir or find_project(Path.cwd()), base_ref, stacks, jobs)
        else:
            if not (base and head):
                raise DiffInputError("give BASE and HEAD plan documents (files or folders), or --base-ref REF")
            (base_plans, head_plans), errors = plans_from_paths(base, head, stacks), {}
    except (DiffInputError, ProjectError) as error:
        err.print(f"[red]error:[/red] {escape(str(error))}", markup=True, soft_wrap=True)
        raise typer.Exit(EXIT_USER_ERROR) from None

    planned = compare_plans(base_plans, head_plans)
    diffs = sorted([d for d in planned if d.stack not in errors] + [error_stack(s, e) for s, e in errors.items()], key=lambda d: d.stack)
    as_json = json.dumps(to_json(diffs), indent=2, sort_keys=True) + "\n"
    rendered = as_json if output_format is DiffFormat.json else report(diffs)
    if json_file:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(as_json)
    if comments_dir:
        comments_dir.mkdir(parents=True, exist_ok=True)
        for d in diffs:
            (comments_dir / f"{safe_name(d.stack)}.md").write_text(stack_comment(d))
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(rendered)
    else:
        sys.stdout.write(rendered)
    if errors:
        err.print(f"[red]error:[/red] could not plan {', '.join(sorted(errors))}; the report says why", markup=True)
        raise typer.Exit(EXIT_USER_ERROR)


@app.command()
def preflight(
    stack: Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")],
    json_file: Annotated[Path | None, typer.Option("--json", help="write the findings (JSON) here, for CI")] = None,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Before `pulumi up`: check with the AWS APIs that the stack's instance types are offered in its zones, that
    the EC2 GPU vCPU quotas cover its ceiling, and show current spot prices. Exit 1 on any blocker."""
    import json

    from botocore.exceptions import BotoCoreError, ClientError

    from tritonfleet.core.config import load_stack_config
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        project = load_project(project_dir or find_project(Path.cwd()))
        raw, _ = stack_config(project, stack)
        config = load_stack_config(raw, stack)
    except (ConfigError, ProjectError) as error:
        err.print(f"[red]error:[/red] {error}", markup=True, soft_wrap=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    if config.cloud != "aws":
        err.print(f"[red]error:[/red] preflight checks AWS stacks; stack '{stack}' is on {config.cloud}", markup=True)
        raise typer.Exit(EXIT_USER_ERROR)

    from tritonfleet.clouds.aws.preflight import BLOCKER, aws_clients, run_preflight

    try:
        report = run_preflight(config, *aws_clients(config.region))
    except (ClientError, BotoCoreError) as error:
        err.print(f"[red]error:[/red] the AWS API did not answer the preflight: {error}", markup=True, soft_wrap=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    table = Table(title=f"Preflight for stack {stack} ({config.region}; zones {', '.join(report.zones)})")
    for column in ("check", "subject", "status", "detail"):
        table.add_column(column)
    colour = {"ok": "green", "warning": "yellow", "unknown": "yellow", BLOCKER: "red"}
    for f in report.findings:
        table.add_row(f.check, f.subject, f"[{colour[f.status]}]{f.status}[/{colour[f.status]}]", f.detail)
    out.print(table)
    if json_file:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(json.dumps(report.document(), indent=2, sort_keys=True, default=str) + "\n")
    if report.blockers:
        err.print(f"[red]{len(report.blockers)} blocker(s)[/red]: fix them before `pulumi up`.", markup=True)
        raise typer.Exit(EXIT_USER_ERROR)
    unknown = sum(1 for f in report.findings if f.status == "unknown")
    out.print("No blockers." + (f" {unknown} check(s) could not be answered (unknown, see above)." if unknown else ""))


models_app = typer.Typer(no_args_is_help=True, help="Check Triton model repositories and publish them to a stack's bucket.")
app.add_typer(models_app, name="models")


def _validated(directory: Path, consequence: str = ""):
    """Validate a repository, print its findings, and exit 1 on any error."""
    from tritonfleet.models.validate import validate_repository

    report = validate_repository(directory)
    for finding in report.findings:
        colour = "red" if finding.severity == "error" else "yellow"
        err.print(f"[{colour}]{finding.severity}:[/{colour}] {finding.path}: {finding.message}", markup=True, soft_wrap=True)
    if not report.ok:
        err.print(f"{len(report.errors)} error(s) in {directory}{consequence}", soft_wrap=True)
        raise typer.Exit(EXIT_USER_ERROR)
    return report


@models_app.command("validate")
def models_validate(directory: Annotated[Path, typer.Argument(help="the model repository folder")]) -> None:
    """Check a Triton model repository the way Triton reads it; exit 1 on any error."""
    report = _validated(directory)
    versions = ", ".join(f"{m.name} {m.served_versions}" for m in report.models)
    out.print(f"{directory}: {len(report.models)} model(s) OK ({versions})")


@models_app.command("sync")
def models_sync(
    directory: Annotated[Path, typer.Argument(help="the model repository folder")],
    stack: Annotated[str | None, typer.Option("--stack", "-s", help="publish to this stack's model bucket")] = None,
    bucket: Annotated[str | None, typer.Option("--bucket", help=r"s3://BUCKET\[/PREFIX] or gs://BUCKET\[/PREFIX]")] = None,
    prefix: Annotated[str, typer.Option(help="folder inside the bucket (added after the URI's or deployment's prefix)")] = "",
    deployment: Annotated[str | None, typer.Option(help="with --stack: this Triton deployment's bucket and prefix")] = None,
    model_bucket: Annotated[str | None, typer.Option(help="with --stack: the modelBuckets[].name (default: the first)")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print what would change; upload nothing")] = False,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Validate, then upload only what changed, publishing each model's config.pbtxt last (see docs/models.md)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from tritonfleet.models.stack import TargetError, stack_repository
    from tritonfleet.models.storage import RepositoryUri, StoreError, open_store
    from tritonfleet.models.sync import SyncError, execute, plan_sync
    from tritonfleet.plan.project import ProjectError, find_project

    if (stack is None) == (bucket is None):
        err.print("[red]error:[/red] give exactly one of --stack NAME or --bucket URI", markup=True)
        raise typer.Exit(EXIT_USER_ERROR)
    if stack is None and (deployment or model_bucket):
        err.print("[red]error:[/red] --deployment and --model-bucket need --stack", markup=True)
        raise typer.Exit(EXIT_USER_ERROR)
    report = _validated(directory, "; nothing was published.")
    try:
        if stack is not None:
            uri = stack_repository(project_dir or find_project(Path.cwd()), stack, bucket=model_bucket, deployment=deployment,
                                   prefix=prefix)
        else:
            uri = RepositoryUri.parse(bucket or "", prefix)
        store = open_store(uri)
        store.check()
        plan = plan_sync(report, store)
    except (ConfigError, ProjectError, TargetError, StoreError, SyncError) as error:
        err.print(f"[red]error:[/red] {error}\nNothing was published.", markup=True, soft_wrap=True)
        raise typer.Exit(EXIT_USER_ERROR) from None

    for model in plan.models:
        before = "unpublished" if model.served_before is None else f"serves {model.served_before}"
        change = f"{len(model.uploads)} upload(s), {model.unchanged} unchanged" if model.uploads else "up to date"
        out.print(f"{model.model}: {change}; {before} -> serves {model.served_after}")
        for upload in model.uploads:
            out.print(f"  {upload.reason:8} {upload.relative} ({upload.size} bytes)")
    for name in plan.remote_only:
        out.print(f"{name}: in the bucket but not in {directory}; left as it is")
    if dry_run:
        out.print(f"Dry run: {len(plan.uploads)} file(s), {plan.total_bytes} bytes would be uploaded to {uri}")
        return
    if not plan.uploads:
        out.print(f"{uri} is up to date.")
        return
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    try:
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task("uploading", total=plan.total_bytes)
            published = execute(
                plan,
                store,
                progress=lambda sent: bar.advance(task, sent),
                on_file=lambda upload: bar.update(task, description=upload.relative),
            )
    except SyncError as error:
        err.print(f"[red]error:[/red] {error}", markup=True, soft_wrap=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    except KeyboardInterrupt:
        err.print("interrupted: models whose config.pbtxt was not uploaded are unchanged for Triton; run again to resume")
        raise typer.Exit(130) from None
    out.print(f"Published {', '.join(published)} to {uri} (Triton: --model-repository={uri})")


def main() -> None:
    """Run the command and leave without interpreter teardown: the mock runtime's event loop and gRPC channels can
    print shutdown noise (a traceback) when garbage-collected at exit, after the command has already finished."""
    code = 0
    try:
        app()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
