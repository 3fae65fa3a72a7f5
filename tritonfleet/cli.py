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


@app.command()
def plan(
    stack: Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")],
    json_file: Annotated[Path | None, typer.Option("--json", help="write the plan document (deterministic JSON) here")] = None,
    project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
) -> None:
    """Run the real program offline under the Pulumi mock runtime; print resources, GPUs and monthly cost."""
    from tritonfleet.plan.document import build_plan, dumps
    from tritonfleet.plan.harness import PlanError
    from tritonfleet.plan.project import ProjectError, find_project

    try:
        directory = project_dir or find_project(Path.cwd())
        document = build_plan(directory, stack)
    except (ConfigError, ProjectError, PlanError) as error:
        err.print(f"[red]error:[/red] {error}", markup=True, soft_wrap=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    print_plan(document)
    if json_file:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(dumps(document))
        out.print(f"Plan document written to {json_file}")


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

    from components.aws.preflight import BLOCKER, aws_clients, run_preflight

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


def main() -> None:
    app()
