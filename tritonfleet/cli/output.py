"""What every command prints and how it stops: the two consoles, `error:` messages, the user-error exit, output files,
the policy verdicts and their exit status. Every module under tritonfleet/cli prints and aborts through these.

Width: $COLUMNS, else the terminal's, else 80 (a pipe or a CI log); the plan summary and tables are laid out to fit it,
messages are wrapped between words (tritonfleet.terminal), and anything else Rich wraps to it. The consoles read
$COLUMNS when this module is imported (tests/cli_forkserver.py imports the CLI afresh in each child for that).
No markup anywhere: config values, paths and messages may hold [brackets]; styles come as rich.text.Text.
"""

from __future__ import annotations

import gc
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from tritonfleet.exit_codes import EXIT_POLICY_VIOLATION, EXIT_USER_ERROR
from tritonfleet.output_paths import OutputError, write_output
from tritonfleet.terminal import print_labelled

out = Console(highlight=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)


def show(lines) -> None:
    """Lines from tritonfleet.plan.text, printed as plain text (never markup) in their own layout."""
    for line in lines:
        out.print(Text(line.text, style=line.style))


def error_message(message: object) -> None:
    """'error: MESSAGE' on stderr, wrapped to the terminal; the message as it is (values may hold [brackets])."""
    print_labelled(err, "error:", "red", message)


def user_error(error: object, status: int = EXIT_USER_ERROR) -> typer.Exit:
    """Print `error` as an error message; the exit to raise (1, a user error, unless `status` says otherwise)."""
    error_message(error)
    return typer.Exit(status)


def write(path: Path, text: str) -> None:
    """Write an output file, or exit 1 saying why it cannot be written."""
    try:
        write_output(path, text)
    except OutputError as error:
        raise user_error(error) from None


def without_cyclic_gc() -> None:
    """For a command that plans and exits: no cyclic garbage collection for the rest of this short process.

    The program under the SDK's mocks allocates millions of objects while the provider SDKs' modules are live, so the
    collector's full passes cost about a quarter of a plan; reference counting still frees nearly everything (a plan
    of 100 Triton deployments peaks about 4 % higher). benchmarks/cli_speed.py measures it."""
    gc.disable()


def print_policy(section: dict) -> None:
    """The pack's verdicts, blocking first, with the enforcement level the engine would apply."""
    from tritonfleet.plan.text import policy_lines

    show(policy_lines(section, out.width))


def policy_exit(section: dict) -> None:
    """Exit 2 on a mandatory violation; 1 when the pack and direct calls to its policies disagree."""
    if section["directCallsAgree"] is False:
        raise user_error("the policy pack over gRPC and direct calls to its policies disagree (a tritonfleet bug)")
    if section["mandatory"]:
        raise typer.Exit(EXIT_POLICY_VIOLATION)
