"""The `tritonfleet` command: offline plans of the Pulumi program, with GPU inventory and monthly cost."""

# One module per command or command group (Typer's "one file per command" layout): each defines its own `app` with
# its command (or, for a group, its subcommands), and this module adds them to the `tritonfleet` app in the order its
# help lists them. What they print and how they stop is in output.py; options several take, in options.py; a stack's
# config and deployment, in stacks.py. Commands import their heavy modules (the config schema and pydantic, even for
# ConfigError; the Pulumi SDKs, the policy pack, cloud clients) inside the command, so that `tritonfleet --help` stays
# quick (tests/test_cli_layout.py). Nothing outside this package imports it.

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from typer.exceptions import TyperException

from tritonfleet.cli import cost, diff, loadtest, models, plan, policy, preflight, size, tune
from tritonfleet.cli.output import err, error_message, out
from tritonfleet.cli_args import repeated_options
from tritonfleet.exit_codes import EXIT_CODES_HELP, EXIT_OK, EXIT_USAGE, EXIT_USER_ERROR

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,  # conventional help (Click's): metavars only where a value is taken, text re-wrapped
    no_args_is_help=True,
    help=f"{__doc__}\n\n{EXIT_CODES_HELP}",
    context_settings={"help_option_names": ["-h", "--help"]},
)
for command in (plan, diff, preflight, loadtest, tune, size):
    app.add_typer(command.app)
for name, group in (("policy", policy), ("models", models), ("cost", cost)):
    app.add_typer(group.app, name=name)

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
