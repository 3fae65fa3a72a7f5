"""`tritonfleet loadtest` and `tritonfleet size`, and the plan's sizing lines (kept apart from the plan's main layout)."""

from __future__ import annotations

import textwrap
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tritonfleet.exit_codes import EXIT_USAGE, EXIT_USER_ERROR
from tritonfleet.terminal import print_labelled


class Protocol(StrEnum):
    http = "http"
    grpc = "grpc"


def _fail(err: Console, message: str, status: int = EXIT_USER_ERROR) -> typer.Exit:
    print_labelled(err, "error:", "red", message)
    return typer.Exit(status)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def loadtest_table(result: Any) -> Table:
    """The summary: offered and achieved rate, latency percentiles and errors (perf_analyzer's headline figures)."""
    table = Table(title=f"loadtest {result.model} over {result.protocol} ({result.mode}), {result.duration_s:.1f} s")
    for column in ("offered/s", "achieved req/s", "infer/s", "p50 ms", "p95 ms", "p99 ms", "errors"):
        table.add_column(column, justify="right")
    offered = f"{result.offered_rate:,.1f}" if result.offered_rate is not None else f"c={result.concurrency}"
    table.add_row(
        offered,
        f"{result.achieved_requests_per_second:,.1f}",
        f"{result.achieved_inferences_per_second:,.1f}",
        _ms(result.latency_ms.p50),
        _ms(result.latency_ms.p95),
        _ms(result.latency_ms.p99),
        f"{result.errors} of {result.requests}",
    )
    return table


