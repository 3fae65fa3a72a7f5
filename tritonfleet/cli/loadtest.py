"""`tritonfleet loadtest`: one model driven at a rate or a concurrency (perf_analyzer's way), or its tokens streamed
(--llm, GenAI-Perf's way); the result file sizing and the HPA read (tritonDeployments[].loadtestResult)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from tritonfleet.cli.options import ProjectOption
from tritonfleet.cli.output import err, out, user_error, write
from tritonfleet.cli.stacks import deployment as stack_deployment
from tritonfleet.exit_codes import EXIT_USAGE
from tritonfleet.plan.text import wrapped
from tritonfleet.terminal import print_labelled

app = typer.Typer()


class Protocol(StrEnum):
    http = "http"
    grpc = "grpc"
    openai = "openai"  # --llm only: an OpenAI-compatible frontend's streaming /v1/completions


class Arrivals(StrEnum):
    poisson = "poisson"
    uniform = "uniform"


@app.command(short_help="drive one model at a fixed rate or concurrency")
def loadtest(
    model: Annotated[str, typer.Option("--model", "-m", help="the model name as Triton serves it")],
    url: Annotated[str, typer.Option(help="host:port of Triton's HTTP (8000) or gRPC (8001) endpoint")] = "127.0.0.1:8000",
    protocol: Annotated[Protocol, typer.Option(help="http, grpc (where it imports), or openai (--llm)")] = Protocol.http,
    rate: Annotated[float | None, typer.Option(help="open loop: requests per second (a sweep's first rate)")] = None,
    concurrency: Annotated[int | None, typer.Option(help="closed loop: requests kept in flight (a sweep's first)")] = None,
    arrivals: Annotated[Arrivals, typer.Option(help="open loop: poisson (independent clients) or uniform gaps")] = Arrivals.poisson,
    schedule: Annotated[Path | None, typer.Option(help="open loop: gaps in microseconds, one a line, cycled")] = None,
    duration: Annotated[float, typer.Option(help="seconds to measure at most, after the warm-up (<= 3600)")] = 10.0,
    warmup: Annotated[float, typer.Option(help="seconds of load before measuring (not counted)")] = 2.0,
    window: Annotated[float, typer.Option(help="seconds per measurement window; 0: one window")] = 2.0,
    stability_percent: Annotated[float, typer.Option(help="stop once 3 windows agree within this %")] = 10.0,
    requests: Annotated[int | None, typer.Option(help="stop after this many requests")] = None,
    batch_size: Annotated[int, typer.Option(help="inferences per request (rows of a batching model)")] = 1,
    replicas: Annotated[int, typer.Option(help="replicas behind URL: the result's capacity is per replica")] = 1,
    model_version: Annotated[str, typer.Option(help="a model version (default: Triton's policy)")] = "",
    shape: Annotated[list[str] | None, typer.Option(help="NAME:d1,d2 for an input's variable dims (repeat)")] = None,
    input_data: Annotated[Path | None, typer.Option(help="perf_analyzer's --input-data JSON of real tensors")] = None,
    distinct: Annotated[int, typer.Option(help="distinct random tensors sent in turn (1..1024)")] = 16,
    string_length: Annotated[int, typer.Option(help="characters of a random BYTES element")] = 16,
    timeout: Annotated[float, typer.Option(help="seconds a request may take before it counts as failed")] = 30.0,
    max_error_rate: Annotated[float, typer.Option(help="stop when more than this share of requests fail")] = 0.5,
    percentile: Annotated[int, typer.Option(help="latency percentile held to --latency-target: 50/90/95/99")] = 99,
    latency_target: Annotated[str | None, typer.Option(help="the deployment's latencyTarget, e.g. 50ms")] = None,
    sweep: Annotated[bool, typer.Option("--sweep", help="raise the load until the target is missed; bisect")] = False,
    sweep_max: Annotated[float | None, typer.Option(help="highest rate or concurrency a sweep tries")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="write the result here (tritonDeployments[].loadtestResult.path)")] = None,
    stack: Annotated[str | None, typer.Option("--stack", "-s", help="with --deployment: its latencyTarget and result path")] = None,
    deployment: Annotated[str | None, typer.Option(help="with --stack: the tritonDeployments[].name measured")] = None,
    project_dir: ProjectOption = None,
    llm: Annotated[bool, typer.Option("--llm", help="stream tokens from a decoupled LLM model; measure TTFT/ITL")] = False,
    input_tokens: Annotated[str, typer.Option(help="--llm: prompt words (~tokens): 128, or uniform 64:256")] = "128",
    output_tokens: Annotated[str, typer.Option(help="--llm: tokens to generate: 128, or uniform 64:256")] = "128",
    prompts: Annotated[Path | None, typer.Option(help='--llm: JSON lines {"text": ..., "output_tokens": n}')] = None,
    ttft_target: Annotated[str | None, typer.Option(help="--llm: time-to-first-token target, e.g. 500ms")] = None,
    itl_target: Annotated[str | None, typer.Option(help="--llm: inter-token latency target, e.g. 50ms")] = None,
    gpu: Annotated[str | None, typer.Option(help="--llm: the GPU that served it (sizing checks it), e.g. H100")] = None,
) -> None:
    """Drive one model at a rate (Poisson arrivals) or a concurrency; warm up, measure in windows until three
    agree; print offered and achieved rate, percentiles, errors, the saturation verdict and Triton's queue vs
    compute time. With --sweep and --latency-target, find the highest throughput whose percentile meets the
    target: the capacity sizing and the HPA use (tritonDeployments[].loadtestResult).

    With --llm, stream tokens from a decoupled LLM (gRPC streaming, or HTTP generate_stream): TTFT, inter-token
    and end-to-end latency, output and total tokens/s, goodput against --ttft-target and --itl-target.

    Exit 1 when the server or model cannot be reached, an argument's value is bad, every request failed, the
    error-rate gate stopped the run, or no sweep point met the target; 64 when neither or both of --rate and
    --concurrency are given, or --sweep has no --latency-target."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from tritonfleet import loadtest as lt
    from tritonfleet.output_paths import OutputError, check_output_file

    if (stack is None) != (deployment is None):
        raise user_error("--stack and --deployment go together", EXIT_USAGE)
    if stack is not None and deployment is not None:
        latency_target, json_file = _deployment_defaults(stack, deployment, project_dir, latency_target, json_file)
        if llm:
            ttft_target, itl_target, gpu = _llm_defaults(stack, deployment, project_dir, ttft_target, itl_target, gpu)
    if protocol is Protocol.openai and not llm:
        raise user_error("--protocol openai streams tokens: add --llm (or use http or grpc)", EXIT_USAGE)
    if llm:
        options = {"url": url, "model": model, "model_version": model_version, "protocol": protocol.value,
                   "rate": rate, "concurrency": concurrency, "duration_s": duration, "warmup_s": warmup,
                   "max_requests": requests, "replicas": replicas, "timeout_s": timeout,
                   "arrivals": arrivals.value, "percentile": percentile, "max_error_share": max_error_rate,
                   "gpu": gpu}  # fmt: skip
        _loadtest_llm(options, (input_tokens, output_tokens, prompts, ttft_target, itl_target), json_file)
        return
    try:
        plan = lt.Plan(
            url=url, model=model, model_version=model_version, protocol=protocol.value, rate=rate,
            concurrency=concurrency, duration_s=duration, max_requests=requests, batch_size=batch_size,
            replicas=replicas, timeout_s=timeout, arrivals=arrivals.value, schedule_us=_schedule(schedule),
            warmup_s=warmup, window_s=window, stability_percent=stability_percent if window else None,
            percentile=percentile, latency_target_ms=parse_target_ms(latency_target), shapes=parse_shapes(shape or []),
            input_data=input_data, distinct=distinct, string_length=string_length, max_error_share=max_error_rate,
        )  # fmt: skip
        if sweep and plan.latency_target_ms is None:
            raise lt.LoadtestUsageError("--sweep needs --latency-target (the deployment's latencyTarget, e.g. "
                                        "--latency-target 50ms): capacity is the most it carries within it")  # fmt: skip
        plan.check()
        if json_file:
            check_output_file(json_file)  # before the load test, not after it
        columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
        with Progress(*columns, console=err, transient=True) as bar:
            if sweep:
                task = bar.add_task(f"{model}: sweep", total=None)
                limit = sweep_max or (lt.MAX_IN_FLIGHT if concurrency is not None else 100_000)
                result = lt.sweep(plan, limit, lambda at: bar.update(task, description=f"{model}: {at}"))
            else:
                task = bar.add_task(f"{model}: 0 done", total=duration + warmup)
                result = lt.run(plan, lambda elapsed, done: bar.update(task, completed=elapsed, description=f"{model}: {done} done"))
    except lt.LoadtestUsageError as error:
        raise user_error(str(error), EXIT_USAGE) from None
    except (lt.LoadtestError, OutputError) as error:
        raise user_error(str(error)) from None
    per_replica = (result.capacity.achieved_inferences_per_second / result.replicas if result.capacity
                   else result.inferences_per_second_per_replica)  # fmt: skip
    _report(result, loadtest_table(result), verdict_lines(result), json_file,
            f"{per_replica:,.1f} inferences/s per replica")  # fmt: skip
    if result.succeeded == 0:
        raise user_error(f"no request to '{model}' succeeded")
    if sweep and result.capacity is None:
        first = result.curve[0]
        at = f"--rate {first.offered_rate:g}" if first.offered_rate is not None else f"--concurrency {first.concurrency}"
        raise user_error(f"no load point met p{percentile} <= {latency_target}, not even the first ({at}): start "
                         "the sweep lower, or the model cannot meet this target on this server")  # fmt: skip
    gate = [r for r in (result.saturation.reasons if result.saturation else []) if r.startswith("stopped early")]
    if gate:
        raise user_error(gate[0])


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


