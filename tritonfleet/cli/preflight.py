"""`tritonfleet preflight`: the stack checked with its cloud's APIs (quotas, zones, capacity) before `pulumi up`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from tritonfleet.cli.options import ProjectOption, StackOption
from tritonfleet.cli.output import err, out, user_error, write
from tritonfleet.exit_codes import EXIT_USER_ERROR
from tritonfleet.output_paths import OutputError, check_output_file

app = typer.Typer()


@app.command(short_help="check quotas, zones and capacity with the cloud's APIs")
def preflight(
    stack: StackOption,
    json_file: Annotated[Path | None, typer.Option("--json", help="write the findings (JSON) here, for CI")] = None,
    project_dir: ProjectOption = None,
) -> None:
    """Before `pulumi up`: check with the cloud's APIs that the stack's instance/machine types (and GCP accelerators)
    are offered in its zones and that the GPU quotas cover its ceiling; AWS also shows current spot prices, GCP checks
    the pools' reservations. Exit 1 on any blocker."""
    import json
    import warnings

    from tritonfleet.core.cloud import PreflightError, cloud
    from tritonfleet.core.config import ConfigError, load_stack_config
    from tritonfleet.core.preflight import BLOCKER, PREFLIGHT_DEADLINE_S
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        if json_file:
            check_output_file(json_file)
        project = load_project(project_dir or find_project(Path.cwd()))
        raw, _ = stack_config(project, stack)
        config = load_stack_config(raw, stack)
    except (ConfigError, ProjectError, OutputError) as error:
        raise user_error(error) from None
    # google.api_core warns about Python versions on import: not the user's business here.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"google\.")
    try:
        report = cloud(config.cloud).preflight(config, PREFLIGHT_DEADLINE_S)
    except PreflightError as error:
        raise user_error(error) from None
    table = Table(title=f"Preflight for stack {stack} ({config.region}; zones {', '.join(report.zones)})")
    for column in ("check", "subject", "status", "detail"):
        table.add_column(column)
    colour = {"ok": "green", "warning": "yellow", "unknown": "yellow", BLOCKER: "red"}
    for f in report.findings:
        table.add_row(f.check, f.subject, Text(f.status, style=colour[f.status]), f.detail)
    out.print(table)
    if json_file:
        write(json_file, json.dumps(report.document(), indent=2, sort_keys=True, default=str) + "\n")
    if report.blockers:
        err.print(Text.assemble((f"{len(report.blockers)} blocker(s)", "red"), ": fix them before `pulumi up`."))
        raise typer.Exit(EXIT_USER_ERROR)
    unknown = sum(1 for f in report.findings if f.status == "unknown")
    out.print("No blockers." + (f" {unknown} check(s) could not be answered (unknown, see above)." if unknown else ""))