def register(app: typer.Typer, out: Console, err: Console) -> None:
    """Add the sizing commands to the `tritonfleet` app."""

    @app.command(short_help="drive one model at a fixed rate or concurrency")
    def loadtest(
        model: Annotated[str, typer.Option("--model", "-m", help="the model name as Triton serves it")],
        url: Annotated[str, typer.Option(help="host:port of Triton's HTTP (8000) or gRPC (8001) endpoint")] = "127.0.0.1:8000",
        protocol: Annotated[Protocol, typer.Option(help="http, or grpc where tritonclient.grpc imports")] = Protocol.http,
        rate: Annotated[float | None, typer.Option(help="open loop: requests per second, sent on a fixed schedule")] = None,
        concurrency: Annotated[int | None, typer.Option(help="closed loop: requests kept in flight")] = None,
        duration: Annotated[float, typer.Option(help="seconds to run (at most 3600)")] = 10.0,
        requests: Annotated[int | None, typer.Option(help="stop after this many requests")] = None,
        batch_size: Annotated[int, typer.Option(help="inferences per request (rows of a batching model)")] = 1,
        replicas: Annotated[int, typer.Option(help="replicas behind URL: the result's capacity is per replica")] = 1,
        model_version: Annotated[str, typer.Option(help="a model version (default: Triton's policy)")] = "",
        json_file: Annotated[Path | None, typer.Option("--json", help="write the result here (tritonDeployments[].loadtestResult.path)")] = None,
    ) -> None:
        """Drive one model at a fixed rate or concurrency for a bounded time; print offered and achieved rate,
        p50/p95/p99 and errors; write a result that sizing and the plan read as the measured per-replica capacity.

        Exit 1 when the server or model cannot be reached, an argument's value is bad, or every request failed; 64
        when neither or both of --rate and --concurrency are given."""
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from tritonfleet.loadtest import LoadtestError, LoadtestUsageError, Plan, run

        plan = Plan(url=url, model=model, model_version=model_version, protocol=protocol.value, rate=rate,
                    concurrency=concurrency, duration_s=duration, max_requests=requests, batch_size=batch_size,
                    replicas=replicas)  # fmt: skip
        try:
            plan.check()
            columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
            with Progress(*columns, console=err, transient=True) as bar:
                task = bar.add_task(f"{model}: 0 done", total=duration)
                result = run(plan, lambda elapsed, done: bar.update(task, completed=elapsed, description=f"{model}: {done} done"))
        except LoadtestUsageError as error:
            raise _fail(err, str(error), EXIT_USAGE) from None
        except LoadtestError as error:
            raise _fail(err, str(error)) from None
        out.print(loadtest_table(result))
        for sample in result.error_samples:
            print_labelled(err, "error sample:", "yellow", sample)
        if json_file:
            json_file.parent.mkdir(parents=True, exist_ok=True)
            json_file.write_text(result.dumps())
            out.print(f"Result written to {json_file}: {result.inferences_per_second_per_replica:,.1f} inferences/s per replica")
        if result.succeeded == 0:
            raise _fail(err, f"no request to '{model}' succeeded")

    @app.command(short_help="rank GPU options for a deployment, inside the guardrails")
    def size(
        stack: Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")],
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
        from tritonfleet.core.size_options import rank_options
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
            raise _fail(err, str(error)) from None
        target = next((d for d in config.triton_deployments if d.name == deployment), None)
        if target is None:
            names = ", ".join(d.name for d in config.triton_deployments) or "none"
            raise _fail(err, f"stack '{stack}' has no Triton deployment '{deployment}' (it has: {names})")
        if target.target_load is None:
            raise _fail(err, f"tritonDeployments '{deployment}' states no targetLoad: set targetLoad.peak (and unit) first")
        published = sorted({b.model for b in load_catalog().benchmarks})
        if benchmark_model is not None and benchmark_model not in published:
            hint = did_you_mean(benchmark_model, published)
            raise _fail(err, f"no published benchmark '{benchmark_model}' in the catalog (it has: {', '.join(published)}){hint}")
        rails = guardrails(config, project.directory, model_memory_gib, benchmark_model)
        ranking = rank_options(config, target, capacities.get(deployment), rails)
        from tritonfleet.plan.harness import PlanError
        from tritonfleet.policycheck.engine import PackError
        from tritonfleet.policycheck.pack_config import PackConfigError

        try:
            ranking, chosen = advise(project.directory, stack, ranking)
        except (ConfigError, PlanError, PackConfigError, PackError) as error:  # the stack as it is does not plan
            raise _fail(err, str(error)) from None
        print_ranking(out, config, target, ranking, chosen)


def _lines(text: str, width: int, first: str = "", rest: str = "    ") -> list[str]:
    return textwrap.wrap(text, max(width, 40), initial_indent=first, subsequent_indent=rest, break_on_hyphens=False) or [first]


def print_ranking(out: Console, config: Any, deployment: Any, ranking: Any, chosen: Any = None) -> None:
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
    say("Ranked: options that pass the stack's policies and limits, by $ per 1M inferences at peak (whole nodes):")
    for i, option in enumerate(ranking.ranked, 1):
        per_hour = "unknown" if option.usd_per_hour is None else f"${option.usd_per_hour:,.2f}/h"
        say(f"{i}. {option.label}: $/1M ${option.usd_per_million:,.4f}, {per_hour}", "  ", "       ")
        latency = "latency checked (measured p99)" if option.latency_checked else "latency not checked"
        say(f"{option.nodes} nodes, {option.idle_gpus} idle GPUs; {option.capacity:,.0f}/s per replica "
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


def sizing_lines(plan: dict, width: int = 80) -> list[str]:
    """The plan's $/1M lines per deployment and per pool, each within `width` (80) columns."""
    sizing = plan.get("sizing")
    if not sizing:
        return []
    lines = [f"Sizing (headroom {sizing['headroom']:.0%}; $/1M at whole nodes, idle GPUs included):"]
    for d in sizing["deployments"]:
        capacity = d["capacity"]
        source = f"{capacity['kind']} {capacity['inferencesPerSecond']:,.0f}/s" if isinstance(capacity, dict) else capacity
        lines += _wrapped(f"  {d['deployment']} ({d['pool']}): {_replicas(d['replicas'])} replicas; capacity {source}", width)
        lines += _wrapped(f"    $/1M peak {_per_million(d['usdPer1M']['peak'])}, average {_per_million(d['usdPer1M']['average'])}", width)
    for p in sizing["pools"]:
        peak, low = p["peak"], p["minimum"]
        lines += _wrapped(
            f"  pool {p['pool']}: peak {peak['nodes']} nodes {peak['idleGpus']}/{peak['gpusPaid']} GPUs idle; "
            f"min {low['nodes']} nodes {low['idleGpus']}/{low['gpusPaid']} idle",
            width,
        )
        lines += _wrapped(f"    $/1M peak {_per_million(peak['usdPer1M'])}, average {_per_million(p['average']['usdPer1M'])}", width)
    for finding in sizing["findings"]:
        text = f"warning: {finding['key']}: {finding['message']}"
        lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)
    return lines


def _wrapped(text: str, width: int) -> list[str]:
    """A line that never loses text: wrapped between words within `width`, continued four spaces in."""
    indent = text[: len(text) - len(text.lstrip())]
    return textwrap.wrap(text.strip(), width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False)


def _replicas(replicas: dict) -> str:
    return f"{replicas['minimum']} min / {replicas['average']} avg / {replicas['peak']} peak"


def _per_million(value: Any) -> str:
    return f"${value:,.4f}" if isinstance(value, (int, float)) else str(value)