def verdict_lines(result: Any) -> list[str]:
    """How the run was made and what it says: arrivals, windows, saturation, Triton's own times, the sweep."""
    lines = [f"arrivals {result.arrivals}, warm-up {result.warmup_s:g} s, latency from the {result.latency_measured_from}"]
    if result.stable is not None:
        agreed = "agreed" if result.stable else "did not agree"
        lines.append(f"{len(result.windows)} windows {agreed} within {result.stability_percent:g} %")
    if result.saturation is not None:
        verdict = "saturated: " + "; ".join(result.saturation.reasons) if result.saturation.saturated else "not saturated"
        lines.append(f"verdict: {verdict}")
    if result.server is not None:
        lines.append(f"Triton per request: queue {result.server.queue_ms:,.2f} ms, compute {result.server.compute_ms:,.2f} "
                     f"ms ({result.server.requests} requests)")  # fmt: skip
    latency = result.latency_ms.at(result.percentile)
    if result.latency_target_ms is not None and not result.curve and latency is not None:
        verdict = "meets" if latency <= result.latency_target_ms else "misses"
        lines.append(f"p{result.percentile} {latency:,.1f} ms {verdict} the target of {result.latency_target_ms:g} ms")
    for point in result.curve:
        at = f"{point.offered_rate:g}/s" if point.offered_rate is not None else f"c={point.concurrency}"
        mark = "meets" if point.meets_target else "misses"
        lines.append(f"  {at:>10}: {point.achieved_inferences_per_second:,.1f} infer/s, p{result.percentile} "
                     f"{_ms(point.latency_ms.at(result.percentile))} ms, {mark} the target")  # fmt: skip
    if result.curve:
        capacity = result.capacity
        lines.append("capacity: none within the target" if capacity is None else
                     f"capacity: {capacity.achieved_inferences_per_second:,.1f} inferences/s within "
                     f"{result.latency_target_ms:g} ms (p{result.percentile} {capacity.latency_ms:,.1f} ms)")  # fmt: skip
    return lines


