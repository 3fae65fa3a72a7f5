"""The `tritonfleet` command: offline plans of the Pulumi program, with GPU inventory and monthly cost."""

from __future__ import annotations

import gc
import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.exceptions import TyperException

from tritonfleet import sizing_cli
from tritonfleet.cli_args import repeated_options
from tritonfleet.core.config import ConfigError
from tritonfleet.exit_codes import EXIT_CODES_HELP, EXIT_OK, EXIT_POLICY_VIOLATION, EXIT_USAGE, EXIT_USER_ERROR
from tritonfleet.models.control import DEADLINE_SECONDS
from tritonfleet.output_paths import OutputError, check_output_file, check_output_folder, make_output_folder, write_output
from tritonfleet.terminal import print_labelled

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,  # conventional help (Click's): metavars only where a value is taken, text re-wrapped
    no_args_is_help=True,
    help=f"{__doc__}\n\n{EXIT_CODES_HELP}",
    context_settings={"help_option_names": ["-h", "--help"]},
)
# Width: $COLUMNS, else the terminal's, else 80 (a pipe or a CI log); the plan summary and tables are laid out to fit
# it, messages are wrapped between words (tritonfleet.terminal), and anything else Rich wraps to it.
# No markup anywhere: config values, paths and messages may hold [brackets]; styles come as rich.text.Text.
out = Console(highlight=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)

CLICK_USAGE_EXIT = 2


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            shown = version("tritonfleet")
        except PackageNotFoundError:  # run from a checkout that was never pip-installed
            shown = "(not installed: see pyproject.toml)"
        out.print(f"tritonfleet {shown}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _group(
    _: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """tritonfleet: plan, cost and govern GPU inference platforms for NVIDIA Triton on EKS and GKE."""


def show(lines) -> None:
    """Lines from tritonfleet.plan.text, printed as plain text (never markup) in their own layout."""
    for line in lines:
        out.print(Text(line.text, style=line.style))


def error_message(message: object) -> None:
    """'error: MESSAGE' on stderr, wrapped to the terminal; the message as it is (values may hold [brackets])."""
    print_labelled(err, "error:", "red", message)


def print_plan(plan: dict, resources: bool = False) -> None:
    from tritonfleet.core.startup import budget_lines
    from tritonfleet.plan.text import plan_lines

    show(plan_lines(plan, out.width, resources=resources))
    monitoring = plan.get("monitoring", {})
    if monitoring.get("enabled"):
        out.print(
            f"Prometheus: ~{monitoring['estimatedSeries']:,} series at the ceiling, memory "
            f"{monitoring['prometheusMemoryRequestMi']}Mi (limit {monitoring['prometheusMemoryLimitMi']}Mi)"
        )
        out.print(f"  retention needs ~{monitoring['diskNeededGi']} of {monitoring['retentionSizeGi']} GiB retentionSize")
    for d in plan.get("disruption", {}).get("deployments", []):
        ceiling = d["ceiling"]
        out.print(f"Triton '{d['deployment']}': PDB maxUnavailable {d['pdbMaxUnavailable']}")
        out.print(
            f"  at {ceiling['replicas']} replicas a spot reclaim costs {ceiling['lost_per_spot_node']}, "
            f"all spot {ceiling['replicas'] - ceiling['left_without_spot']}"
        )
    for budget in plan.get("startup", {}).get("deployments", []):
        for line in budget_lines(budget):
            out.print(line)
    sections = ("disruption", "startup")
    for warning in monitoring.get("warnings", []) + [w for s in sections for w in plan.get(s, {}).get("warnings", [])]:
        print_labelled(err, "warning:", "yellow", warning)


def print_policy(section: dict) -> None:
    """The pack's verdicts, blocking first, with the enforcement level the engine would apply."""
    from tritonfleet.plan.text import policy_lines

    show(policy_lines(section, out.width))


def _policy_exit(section: dict) -> None:
    if section["directCallsAgree"] is False:
        error_message("the policy pack over gRPC and direct calls to its policies disagree (a tritonfleet bug)")
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
    error_message(error)
    return typer.Exit(EXIT_USER_ERROR)


def _write(path: Path, text: str) -> None:
    """Write an output file, or exit 1 saying why it cannot be written."""
    try:
        write_output(path, text)
    except OutputError as error:
        raise _user_error(error) from None


StackOption = Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")]
ProjectOption = Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")]
PolicyConfigOption = Annotated[
    Path | None, typer.Option("--policy-config", help="policy pack config (default: policies/config/<stack>.json)")
]


@app.command(short_help="plan a stack offline: GPUs, monthly cost, policy verdicts")
def plan(
    stack: StackOption,
    json_file: Annotated[Path | None, typer.Option("--json", help="write the plan document (deterministic JSON) here")] = None,
    project_dir: ProjectOption = None,
    policy_config: PolicyConfigOption = None,
    resources: Annotated[bool, typer.Option("--resources", help="also list the resources by type")] = False,
) -> None:
    """Run the real program offline under the Pulumi mock runtime; print GPU pools, monthly cost and policy verdicts.

    Exit 2 when a mandatory policy is violated (the plan document is still written)."""
    _without_cyclic_gc()
    from tritonfleet.plan.document import PlanDocumentError, build_plan, dumps
    from tritonfleet.plan.harness import PlanError
    from tritonfleet.plan.project import ProjectError, find_project
    from tritonfleet.policycheck.engine import PackError
    from tritonfleet.policycheck.pack_config import PackConfigError

    try:
        if json_file:
            check_output_file(json_file)  # before the plan, not after it
        directory = project_dir or find_project(Path.cwd())
        document = build_plan(directory, stack, with_policy=True, policy_config=policy_config)
        text = dumps(document) if json_file else ""
    except (ConfigError, ProjectError, PlanError, PackConfigError, PackError, PlanDocumentError, OutputError) as error:
        raise _user_error(error) from None
    print_plan(document, resources=resources)
    out.print()
    print_policy(document["policy"])
    if json_file:
        from tritonfleet.policycheck.saved_plan import seal_plan

        _write(json_file, text)
        seal_plan(json_file)
        out.print(Text(f"Plan document written to {json_file}"))
    _policy_exit(document["policy"])


policy_app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,
    help="Run the policy pack offline, as `pulumi preview --policy-pack` would.",
    short_help="run the policy pack offline (check, init)",
)
app.add_typer(policy_app, name="policy")


