"""`tritonfleet policy` (`check`, `init`): the CrossGuard pack run offline, and a new stack's policy config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from tritonfleet.cli.options import PolicyConfigOption, ProjectOption, StackOption
from tritonfleet.cli.output import out, policy_exit, print_policy, user_error, without_cyclic_gc
from tritonfleet.exit_codes import EXIT_USAGE

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,
    help="Run the policy pack offline, as `pulumi preview --policy-pack` would.",
    short_help="run the policy pack offline (check, init)",
)

PlanFileOption = Annotated[Path | None, typer.Option("--plan", help="a plan document (tritonfleet plan --json) to check instead")]


@app.callback(invoke_without_command=True)
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
            raise user_error("give --stack NAME (or use `tritonfleet policy check --stack NAME`)", EXIT_USAGE)
        _policy_check(stack, plan_file, project_dir, policy_config)


@app.command("check", short_help="run the policy pack on a stack's offline plan")
def policy_check(
    stack: StackOption,
    plan_file: PlanFileOption = None,
    project_dir: ProjectOption = None,
    policy_config: PolicyConfigOption = None,
) -> None:
    """Start the policy pack, feed it the stack's offline plan over the Analyzer gRPC protocol, print the verdicts.

    Exit 2 when a mandatory policy is violated; exit 1 for a bad stack, plan or policy config."""
    _policy_check(stack, plan_file, project_dir, policy_config)


def _policy_check(stack: str, plan_file: Path | None, project_dir: Path | None, policy_config: Path | None) -> None:
    without_cyclic_gc()
    import json

    from tritonfleet.core.config import ConfigError
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
        raise user_error(error) from None
    out.print(Text(f"tritonfleet policy check: stack {stack}", style="bold"))
    out.print(Text(note))
    print_policy(section)
    if section["directCallsAgree"] is not None:
        agreed = "agree" if section["directCallsAgree"] else "DISAGREE"
        out.print(Text(f"The pack over gRPC and direct calls to its {section['policiesRun']} policies {agreed}."))
    policy_exit(section)


@app.command("init", short_help="write policies/config/STACK.json for a new stack")
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
    from tritonfleet.core.config import ConfigError
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
        raise user_error(error) from None
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
