"""`tritonfleet diff`: plan documents compared for a pull request, as one comment (markdown) or JSON."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from tritonfleet.cli.options import ProjectOption
from tritonfleet.cli.output import err, user_error, write
from tritonfleet.exit_codes import EXIT_POLICY_VIOLATION, EXIT_USAGE, EXIT_USER_ERROR
from tritonfleet.output_paths import OutputError, check_output_file, check_output_folder, make_output_folder
from tritonfleet.terminal import print_labelled

app = typer.Typer()


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
    project_dir: ProjectOption = None,
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
        raise user_error("give BASE and HEAD plan documents (files or folders), or --base-ref REF, not both", EXIT_USAGE)
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
        raise user_error(error) from None

    planned = compare_plans(base_plans, head_plans)
    diffs = sorted([d for d in planned if d.stack not in errors] + [error_stack(s, e) for s, e in errors.items()], key=lambda d: d.stack)
    as_json = json.dumps(to_json(diffs), indent=2, sort_keys=True) + "\n"
    rendered = as_json if output_format is DiffFormat.json else report(diffs)
    if json_file:
        write(json_file, as_json)
    if comments_dir:
        try:
            make_output_folder(comments_dir)
        except OutputError as error:
            raise user_error(error) from None
        write(comments_dir / f"{COMMENT_NAME}.md", rendered if output_format is DiffFormat.markdown else report(diffs))
    if output:
        write(output, rendered)
    else:
        sys.stdout.write(rendered)
    if errors:
        raise user_error(f"could not plan {', '.join(sorted(errors))}; the report says why")
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

