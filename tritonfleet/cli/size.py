"""`tritonfleet size`: a deployment's GPU options ranked by $ per 1M at its target load, inside the stack's policies
and limits; the best one planned before it is recommended."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Annotated, Any

import typer

from tritonfleet.cli.options import StackOption
from tritonfleet.cli.output import out, user_error

app = typer.Typer()


@app.command(short_help="rank GPU options for a deployment, inside the guardrails")
def size(
    stack: StackOption,
    deployment: Annotated[str, typer.Option("--deployment", "-d", help="the tritonDeployments[].name to size")],
    benchmark_model: Annotated[
        str | None,
        typer.Option(
            help="a published benchmark that represents the model, to rank GPUs it has no figure on "
            "(default: none; other GPUs stay unranked)",
            show_default=False,
        ),
    ] = None,
    model_memory_gib: Annotated[
        float | None,
        typer.Option(
            help="GPU memory one replica needs; default: no less than it has now",
            min=0.1,
            metavar="GIB",
            show_default=False,
        ),
    ] = None,
    project_dir: Annotated[
        Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)", show_default=False)
    ] = None,
) -> None:
    """Rank the GPU types and purchase options of the stack's region by $ per 1M inferences at the
    deployment's target load, only those that pass the stack's policies and limits; plan the best before
    recommending it, and print its config keys."""
    from tritonfleet.core.catalog import load_catalog
    from tritonfleet.core.config import ConfigError, load_stack_config
    from tritonfleet.core.config.problems import did_you_mean
    from tritonfleet.core.size_options import peak_load, rank_options
    from tritonfleet.plan.advice import advise, guardrails
    from tritonfleet.plan.project import ProjectError, find_project, load_project, stack_config
    from tritonfleet.plan.sizing import SizingError, deployment_capacities

    try:
        directory = project_dir or find_project(Path.cwd())
        project = load_project(directory)
        raw, secret_keys = stack_config(project, stack)
        config = load_stack_config(raw, stack, secret_keys)
        capacities = deployment_capacities(config, project.directory)
    except (ConfigError, ProjectError, SizingError) as error:
        raise user_error(str(error)) from None
    target = next((d for d in config.triton_deployments if d.name == deployment), None)
    if target is None:
        names = ", ".join(d.name for d in config.triton_deployments) or "none"
        raise user_error(f"stack '{stack}' has no Triton deployment '{deployment}' (it has: {names})")
    if target.target_load is None:
        raise user_error(f"tritonDeployments '{deployment}' states no targetLoad: set targetLoad.peak (and unit) first")
    published = sorted({b.model for b in load_catalog().benchmarks})
    if benchmark_model is not None and benchmark_model not in published:
        hint = did_you_mean(benchmark_model, published)
        raise user_error(f"no published benchmark '{benchmark_model}' in the catalog (it has: {', '.join(published)}){hint}")
    rails = guardrails(config, project.directory, model_memory_gib, benchmark_model)
    try:
        peak_load(config, target, capacities.get(deployment), rails)
    except ValueError as error:
        raise user_error(str(error)) from None
    ranking = rank_options(config, target, capacities.get(deployment), rails)
    from tritonfleet.plan.harness import PlanError
    from tritonfleet.policycheck.engine import PackError
    from tritonfleet.policycheck.pack_config import PackConfigError

    try:
        ranking, chosen = advise(project.directory, stack, ranking)
    except (ConfigError, PlanError, PackConfigError, PackError) as error:  # the stack as it is does not plan
        raise user_error(str(error)) from None
    print_ranking(config, target, ranking, chosen)


def _lines(text: str, width: int, first: str = "", rest: str = "    ") -> list[str]:
    return textwrap.wrap(text, max(width, 40), initial_indent=first, subsequent_indent=rest, break_on_hyphens=False) or [first]


def print_ranking(config: Any, deployment: Any, ranking: Any, chosen: Any = None) -> None:
    """The ranked options, the excluded ones with every reason, notes, then the recommendation as YAML edits and
    `pulumi config set` lines; every line within the console's width."""
    from tritonfleet.core.config.problems import set_command, yaml_edit

    width = out.width
    load = deployment.target_load

    def say(text: str, first: str = "", rest: str = "    ", style: str = "") -> None:
        for line in _lines(text, width, first, rest):
            out.print(line, style=style or None, markup=False, highlight=False, soft_wrap=True)

    target = f", latency target {deployment.latency_target} p99" if deployment.latency_target else ""
    say(f"tritonfleet size {deployment.name} in {config.cloud} {config.region}: peak {load.peak:g} {load.unit}{target}",
        style="bold")  # fmt: skip
    say(f"Ranked: options that pass the stack's policies and limits, by $ per 1M {ranking.unit} at peak (whole "
        "nodes, idle GPUs paid):")  # fmt: skip
    for i, option in enumerate(ranking.ranked, 1):
        per_hour = "unknown" if option.usd_per_hour is None else f"${option.usd_per_hour:,.2f}/h"
        say(f"{i}. {option.label}: $/1M ${option.usd_per_million:,.4f}, {per_hour}", "  ", "       ")
        latency = "latency checked (measured p99)" if option.latency_checked else "latency not checked"
        per = " output tokens" if ranking.unit == "output tokens" else ""
        say(f"{option.nodes} nodes, {option.idle_gpus} idle GPUs; {option.capacity:,.0f}{per}/s per replica "
            f"({option.capacity_kind}); {latency}", "       ", "       ")  # fmt: skip
    if not ranking.ranked:
        say("  (none)")
    if ranking.excluded:
        say("Excluded (each reason given):")
        for line in excluded_lines(ranking.excluded):
            say(line, "  - ", "    ")
    for note in ranking.notes:
        say(f"note: {note}", "", "  ")
    if chosen is None:
        say("No option passes the guardrails and plans clean: nothing to recommend.")
        return
    checked = "latency checked against a measured p99" if chosen.latency_checked else (
        f"latency not checked ({chosen.capacity_kind} capacity, not a measured p99)"
    )
    say(f"Recommended (planned: no policy violation, no protected resource deleted): {chosen.label}; {checked}.")
    if not chosen.settings:
        say("The stack already has it: nothing to change.")
        return
    say(f"Edit stacks/Pulumi.{config.stack}.yaml:")
    for key, value in chosen.settings.items():
        say(yaml_edit(key, value), "  ", "    ")
    say("or run:")
    for key, value in chosen.settings.items():
        for line in command_lines(set_command(key, value, config.stack), width, "  "):
            out.print(line, markup=False, highlight=False, soft_wrap=True)


def excluded_lines(options: Any) -> list[str]:
    """One line per instance type: its excluded purchase options, the reasons they share, then each one's own."""
    by_type: dict[str, list[Any]] = {}
    for option in options:
        by_type.setdefault(f"{option.gpu} {option.instance_type}", []).append(option)
    lines = []
    for name, group in by_type.items():
        shared = [r for r in group[0].excluded if all(r in o.excluded for o in group)]
        own = [f"{o.purchase}: {'; '.join(r for r in o.excluded if r not in shared)}" for o in group
               if any(r not in shared for r in o.excluded)]  # fmt: skip
        lines.append(f"{name} ({', '.join(o.purchase for o in group)}): {'; '.join(shared + own)}")
    return lines


def command_lines(command: str, width: int, indent: str = "") -> list[str]:
    """A shell command within `width` columns: broken between words with ` \\` continuations, so it still pastes."""
    lines, line = [], indent
    for word in command.split(" "):
        if line.strip() and len(line) + 1 + len(word) + 2 > width:
            lines.append(line + " \\")
            line = indent + "    " + word
        else:
            line = f"{line} {word}" if line.strip() else line + word
    return [*lines, line]

