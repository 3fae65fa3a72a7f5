"""`tritonfleet cost actual`: a month of a FOCUS billing export against the stack's plan, line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from tritonfleet.cli.options import ProjectOption, StackOption
from tritonfleet.cli.output import out, user_error

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Compare a stack's plan with what the cloud billed.",
    short_help="compare the plan with the invoice (actual)",
)


@app.command("actual", short_help="a month of a FOCUS billing export against the plan, per line")
def cost_actual(
    stack: StackOption,
    month: Annotated[str, typer.Option("--month", help="the month to compare, YYYY-MM")],
    export: Annotated[Path, typer.Option("--export", help="a FOCUS 1.0 or 1.2 billing export: CSV (.csv, .csv.gz) or Parquet")],
    project_dir: ProjectOption = None,
) -> None:
    """Match the month's rows of a FOCUS export to the stack's pools and lines by the tags tritonfleet sets; print
    actual against the plan's floor, expected and ceiling, the drift and its likely causes, and the untagged rows."""
    from tritonfleet.core.config import ConfigError, load_stack_config
    from tritonfleet.cost_actual import ExportError, actual_report, report_lines
    from tritonfleet.plan.document import cost_section
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config

    try:
        raw, _ = stack_config(load_project(project_dir or find_project(Path.cwd())), stack)
        config = load_stack_config(raw, stack)
        report = actual_report(config, cost_section(config), export, month)
    except (ConfigError, ProjectError, ExportError) as error:
        raise user_error(error) from None
    for line in report_lines(report, out.width):
        out.print(Text(line))
