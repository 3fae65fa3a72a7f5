"""The `tritonfleet` command: offline plans of the Pulumi program, with GPU inventory and monthly cost."""

from __future__ import annotations

import sys
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
        "[bold]total[/bold]", "", "", "", str(cost["maxGpus"]), "", _usd(cost["monthlyFloorUsd"]), _usd(cost["monthlyCeilingUsd"])
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
    if not section["directCallsAgree"]:
        err.print("[red]error:[/red] the policy pack over gRPC and direct calls to its policies disagree (a tritonfleet bug)")
        raise typer.Exit(EXIT_USER_ERROR)
    if section["mandatory"]:
        raise typer.Exit(EXIT_POLICY_VIOLATION)


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
    import json

    from tritonfleet.plan.document import build_plan
    from tritonfleet.plan.harness import PlanError
    from tritonfleet.plan.project import ProjectError, find_project
    from tritonfleet.policycheck.check import check
    from tritonfleet.policycheck.engine import PackError
    from tritonfleet.policycheck.pack_config import PackConfigError

    try:
        directory = project_dir or find_project(Path.cwd())
        if plan_file:
            document = json.loads(plan_file.read_text())
            if document.get("stack") != stack:
                raise ProjectError(f"{plan_file} is a plan of stack '{document.get('stack')}', not '{stack}'")
        else:
            document = build_plan(directory, stack)
        section = check(directory, document, policy_config).section()
    except (OSError, json.JSONDecodeError, ConfigError, ProjectError, PlanError, PackConfigError, PackError) as error:
        raise _user_error(error) from None
    out.print(f"[bold]tritonfleet policy check[/bold] stack [bold]{stack}[/bold]")
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


def main() -> None:
    app()