def _policy_check(stack: str, plan_file: Path | None, project_dir: Path | None, policy_config: Path | None) -> None:
    _without_cyclic_gc()
    import json

    from tritonfleet.diff.documents import DiffInputError
    from tritonfleet.plan.harness import PlanError
    from tritonfleet.plan.project import ProjectError, find_project
    from tritonfleet.policycheck.check import check
    from tritonfleet.policycheck.engine import PackError
    from tritonfleet.policycheck.pack_config import PackConfigError
    from tritonfleet.policycheck.saved_plan import plan_for_check, plan_from_file

    try:
        directory = project_dir or find_project(Path.cwd())
        if plan_file:
            document, note = plan_from_file(plan_file, stack), f"checking {plan_file}"
        else:
            checked = plan_for_check(directory, stack)
            document, note = checked.document, checked.note
        section = check(directory, document, policy_config).section()
    except (OSError, json.JSONDecodeError, DiffInputError, ConfigError, ProjectError, PlanError, PackConfigError, PackError) as error:
        raise _user_error(error) from None
    out.print(Text(f"tritonfleet policy check: stack {stack}", style="bold"))
    out.print(Text(note))
    print_policy(section)
    if section["directCallsAgree"] is not None:
        agreed = "agree" if section["directCallsAgree"] else "DISAGREE"
        out.print(Text(f"The pack over gRPC and direct calls to its {section['policiesRun']} policies {agreed}."))
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
            error_message("give --stack NAME (or use `tritonfleet policy check --stack NAME`)")
            raise typer.Exit(EXIT_USAGE)
        _policy_check(stack, plan_file, project_dir, policy_config)


@policy_app.command("check", short_help="run the policy pack on a stack's offline plan")
def policy_check(
    stack: StackOption,
    plan_file: PlanFileOption = None,
    project_dir: ProjectOption = None,
    policy_config: PolicyConfigOption = None,
) -> None:
    """Start the policy pack, feed it the stack's offline plan over the Analyzer gRPC protocol, print the verdicts.

    Exit 2 when a mandatory policy is violated; exit 1 for a bad stack, plan or policy config."""
    _policy_check(stack, plan_file, project_dir, policy_config)