def _deployment_defaults(
    stack: str, deployment: str, project_dir: Path | None, latency_target: str | None, json_file: Path | None
) -> tuple[str | None, Path | None]:
    """A deployment's latencyTarget and loadtestResult path (in its project) where the options do not say."""
    _, found = stack_deployment(stack, deployment, project_dir)
    if json_file is None and found.loadtest_result is not None:
        from tritonfleet.plan.project import find_project

        path = Path(found.loadtest_result.path)
        json_file = path if path.is_absolute() else (project_dir or find_project(Path.cwd())) / path
    return latency_target or found.latency_target, json_file


def _llm_defaults(
    stack: str, deployment: str, project_dir: Path | None, ttft_target: str | None, itl_target: str | None,
    gpu: str | None,
) -> tuple[str | None, str | None, str | None]:
    """An llm deployment's TTFT and ITL targets and its pool's GPU where the options do not say: the result is then
    measured against what sizing holds it to, on the GPU sizing checks."""
    config, found = stack_deployment(stack, deployment, project_dir)
    if found.llm is not None:
        ttft_target = ttft_target or found.llm.ttft_target
        itl_target = itl_target or found.llm.itl_target
    return ttft_target, itl_target, gpu or config.instance_type(config.pool(found.pool)).gpu


def _schedule(path: Path | None) -> tuple[int, ...]:
    """perf_analyzer's --request-intervals file: one gap in microseconds a line."""
    from tritonfleet.loadtest import LoadtestError

    if path is None:
        return ()
    try:
        lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        gaps = tuple(int(line) for line in lines)
    except OSError as error:
        raise LoadtestError(f"cannot read --schedule {path}: {error.strerror or error}") from None
    except ValueError:
        raise LoadtestError(f"--schedule {path}: one whole number of microseconds a line, e.g. 20000") from None
    if not gaps:
        raise LoadtestError(f"--schedule {path} is empty: one gap in microseconds a line, e.g. 20000")
    return gaps


