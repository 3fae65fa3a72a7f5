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
    openai = "openai"  # --llm only: an OpenAI-compatible frontend's streaming /v1/completions


class Arrivals(StrEnum):
    poisson = "poisson"
    uniform = "uniform"


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
    from tritonfleet.cli import _deployment

    _, found = _deployment(stack, deployment, project_dir)
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
    from tritonfleet.cli import _deployment

    config, found = _deployment(stack, deployment, project_dir)
    if found.llm is not None:
        ttft_target = ttft_target or found.llm.ttft_target
        itl_target = itl_target or found.llm.itl_target
    return ttft_target, itl_target, gpu or config.instance_type(config.pool(found.pool)).gpu


def _numbers(text: str, option: str, keep: bool = False) -> list[Any]:
    """A comma-separated list of whole numbers >= 0 (or `keep`: the model's own setting)."""
    from tritonfleet.loadtest import LoadtestError

    if keep and text.strip() == "keep":
        return [None]
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = [-1]
    if not values or any(v < 0 for v in values):
        raise LoadtestError(f"{option} {text}: whole numbers >= 0 separated by commas, e.g. 1,2,4"
                            + (", or keep" if keep else ""))  # fmt: skip
    return values


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


def _target_ms(text: str | None, option: str = "--latency-target") -> float | None:
    import re

    from tritonfleet.core.config.schema import LATENCY_PATTERN, latency_ms
    from tritonfleet.loadtest import LoadtestError

    if text is None:
        return None
    if not re.match(LATENCY_PATTERN, text) or latency_ms(text) <= 0:
        raise LoadtestError(f"{option} {text}: a time with its unit, such as 50ms or 1.5s")
    return latency_ms(text)


def _shapes(given: list[str]) -> dict[str, tuple[int, ...]]:
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


def _report(
    out: Console, err: Console, result: Any, table: Any, lines: list[str], json_file: Path | None, per_replica: str
) -> None:
    """A load test's table, its lines wrapped at 80 columns, its error samples, and its result file."""
    from tritonfleet.output_paths import OutputError, write_output

    out.print(table)
    for line in lines:
        for part in _wrapped(line, 80):
            out.print(part, soft_wrap=True, markup=False)
    for sample in result.error_samples:
        print_labelled(err, "error sample:", "yellow", sample)
    if json_file:
        try:
            write_output(json_file, result.dumps())
        except OutputError as error:
            raise _fail(err, str(error)) from None
        out.print(f"Result written to {json_file}: {per_replica}", markup=False)