@policy_app.command("init", short_help="write policies/config/STACK.json for a new stack")
def policy_init(
    stack: StackOption,
    like: Annotated[
        str | None, typer.Option(help="copy enforcement levels from this stack's policy config (default: the closest stack)")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite an existing policy config")] = False,
    project_dir: ProjectOption = None,
) -> None:
    """Write policies/config/STACK.json for a new stack: budget, GPU limit and instance types from its stack file,
    enforcement levels from the closest existing stack (same cloud and environment)."""
    from tritonfleet.plan.project import ProjectError, find_project
    from tritonfleet.plan.text import usd
    from tritonfleet.policycheck.check import config_path
    from tritonfleet.policycheck.new_config import derive, write
    from tritonfleet.policycheck.pack_config import PackConfigError

    try:
        directory = project_dir or find_project(Path.cwd())
        path = config_path(directory, stack)
        if path.exists() and not force:
            raise ProjectError(f"{path} exists already; edit it, or give --force to write it anew")
        made = derive(directory, stack, like)
    except (ConfigError, ProjectError, PackConfigError) as error:
        raise _user_error(error) from None
    write(path, made.document)
    budget = made.document["cost-stack-enforce-monthly-budget"]
    lines = [
        f"Wrote {path}:",
        f"  budget {usd(budget['monthlyUsd'])}/month on the {budget['basis']} basis and GPU limit "
        f"{made.document['gpu-stack-limit-total-gpus']['maxGpus']}, from the stack file",
        f"  enforcement levels as in policies/config/{made.template}.json",
    ]
    if made.added_types:
        lines.append(f"  allowed instance types: also {', '.join(made.added_types)} (the stack's pools use them)")
    lines.append(f"Review it, then: tritonfleet plan --stack {stack}")
    for line in lines:
        out.print(Text(line))


class DiffFormat(StrEnum):
    markdown = "markdown"
    json = "json"


@app.command(short_help="diff plans for a pull request (one comment)")
def diff(
    base: Annotated[Path | None, typer.Argument(help="base plan document (or a folder of them)", show_default=False)] = None,
    head: Annotated[Path | None, typer.Argument(help="head plan document (or a folder of them)", show_default=False)] = None,
    base_ref: Annotated[
        str | None, typer.Option("--base-ref", help="plan every stack at this git ref and in the working tree, then diff")
    ] = None,
    stacks: Annotated[
        list[str] | None, typer.Option("--stack", "-s", metavar="STACK", help="only this stack (repeatable)")
    ] = None,
    output_format: Annotated[DiffFormat, typer.Option("--format", help="markdown (PR comment) or json")] = DiffFormat.markdown,
    comments_dir: Annotated[
        Path | None,
        typer.Option(help="also write the pull-request comment to DIR/plan-diff.md (under the size limit)", show_default=False),
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write the report here instead of stdout")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="also write the JSON diff here (any --format)")] = None,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
    jobs: Annotated[int, typer.Option(help="stacks planned at once with --base-ref")] = 2,
) -> None:
    """Diff plans for a pull request: one comment with a headline per changed stack (blocked or not, cost,
    budget use, GPUs), blocking items in full, then resources, pools and policy verdicts.

    Exit status: 0 report written; 1 bad input (missing file, not a plan document, unknown ref or stack), a
    stack that could not be planned, or a replacement prod refuses without an acknowledgement; 2 the head adds
    a mandatory policy violation; 64 neither BASE HEAD nor --base-ref given, or both. The report is written in
    every case but bad input and usage errors.
    """
    from tritonfleet.diff import COMMENT_NAME, DiffInputError, compare_plans, error_stack, report, to_json
    from tritonfleet.diff.documents import plans_from_paths
    from tritonfleet.plan.project import ProjectError, find_project

    if (base_ref is not None and (base or head)) or (base_ref is None and not (base and head)):
        # Arguments missing or given both ways: a usage error, as Click's own are (exit 64)
        error_message("give BASE and HEAD plan documents (files or folders), or --base-ref REF, not both")
        raise typer.Exit(EXIT_USAGE)
    try:
        for path in (json_file, output):
            if path is not None:
                check_output_file(path)
        if comments_dir is not None:
            check_output_folder(comments_dir)
        if base_ref is not None:
            from tritonfleet.diff.base_ref import plans_at_ref

            base_plans, head_plans, errors = plans_at_ref(
                project_dir or find_project(Path.cwd()), base_ref, stacks, jobs, progress=lambda line: err.print(Text(line))
            )
        else:
            (base_plans, head_plans), errors = plans_from_paths(base, head, stacks), {}
    except (DiffInputError, ProjectError, OutputError) as error:
        raise _user_error(error) from None

    planned = compare_plans(base_plans, head_plans)
    diffs = sorted([d for d in planned if d.stack not in errors] + [error_stack(s, e) for s, e in errors.items()], key=lambda d: d.stack)
    as_json = json.dumps(to_json(diffs), indent=2, sort_keys=True) + "\n"
    rendered = as_json if output_format is DiffFormat.json else report(diffs)
    if json_file:
        _write(json_file, as_json)
    if comments_dir:
        try:
            make_output_folder(comments_dir)
        except OutputError as error:
            raise _user_error(error) from None
        _write(comments_dir / f"{COMMENT_NAME}.md", rendered if output_format is DiffFormat.markdown else report(diffs))
    if output:
        _write(output, rendered)
    else:
        sys.stdout.write(rendered)
    if errors:
        error_message(f"could not plan {', '.join(sorted(errors))}; the report says why")
        raise typer.Exit(EXIT_USER_ERROR)
    added = [(d.stack, v) for d in diffs for v in d.added_mandatory]
    for stack, verdict in added:
        print_labelled(err, "mandatory:", "red", f"{stack}: {verdict.policy}: {verdict.message}")
    refused = [f"{d.stack}: {r}" for d in diffs for r in d.refused]
    for line in refused:
        print_labelled(err, "refused:", "red", line)
    if added:
        raise typer.Exit(EXIT_POLICY_VIOLATION)
    if refused:
        raise typer.Exit(EXIT_USER_ERROR)


@app.command(short_help="check quotas, zones and capacity with the cloud's APIs")
def preflight(
    stack: Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")],
    json_file: Annotated[Path | None, typer.Option("--json", help="write the findings (JSON) here, for CI")] = None,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Before `pulumi up`: check with the cloud's APIs that the stack's instance/machine types (and GCP accelerators)
    are offered in its zones and that the GPU quotas cover its ceiling; AWS also shows current spot prices, GCP checks
    the pools' reservations. Exit 1 on any blocker."""
    import json
    import warnings

    from tritonfleet.core.cloud import PreflightError, cloud
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.core.preflight import BLOCKER, PREFLIGHT_DEADLINE_S
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        if json_file:
            check_output_file(json_file)
        project = load_project(project_dir or find_project(Path.cwd()))
        raw, _ = stack_config(project, stack)
        config = load_stack_config(raw, stack)
    except (ConfigError, ProjectError, OutputError) as error:
        raise _user_error(error) from None
    # google.api_core warns about Python versions on import: not the user's business here.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"google\.")
    try:
        report = cloud(config.cloud).preflight(config, PREFLIGHT_DEADLINE_S)
    except PreflightError as error:
        error_message(str(error))
        raise typer.Exit(EXIT_USER_ERROR) from None
    table = Table(title=f"Preflight for stack {stack} ({config.region}; zones {', '.join(report.zones)})")
    for column in ("check", "subject", "status", "detail"):
        table.add_column(column)
    colour = {"ok": "green", "warning": "yellow", "unknown": "yellow", BLOCKER: "red"}
    for f in report.findings:
        table.add_row(f.check, f.subject, Text(f.status, style=colour[f.status]), f.detail)
    out.print(table)
    if json_file:
        _write(json_file, json.dumps(report.document(), indent=2, sort_keys=True, default=str) + "\n")
    if report.blockers:
        err.print(Text.assemble((f"{len(report.blockers)} blocker(s)", "red"), ": fix them before `pulumi up`."))
        raise typer.Exit(EXIT_USER_ERROR)
    unknown = sum(1 for f in report.findings if f.status == "unknown")
    out.print("No blockers." + (f" {unknown} check(s) could not be answered (unknown, see above)." if unknown else ""))


models_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Check Triton model repositories and publish them to a stack's bucket.",
    short_help="check model repositories, publish them, load models",
)
app.add_typer(models_app, name="models")


cost_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Compare a stack's plan with what the cloud billed.",
    short_help="compare the plan with the invoice (actual)",
)
app.add_typer(cost_app, name="cost")


@cost_app.command("actual", short_help="a month of a FOCUS billing export against the plan, per line")
def cost_actual(
    stack: StackOption,
    month: Annotated[str, typer.Option("--month", help="the month to compare, YYYY-MM")],
    export: Annotated[Path, typer.Option("--export", help="a FOCUS 1.0 or 1.2 billing export: CSV (.csv, .csv.gz) or Parquet")],
    project_dir: ProjectOption = None,
) -> None:
    """Match the month's rows of a FOCUS export to the stack's pools and lines by the tags tritonfleet sets; print
    actual against the plan's floor, expected and ceiling, the drift and its likely causes, and the untagged rows."""
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.cost_actual import ExportError, actual_report, report_lines
    from tritonfleet.plan.document import cost_section
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        raw, _ = stack_config(load_project(project_dir or find_project(Path.cwd())), stack)
        config = load_stack_config(raw, stack)
        report = actual_report(config, cost_section(config), export, month)
    except (ConfigError, ProjectError, ExportError) as error:
        raise _user_error(error) from None
    for line in report_lines(report, out.width):
        out.print(Text(line))


def _validated(directory: Path, consequence: str = "", replica: Any = None):
    """Validate a repository (against a deployment's replica when given), print its findings, exit 1 on any error."""
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.validate import validate_repository

    report = validate_repository(directory, replica)
    for finding in report.findings:
        colour = "red" if finding.severity == "error" else "yellow"
        print_labelled(err, f"{finding.severity}:", colour, printable(f"{finding.path}: {finding.message}"))
    if not report.ok:
        err.print(f"{len(report.errors)} error(s) in {printable(str(directory))}{consequence}")
        raise typer.Exit(EXIT_USER_ERROR)
    return report


def _escaped_lines(error: Exception) -> str:
    """An error's lines with what does not print escaped: store answers and object keys come from outside."""
    from tritonfleet.core.config.problems import printable

    return "\n".join(printable(line) for line in str(error).split("\n"))


def _check_declared(stack: str, deployment: str, available: set[str], project_dir: Path | None, consequence: str) -> None:
    """Exit 1 when the deployment's requiredModels/loadModels name a model the repository does not have."""
    from tritonfleet.models.stack import TargetError, declared_models, missing_models
    from tritonfleet.plan.project import ProjectError, find_project

    try:
        declared = declared_models(project_dir or find_project(Path.cwd()), stack, deployment)
    except (ConfigError, ProjectError, TargetError) as error:
        raise _user_error(error) from None
    problems = missing_models(declared, available, stack)
    for problem in problems:
        error_message(f"{problem}")
    if problems:
        err.print(f"{len(problems)} declared model(s) missing{consequence}")
        raise typer.Exit(EXIT_USER_ERROR)


def _check_llm_layout(report, stack: str, deployment: str, project_dir: Path | None) -> None:
    """Exit 1 when the repository does not serve the deployment's LLM as its `llm` declares (models/llm_layout.py)."""
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.llm_layout import check_llm_layout, stack_deployment
    from tritonfleet.plan.project import find_project

    found = stack_deployment(project_dir or find_project(Path.cwd()), stack, deployment)
    findings = check_llm_layout(report, found) if found is not None else []
    for finding in findings:
        colour = "red" if finding.severity == "error" else "yellow"
        print_labelled(err, f"{finding.severity}:", colour, printable(f"{finding.path}: {finding.message}"))
    errors = sum(f.severity == "error" for f in findings)
    if errors:
        err.print(f"{errors} error(s): the repository does not serve deployment '{deployment}' as its llm declares")
        raise typer.Exit(EXIT_USER_ERROR)


@models_app.command("validate", short_help="check a model repository the way Triton reads it")
def models_validate(
    directory: Annotated[Path, typer.Argument(help="the model repository folder")],
    stack: Annotated[str | None, typer.Option("--stack", "-s", help="with --deployment: check its declared models too")] = None,
    deployment: Annotated[str | None, typer.Option(help="with --stack: its requiredModels/loadModels must be here")] = None,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Check a Triton model repository the way Triton reads it; exit 1 on any error, 64 for --stack without
    --deployment or the other way round. With --stack and --deployment,
    instance groups' GPU ids are checked against the deployment's gpusPerReplica too."""
    from tritonfleet.core.config.problems import printable

    if (stack is None) != (deployment is None):
        error_message("--stack and --deployment go together")
        raise typer.Exit(EXIT_USAGE)
    replica = None
    if stack is not None and deployment is not None:
        from tritonfleet.core.catalog import load_catalog
        from tritonfleet.models.validate import Replica

        config, found = _deployment(stack, deployment, project_dir)
        gpu = config.pool(found.pool).gpu
        replica = Replica(found.gpus_per_replica, gpu, load_catalog().gpus[gpu].compute_capability)
    report = _validated(directory, replica=replica)
    if stack is not None and deployment is not None:
        _check_declared(stack, deployment, {m.name for m in report.models}, project_dir, ".")
        _check_llm_layout(report, stack, deployment, project_dir)
    versions = ", ".join(f"{m.name} {m.served_versions}" for m in report.models)
    out.print(f"{printable(str(directory))}: {len(report.models)} model(s) OK ({versions})")


@models_app.command("sync", short_help="validate, then upload what changed to the bucket")
def models_sync(
    directory: Annotated[Path, typer.Argument(help="the model repository folder")],
    stack: Annotated[str | None, typer.Option("--stack", "-s", help="publish to this stack's model bucket")] = None,
    bucket: Annotated[str | None, typer.Option("--bucket", help="s3://BUCKET[/PREFIX] or gs://BUCKET[/PREFIX]")] = None,
    prefix: Annotated[str, typer.Option(help="folder inside the bucket (added after the URI's or deployment's prefix)")] = "",
    deployment: Annotated[str | None, typer.Option(help="with --stack: this Triton deployment's bucket and prefix")] = None,
    model_bucket: Annotated[str | None, typer.Option(help="with --stack: the modelBuckets[].name (default: the first)")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print what would change; upload nothing")] = False,
    live: Annotated[
        bool,
        typer.Option(
            "--live/--no-live",
            help="--no-live: upload new versions without switching a published model's config.pbtxt to them "
            "(Triton keeps serving what it serves; a modelVersions pin and its rollout make them live)",
        ),
    ] = True,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Validate, then upload only what changed, publishing each model's config.pbtxt last (see docs/models.md)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from tritonfleet.core.config.problems import printable
    from tritonfleet.core.object_store import RepositoryUri, StoreError, open_store
    from tritonfleet.models.stack import TargetError, stack_repository
    from tritonfleet.models.sync import SyncError, execute, plan_sync
    from tritonfleet.plan.project import ProjectError, find_project

    if (stack is None) == (bucket is None):
        error_message("give exactly one of --stack NAME or --bucket URI")
        raise typer.Exit(EXIT_USAGE)
    if stack is None and (deployment or model_bucket):
        error_message("--deployment and --model-bucket need --stack")
        raise typer.Exit(EXIT_USAGE)
    report = _validated(directory, "; nothing was published.")
    try:
        if stack is not None:
            uri = stack_repository(project_dir or find_project(Path.cwd()), stack, bucket=model_bucket, deployment=deployment,
                                   prefix=prefix)
        else:
            uri = RepositoryUri.parse(bucket or "", prefix)
        pins, pin_config = _pins(stack, deployment, project_dir)
        store = open_store(uri)
        store.check()
        plan = plan_sync(report, store, live=live, pins=pins, pin_config=pin_config)
    except (ConfigError, ProjectError, TargetError, StoreError, SyncError) as error:
        error_message(f"{_escaped_lines(error)}\nNothing was published.")
        raise typer.Exit(EXIT_USER_ERROR) from None
    if stack is not None and deployment is not None:
        # The repository after the sync: what is published here plus what the bucket already has.
        available = {m.model for m in plan.models} | set(plan.remote_only)
        _check_declared(stack, deployment, available, project_dir, "; nothing was published.")
        _check_pins(stack, deployment, plan, project_dir)

    for model in plan.models:
        before = "unpublished" if model.served_before is None else f"serves {model.served_before}"
        change = f"{len(model.uploads)} upload(s), {model.unchanged} unchanged" if model.uploads else "up to date"
        waiting = f"; published, not live: {model.published_unserved}" if model.published_unserved else ""
        out.print(f"{model.model}: {change}; {before} -> serves {model.served_after}{waiting}")
        for upload in model.uploads:
            out.print(f"  {upload.reason:8} {printable(upload.relative)} ({upload.size} bytes)")
    for name in plan.remote_only:  # from the bucket's keys: anyone with write access chose them
        out.print(f"{printable(name)}: in the bucket but not in {printable(str(directory))}; left as it is")
    if dry_run:
        out.print(f"Dry run: {len(plan.uploads)} file(s), {plan.total_bytes} bytes would be uploaded to {uri}")
        return
    if not plan.uploads:
        out.print(f"{uri} is up to date.")
        return
    # markup=False: a file name such as "a[link=x]b.bin" is text, not a style or a terminal hyperlink
    columns = (TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(), TransferSpeedColumn())
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
        raise _user_error(_escaped_lines(error)) from None
    except KeyboardInterrupt:
        err.print("interrupted: models whose config.pbtxt was not uploaded are unchanged for Triton; run again to resume")
        raise typer.Exit(130) from None
    out.print(f"Published {', '.join(published)} to {uri} (Triton: --model-repository={uri})")


def _pins(stack: str | None, deployment: str | None, project_dir: Path | None) -> tuple[dict[str, int], str | None]:
    """A deployment's modelVersions and the name of the custom configuration that serves them (none without both)."""
    from tritonfleet.core.rollout import pinned_config_name

    if stack is None or deployment is None:
        return {}, None
    _, found = _deployment(stack, deployment, project_dir)
    return dict(found.model_versions), pinned_config_name(found)


def _check_pins(stack: str, deployment: str, plan: Any, project_dir: Path | None) -> None:
    """Exit 1 before any upload when the deployment pins a version the bucket will not hold after this sync."""
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.stack import unheld_pins

    config, found = _deployment(stack, deployment, project_dir)
    held = {m.model: m.held_after for m in plan.models}
    problems = unheld_pins(config, found, held, plan.remote_only, stack)
    if problems:
        error_message(printable("\n".join(problems)) + "\nNothing was published.")
        raise typer.Exit(EXIT_USER_ERROR)


def _deployment(stack: str, deployment: str, project_dir: Path | None) -> tuple[Any, Any]:
    """The stack's config and its Triton deployment of that name; exit 1 naming the deployments when there is none."""
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.core.config.problems import printable
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        raw, _ = stack_config(load_project(project_dir or find_project(Path.cwd())), stack)
        config = load_stack_config(raw, stack)
    except (ConfigError, ProjectError) as error:
        raise _user_error(error) from None
    found = next((d for d in config.triton_deployments if d.name == deployment), None)
    if found is None:
        names = ", ".join(d.name for d in config.triton_deployments) or "none"
        error_message(f"stack '{stack}' has no Triton deployment '{printable(deployment)}' (deployments: {names})")
        raise typer.Exit(EXIT_USER_ERROR)
    return config, found


def _model_control(
    action: str, model: str, stack: str, deployment: str, replica: list[str] | None, project_dir, timeout: float
) -> None:
    from components.k8s.access import ADMIN, control_port
    from tritonfleet.core.config.problems import both_ways, printable, rm_command, set_command
    from tritonfleet.core.conventions import triton_release_name
    from tritonfleet.core.model_names import MODEL_NAME_RULE, is_model_name
    from tritonfleet.models.control import ControlError, fan_out, kubectl_replicas

    if not is_model_name(model):
        error_message(f"'{printable(model)}' is not a model name: {MODEL_NAME_RULE}")
        raise typer.Exit(EXIT_USER_ERROR)
    config, found = _deployment(stack, deployment, project_dir)
    at = f"tritonDeployments[{config.triton_deployments.index(found)}]"
    if action == "unload" and model in found.required_models:
        j = found.required_models.index(model)
        error_message(
            f"'{model}' is in {at}.requiredModels: every replica's readiness needs it, so unloading it takes every "
            f"replica out of service at once. Fix: take it out of requiredModels first "
            f"({both_ways(rm_command(f'{at}.requiredModels[{j}]', stack))}), run pulumi up, then unload it"
        )
        raise typer.Exit(EXIT_USER_ERROR)
    if found.model_control_mode != "explicit":
        error_message(
            f"deployment '{deployment}' runs modelControlMode {found.model_control_mode}: Triton refuses load/unload "
            f"requests. Fix: {both_ways(set_command(f'{at}.modelControlMode', 'explicit', stack))}"
        )
        raise typer.Exit(EXIT_USER_ERROR)
    headers = {}
    if found.access.restrict_model_control:
        key = os.environ.get(ADMIN.env)
        if not key:
            error_message(f"set {ADMIN.env} to the deployment's admin key (Secret key '{ADMIN.secret_key}')")
            raise typer.Exit(EXIT_USER_ERROR)
        headers[ADMIN.header] = key

    def waiting(pending: list[str], elapsed: float) -> None:
        names = printable(", ".join(pending))
        err.print(f"{action} {model}: waiting for {len(pending)} replica(s) ({names}), {elapsed:.0f} of {timeout:g} s")

    try:
        if replica:
            pairs = [r.partition("=") for r in replica]
            if any(not name or not url for name, _, url in pairs):
                raise ControlError("--replica takes NAME=URL, e.g. triton-llm-0=http://127.0.0.1:8000")
            results = fan_out(action, model, {name: url for name, _, url in pairs}, headers, deadline_seconds=timeout,
                              on_wait=waiting)
        else:
            with kubectl_replicas(found.namespace, triton_release_name(found.name), control_port(found.access)) as replicas:
                results = fan_out(action, model, replicas, headers, deadline_seconds=timeout, on_wait=waiting)
    except ControlError as error:
        error_message(printable(str(error)))
        raise typer.Exit(EXIT_USER_ERROR) from None
    for result in results:  # replica names and their error texts come from outside: escaped
        mark = ("ok", "green") if result.ok else ("FAILED", "red")
        out.print(Text.assemble(f"{printable(result.replica)}: ", mark, f" {printable(result.detail)}"))
    failed = [printable(r.replica) for r in results if not r.ok]
    if failed:
        err.print(f"{len(failed)} of {len(results)} replica(s) did not {action} {model}: {', '.join(failed)}")
        raise typer.Exit(1)
    out.print(
        f"{model}: {action}ed on all {len(results)} replica(s). Until a replica restarts: make it lasting with "
        f"tritonDeployments[].loadModels in the stack config."
    )


_REPLICA_HELP = "NAME=URL of a replica's HTTP endpoint (repeat); default: every running pod, via kubectl port-forward"
_TIMEOUT_HELP = "seconds for all replicas together; a replica that has not answered by then is reported as failed"


@models_app.command("pins", short_help="the model versions each deployment pins, and how a change rolls out")
def models_pins(
    stack: Annotated[str, typer.Option("--stack", "-s", help="the stack")],
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Per Triton deployment: its modelVersions pins and the custom model configuration that serves them, and its
    rollout's steps (or that a change replaces every replica at once)."""
    from tritonfleet.core.config import load_stack_config
    from tritonfleet.core.config.problems import printable
    from tritonfleet.models.stack import pin_lines
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        raw, _ = stack_config(load_project(project_dir or find_project(Path.cwd())), stack)
        config = load_stack_config(raw, stack)
    except (ConfigError, ProjectError) as error:
        raise _user_error(error) from None
    for line in pin_lines(config):
        out.print(printable(line))


@models_app.command("load", short_help="load a model on every replica of a deployment")
def models_load(
    model: Annotated[str, typer.Argument(help="the model name")],
    stack: Annotated[str, typer.Option("--stack", "-s", help="the stack")],
    deployment: Annotated[str, typer.Option(help="the Triton deployment (modelControlMode explicit)")],
    replica: Annotated[list[str] | None, typer.Option(help=_REPLICA_HELP)] = None,
    timeout: Annotated[float, typer.Option(min=1, max=7200, help=_TIMEOUT_HELP)] = DEADLINE_SECONDS,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Load (or reload) a model on EVERY replica of a deployment and report each; exit 1 if any failed."""
    _model_control("load", model, stack, deployment, replica, project_dir, timeout)


@models_app.command("unload", short_help="unload a model from every replica of a deployment")
def models_unload(
    model: Annotated[str, typer.Argument(help="the model name")],
    stack: Annotated[str, typer.Option("--stack", "-s", help="the stack")],
    deployment: Annotated[str, typer.Option(help="the Triton deployment (modelControlMode explicit)")],
    replica: Annotated[list[str] | None, typer.Option(help=_REPLICA_HELP)] = None,
    timeout: Annotated[float, typer.Option(min=1, max=7200, help=_TIMEOUT_HELP)] = DEADLINE_SECONDS,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Unload a model from EVERY replica of a deployment and report each; exit 1 if any failed."""
    _model_control("unload", model, stack, deployment, replica, project_dir, timeout)


sizing_cli.register(app, out, err)


def main() -> None:
    """Run the command and leave without interpreter teardown: the mock runtime's event loop and gRPC channels can
    print shutdown noise (a traceback) when garbage-collected at exit, after the command has already finished.

    Usage errors (a missing or unknown option) exit EXIT_USAGE, not Click's 2, which here means a policy violation."""
    code = EXIT_OK
    repeated = repeated_options(lambda: typer.main.get_command(app), sys.argv[1:])
    if repeated:  # Click would keep the last value silently
        error_message(f"{'; '.join(repeated)}: give each once")
        sys.stderr.flush()
        os._exit(EXIT_USAGE)
    try:
        result = app(standalone_mode=False)
        code = result if isinstance(result, int) else EXIT_OK
    except TyperException as error:  # Typer's Click: a usage error (exit_code 2) or a file it could not open
        _show_click_error(error)
        code = EXIT_USAGE if error.exit_code == CLICK_USAGE_EXIT else error.exit_code
    except typer.Abort:
        err.print("Aborted.")
        code = EXIT_USER_ERROR
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _show_click_error(error: TyperException) -> None:
    """Click's message, in Typer's format where Typer offers one (a bare run's help is already printed)."""
    try:
        from typer import rich_utils

        rich_utils.rich_format_error(error)
    except ImportError:  # pragma: no cover - typer without rich
        error.show()