def parse_target_ms(text: str | None, option: str = "--latency-target") -> float | None:
    import re

    from tritonfleet.core.config.schema import LATENCY_PATTERN, latency_ms
    from tritonfleet.loadtest import LoadtestError

    if text is None:
        return None
    if not re.match(LATENCY_PATTERN, text) or latency_ms(text) <= 0:
        raise LoadtestError(f"{option} {text}: a time with its unit, such as 50ms or 1.5s")
    return latency_ms(text)


def parse_shapes(given: list[str]) -> dict[str, tuple[int, ...]]:
    from tritonfleet.loadtest import LoadtestError

    shapes = {}
    for item in given:
        name, _, text = item.rpartition(":")
        try:
            dims = tuple(int(d) for d in text.split(","))
        except ValueError:
            dims = ()
        if not name or not dims or any(d <= 0 for d in dims):
            raise LoadtestError(f"--shape {item}: NAME:d1,d2,... with dims > 0, e.g. --shape IMAGE:224,224,3")
        shapes[name] = dims
    return shapes


def loadtest_llm_table(result: Any) -> Table:
    """GenAI-Perf's headline figures: TTFT, inter-token and end-to-end latency percentiles, tokens/s, goodput."""
    table = Table(title=f"loadtest --llm {result.model} over {result.protocol} ({result.mode}), "
                  f"{result.duration_s:.1f} s")  # fmt: skip
    for column in ("ms", "p50", "p90", "p95", "p99", "max"):
        table.add_column(column, justify="right")
    for name, latency in (("TTFT", result.ttft_ms), ("ITL", result.itl_ms), ("end-to-end", result.e2e_ms)):
        table.add_row(name, *(_ms(latency.at(q)) for q in (50, 90, 95, 99)), _ms(latency.max))
    return table


