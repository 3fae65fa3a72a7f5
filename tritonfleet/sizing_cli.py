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


class Protocol(StrEnum):
    http = "http"
    grpc = "grpc"


def _fail(err: Console, message: str, status: int = EXIT_USER_ERROR) -> typer.Exit:
    from rich.markup import escape

    err.print(f"[red]error:[/red] {escape(message)}", markup=True, soft_wrap=True)
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

    @app.command()
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
        from tritonfleet.output_paths import OutputError, check_output_file, write_output

        plan = Plan(url=url, model=model, model_version=model_version, protocol=protocol.value, rate=rate,
                    concurrency=concurrency, duration_s=duration, max_requests=requests, batch_size=batch_size,
                    replicas=replicas)  # fmt: skip
        try:
            plan.check()
            if json_file:
                check_output_file(json_file)  # before the load test, not after it
            columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
            with Progress(*columns, console=err, transient=True) as bar:
                task = bar.add_task(f"{model}: 0 done", total=duration)
                result = run(plan, lambda elapsed, done: bar.update(task, completed=elapsed, description=f"{model}: {done} done"))
        except LoadtestUsageError as error:
            raise _fail(err, str(error), EXIT_USAGE) from None
        except (LoadtestError, OutputError) as error:
            raise _fail(err, str(error)) from None
        out.print(loadtest_table(result))
        for sample in result.error_samples:
            err.print(f"[yellow]error sample:[/yellow] {sample}", markup=True, soft_wrap=True)
        if json_file:
            try:
                write_output(json_file, result.dumps())
            except OutputError as error:
                raise _fail(err, str(error)) from None
            out.print(f"Result written to {json_file}: {result.inferences_per_second_per_replica:,.1f} inferences/s per replica")
        if result.succeeded == 0:
            raise _fail(err, f"no request to '{model}' succeeded")

    @app.command()
    def size(
        stack: Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")],
        deployment: Annotated[str, typer.Option("--deployment", "-d", help="the tritonDeployments[].name to size")],
        benchmark_model: Annotated[
            str, typer.Option(help="published benchmark to estimate GPUs without a measured profile (catalog)")
        ] = "resnet50",
        project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
    ) -> None:
        """Rank every GPU type and purchase option of the stack's region by $ per 1M inferences at the deployment's
        target load, within its latency target; print the config keys for the winner."""
        from tritonfleet.core.catalog import load_catalog
        from tritonfleet.core.config import ConfigError, load_stack_config
        from tritonfleet.core.config.problems import did_you_mean
        from tritonfleet.core.size_options import rank_options
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
        if benchmark_model not in published:
            hint = did_you_mean(benchmark_model, published)
            raise _fail(err, f"no published benchmark '{benchmark_model}' in the catalog (it has: {', '.join(published)}){hint}")
        ranking = rank_options(config, target, capacities.get(deployment), benchmark_model)
        print_ranking(out, config, target, ranking)


def print_ranking(out: Console, config: Any, deployment: Any, ranking: Any) -> None:
    load = deployment.target_load
    out.print(
        f"[bold]tritonfleet size[/bold] {deployment.name} in {config.cloud} {config.region}: peak {load.peak:g} {load.unit}"
        + (f", latency target {deployment.latency_target} p99" if deployment.latency_target else ""),
        markup=True,
    )
    out.print("Options by $ per 1M inferences at peak (whole nodes; '-': no known price or over the latency target):")
    for i, option in enumerate(ranking.options, 1):
        rank = f"{i}." if option.usd_per_million is not None and option.fits_latency else "-"
        per_hour = "unknown" if option.usd_per_hour is None else f"${option.usd_per_hour:,.2f}/h"
        per_million = "unknown" if option.usd_per_million is None else f"${option.usd_per_million:,.4f}"
        # Two plain lines per option: nothing is cut at 80 columns (names and money stay whole).
        out.print(f"{rank:>4} {option.gpu} {option.instance_type} {option.purchase}: $/1M {per_million}, {per_hour}", soft_wrap=True)
        out.print(
            f"     {option.nodes} nodes, {option.idle_gpus} idle GPUs; {option.capacity:,.0f}/s per replica "
            f"({option.capacity_kind})",
            soft_wrap=True,
        )
    for note in ranking.notes:
        out.print(f"note: {note}", soft_wrap=True)
    winner = ranking.winner
    if winner is None:
        out.print("No option with a known price and a capacity within the latency target: nothing to recommend.")
        return
    out.print(f"Cheapest within the target: {winner.instance_type} {winner.purchase} ({winner.capacity_kind}). Set:")
    for command in ranking.commands:
        out.print(f"  {command}", soft_wrap=True)


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