def _loadtest_llm(
    out: Console, err: Console, options: dict[str, Any], llm: tuple[str, str, Path | None, str | None, str | None],
    json_file: Path | None,
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
            ttft_target_ms=_target_ms(ttft_target, "--ttft-target"), itl_target_ms=_target_ms(itl_target, "--itl-target"),
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
        raise _fail(err, str(error), EXIT_USAGE) from None
    except (lt.LoadtestError, OutputError) as error:
        raise _fail(err, str(error)) from None
    per_replica = f"{result.output_tokens_per_second_per_replica:,.1f} output tokens/s per replica"
    _report(out, err, result, loadtest_llm_table(result), loadtest_llm_lines(result), json_file, per_replica)
    if result.succeeded == 0:
        raise _fail(err, f"no stream from '{options['model']}' succeeded")
    gate = [r for r in result.saturation.reasons if r.startswith("stopped early")]
    if gate:
        raise _fail(err, gate[0])


def register(app: typer.Typer, out: Console, err: Console) -> None:
    """Add the sizing commands to the `tritonfleet` app."""

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
        project_dir: Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")] = None,
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
            raise _fail(err, "--stack and --deployment go together", EXIT_USAGE)
        if stack is not None and deployment is not None:
            latency_target, json_file = _deployment_defaults(stack, deployment, project_dir, latency_target, json_file)
            if llm:
                ttft_target, itl_target, gpu = _llm_defaults(stack, deployment, project_dir, ttft_target, itl_target, gpu)
        if protocol is Protocol.openai and not llm:
            raise _fail(err, "--protocol openai streams tokens: add --llm (or use http or grpc)", EXIT_USAGE)
        if llm:
            options = {"url": url, "model": model, "model_version": model_version, "protocol": protocol.value,
                       "rate": rate, "concurrency": concurrency, "duration_s": duration, "warmup_s": warmup,
                       "max_requests": requests, "replicas": replicas, "timeout_s": timeout,
                       "arrivals": arrivals.value, "percentile": percentile, "max_error_share": max_error_rate,
                       "gpu": gpu}  # fmt: skip
            _loadtest_llm(out, err, options, (input_tokens, output_tokens, prompts, ttft_target, itl_target), json_file)
            return
        try:
            plan = lt.Plan(
                url=url, model=model, model_version=model_version, protocol=protocol.value, rate=rate,
                concurrency=concurrency, duration_s=duration, max_requests=requests, batch_size=batch_size,
                replicas=replicas, timeout_s=timeout, arrivals=arrivals.value, schedule_us=_schedule(schedule),
                warmup_s=warmup, window_s=window, stability_percent=stability_percent if window else None,
                percentile=percentile, latency_target_ms=_target_ms(latency_target), shapes=_shapes(shape or []),
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
            raise _fail(err, str(error), EXIT_USAGE) from None
        except (lt.LoadtestError, OutputError) as error:
            raise _fail(err, str(error)) from None
        per_replica = (result.capacity.achieved_inferences_per_second / result.replicas if result.capacity
                       else result.inferences_per_second_per_replica)  # fmt: skip
        _report(out, err, result, loadtest_table(result), verdict_lines(result), json_file,
                f"{per_replica:,.1f} inferences/s per replica")  # fmt: skip
        if result.succeeded == 0:
            raise _fail(err, f"no request to '{model}' succeeded")
        if sweep and result.capacity is None:
            first = result.curve[0]
            at = f"--rate {first.offered_rate:g}" if first.offered_rate is not None else f"--concurrency {first.concurrency}"
            raise _fail(err, f"no load point met p{percentile} <= {latency_target}, not even the first ({at}): start "
                        "the sweep lower, or the model cannot meet this target on this server")  # fmt: skip
        gate = [r for r in (result.saturation.reasons if result.saturation else []) if r.startswith("stopped early")]
        if gate:
            raise _fail(err, gate[0])

    @app.command(short_help="find the Triton model configuration with the most capacity within a latency target")
    def tune(
        model: Annotated[str, typer.Option("--model", "-m", help="the model name as Triton serves it")],
        latency_target: Annotated[str, typer.Option(help="the deployment's latencyTarget, e.g. 50ms")],
        url: Annotated[str, typer.Option(help="host:port of Triton's HTTP endpoint (explicit model control)")] = "127.0.0.1:8000",
        instances: Annotated[str, typer.Option(help="instance counts to try, e.g. 1,2,4")] = "1,2",
        max_batch_sizes: Annotated[str, typer.Option(help="max_batch_size values, or keep (the model's own)")] = "keep",
        queue_delays_us: Annotated[str, typer.Option(help="dynamic batcher queue delays in us, or keep")] = "keep",
        preferred: Annotated[str, typer.Option(help="preferred batch sizes with a queue delay, e.g. 4,8")] = "",
        rate: Annotated[float, typer.Option(help="each sweep's first rate (requests/s, Poisson)")] = 10.0,
        sweep_max: Annotated[float, typer.Option(help="each sweep's highest rate")] = 100_000.0,
        duration: Annotated[float, typer.Option(help="seconds per sweep point, after the warm-up")] = 5.0,
        warmup: Annotated[float, typer.Option(help="seconds of load before each point")] = 1.0,
        percentile: Annotated[int, typer.Option(help="latency percentile held to the target: 50/90/95/99")] = 99,
        shape: Annotated[list[str] | None, typer.Option(help="NAME:d1,d2 for an input's variable dims (repeat)")] = None,
        input_data: Annotated[Path | None, typer.Option(help="perf_analyzer's --input-data JSON of real tensors")] = None,
        gpu: Annotated[str | None, typer.Option(help="the catalog GPU whose memory bounds the instances, e.g. H100")] = None,
        gpus: Annotated[int, typer.Option(help="GPUs per replica (with --gpu)")] = 1,
        instance_memory_gib: Annotated[float | None, typer.Option(help="GPU memory one instance takes (with --gpu)")] = None,
        json_file: Annotated[Path | None, typer.Option("--json", help="write the winner's sweep here (loadtestResult.path)")] = None,
        patch: Annotated[Path | None, typer.Option(help="write the winner as config.pbtxt fields here")] = None,
    ) -> None:
        """Search instance count, max_batch_size, queue delay and preferred batch sizes on a running tritonserver
        (explicit model control): sweep each under Poisson arrivals and keep the one with the most capacity within
        the latency target; write it as a config.pbtxt patch and a loadtest result. The model is reloaded with its
        repository configuration at the end.

        Exit 1 when the server, model or a value is wrong, or no candidate met the target; 64 on a usage error."""
        from tritonfleet import loadtest as lt
        from tritonfleet import tune as tuning
        from tritonfleet.core.catalog import load_catalog

        try:
            found = tuning.candidates(_numbers(instances, "--instances"), _numbers(max_batch_sizes, "--max-batch-sizes", keep=True),
                                      _numbers(queue_delays_us, "--queue-delays-us", keep=True),
                                      _numbers(preferred, "--preferred") if preferred else [])  # fmt: skip
            memory = None
            if gpu is not None:
                gpus_known = load_catalog().gpus
                if gpu not in gpus_known:
                    raise lt.LoadtestError(f"--gpu {gpu}: not in the catalog (it has: {', '.join(gpus_known)})")
                memory = gpus_known[gpu].memory_gb * 1e9 / 2**30  # the catalog's GB, in GiB
            found, skipped = tuning.within_memory(found, memory, instance_memory_gib, gpus)
            plan = lt.Plan(url=url, model=model, rate=rate, duration_s=duration, warmup_s=warmup, window_s=0,
                           percentile=percentile, latency_target_ms=_target_ms(latency_target),
                           shapes=_shapes(shape or []), input_data=input_data)  # fmt: skip
            plan.check()
            for note in skipped:
                err.print(f"not tried: {note}", soft_wrap=True, markup=False)
            trials = tuning.tune(plan, found, sweep_max, lambda at: err.print(f"tune {model}: {at}", markup=False))
        except lt.LoadtestUsageError as error:
            raise _fail(err, str(error), EXIT_USAGE) from None
        except lt.LoadtestError as error:
            raise _fail(err, str(error)) from None
        for trial in trials:
            figure = f"{trial.capacity:,.1f} inferences/s" if trial.result else f"did not load: {trial.error}"
            for part in _wrapped(f"  {trial.candidate.describe()}: {figure}", 80):
                out.print(part, markup=False)
        best = tuning.winner(trials)
        if best is None or best.result is None:
            raise _fail(err, f"no candidate met p{percentile} <= {latency_target}: start lower (--rate) or widen the "
                        "candidates")  # fmt: skip
        out.print(f"Best: {best.candidate.describe()} ({best.capacity:,.1f} inferences/s)", markup=False)
        if patch:
            patch.write_text(tuning.patch_text(best.candidate, trials, plan.latency_target_ms or 0, percentile))
            out.print(f"config.pbtxt fields written to {patch}", markup=False)
        if json_file:
            json_file.parent.mkdir(parents=True, exist_ok=True)
            json_file.write_text(best.result.dumps())
            out.print(f"Result written to {json_file} (tritonDeployments[].loadtestResult.path)", markup=False)

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
        try:
            peak_load(config, target, capacities.get(deployment), rails)
        except ValueError as error:
            raise _fail(err, str(error)) from None
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


def sizing_lines(plan: dict, width: int = 80) -> list[str]:
    """The plan's $/1M lines per deployment and per pool, each within `width` (80) columns."""
    sizing = plan.get("sizing")
    if not sizing:
        return []
    lines = [f"Sizing (headroom {sizing['headroom']:.0%}; $/1M at whole nodes, idle GPUs included):"]
    for d in sizing["deployments"]:
        capacity = d["capacity"]
        tokens = d.get("outputTokensPerSecond")
        if isinstance(capacity, dict):
            per_second = capacity.get("outputTokensPerSecond", capacity.get("inferencesPerSecond"))
            source = f"{capacity['kind']} {per_second:,.0f} {'output tokens' if tokens else 'inferences'}/s"
        else:
            source = capacity
        lines += _wrapped(f"  {d['deployment']} ({d['pool']}): {_replicas(d['replicas'])} replicas; capacity {source}", width)
        per = "$/1M output tokens" if tokens else "$/1M"
        lines += _wrapped(f"    {per} peak {_per_million(d['usdPer1M']['peak'])}, average {_per_million(d['usdPer1M']['average'])}", width)
        if tokens:
            lines += _wrapped(f"    output tokens/s at {tokens['minReplicas']:,.0f} (min replicas) to "
                              f"{tokens['maxReplicas']:,.0f} (max replicas); peak {_count(tokens['peak'])}", width)  # fmt: skip
            if d["maxReplicasCarryPeak"] is False:
                lines += _wrapped(f"    warning: maxReplicas cannot carry the peak of {_count(tokens['peak'])} output "
                                  "tokens/s at the TTFT/ITL targets", width)  # fmt: skip
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


def _count(value: Any) -> str:
    return f"{value:,.0f}" if isinstance(value, (int, float)) else str(value)


def _per_million(value: Any) -> str:
    return f"${value:,.4f}" if isinstance(value, (int, float)) else str(value)