def loadtest_llm_lines(result: Any) -> list[str]:
    offered = f"{result.offered_rate:g}/s offered" if result.offered_rate is not None else f"concurrency {result.concurrency}"
    goodput = result.goodput
    targets = ", ".join(f"{name} <= {value:g} ms" for name, value in (("TTFT", goodput.ttft_target_ms),
                        ("ITL", goodput.itl_target_ms)) if value is not None) or "no targets"  # fmt: skip
    verdict = "saturated: " + "; ".join(result.saturation.reasons) if result.saturation.saturated else "not saturated"
    return [
        f"{offered}: {result.requests_per_second:,.2f} req/s, out tok/s {result.output_tokens_per_second:,.1f}, "
        f"total tok/s {result.total_tokens_per_second:,.1f}, errors {result.errors} of {result.requests}",
        f"input tokens {result.input_tokens.distribution} (mean {_ms(result.input_tokens.mean)}), output tokens "
        f"{result.output_tokens.distribution} (mean {_ms(result.output_tokens.mean)})",
        f"goodput ({targets}): {goodput.requests_per_second:,.2f} req/s, {goodput.share:.0%} of requests",
        f"arrivals {result.arrivals}, warm-up {result.warmup_s:g} s, latency from the {result.latency_measured_from}",
        f"tokens: {result.token_counting}",
        f"verdict: {verdict}",
    ]


def _report(result: Any, table: Any, lines: list[str], json_file: Path | None, per_replica: str) -> None:
    """A load test's table, its lines wrapped at 80 columns, its error samples, and its result file."""
    out.print(table)
    for line in lines:
        for part in wrapped(line, 80):
            out.print(part, soft_wrap=True, markup=False)
    for sample in result.error_samples:
        print_labelled(err, "error sample:", "yellow", sample)
    if json_file:
        write(json_file, result.dumps())
        out.print(f"Result written to {json_file}: {per_replica}", markup=False)


def _loadtest_llm(
    options: dict[str, Any], llm: tuple[str, str, Path | None, str | None, str | None], json_file: Path | None
) -> None:
    """`loadtest --llm`: the streaming run, its table and lines, and its result file."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from tritonfleet import loadtest as lt
    from tritonfleet import loadtest_llm as ltl
    from tritonfleet.output_paths import OutputError, check_output_file

    input_tokens, output_tokens, prompts, ttft_target, itl_target = llm
    try:
        plan = ltl.LlmPlan(
            **options, input_tokens=ltl.parse_lengths(input_tokens, "--input-tokens"),
            output_tokens=ltl.parse_lengths(output_tokens, "--output-tokens"),
            prompts=ltl.read_prompts(prompts) if prompts else (), prompts_file=str(prompts or ""),
            ttft_target_ms=parse_target_ms(ttft_target, "--ttft-target"), itl_target_ms=parse_target_ms(itl_target, "--itl-target"),
        )  # fmt: skip
        plan.check()
        if json_file:
            check_output_file(json_file)
        columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task(f"{plan.model}: 0 done", total=plan.duration_s + plan.warmup_s)
            result = ltl.run(plan, lambda elapsed, done: bar.update(task, completed=elapsed,
                                                                    description=f"{plan.model}: {done} done"))  # fmt: skip
    except lt.LoadtestUsageError as error:
        raise user_error(str(error), EXIT_USAGE) from None
    except (lt.LoadtestError, OutputError) as error:
        raise user_error(str(error)) from None
    per_replica = f"{result.output_tokens_per_second_per_replica:,.1f} output tokens/s per replica"
    _report(result, loadtest_llm_table(result), loadtest_llm_lines(result), json_file, per_replica)
    if result.succeeded == 0:
        raise user_error(f"no stream from '{options['model']}' succeeded")
    gate = [r for r in result.saturation.reasons if r.startswith("stopped early")]
    if gate:
        raise user_error(gate[0])

