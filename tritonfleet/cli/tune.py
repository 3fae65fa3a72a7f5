"""`tritonfleet tune`: the Triton model configuration with the most capacity within a latency target, searched on a
running tritonserver."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tritonfleet.cli.loadtest import parse_shapes, parse_target_ms
from tritonfleet.cli.output import err, out, user_error
from tritonfleet.exit_codes import EXIT_USAGE
from tritonfleet.plan.text import wrapped

app = typer.Typer()


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
                       percentile=percentile, latency_target_ms=parse_target_ms(latency_target),
                       shapes=parse_shapes(shape or []), input_data=input_data)  # fmt: skip
        plan.check()
        for note in skipped:
            err.print(f"not tried: {note}", soft_wrap=True, markup=False)
        trials = tuning.tune(plan, found, sweep_max, lambda at: err.print(f"tune {model}: {at}", markup=False))
    except lt.LoadtestUsageError as error:
        raise user_error(str(error), EXIT_USAGE) from None
    except lt.LoadtestError as error:
        raise user_error(str(error)) from None
    for trial in trials:
        figure = f"{trial.capacity:,.1f} inferences/s" if trial.result else f"did not load: {trial.error}"
        for part in wrapped(f"  {trial.candidate.describe()}: {figure}", 80):
            out.print(part, markup=False)
    best = tuning.winner(trials)
    if best is None or best.result is None:
        raise user_error(f"no candidate met p{percentile} <= {latency_target}: start lower (--rate) or widen the "
                         "candidates")  # fmt: skip
    out.print(f"Best: {best.candidate.describe()} ({best.capacity:,.1f} inferences/s)", markup=False)
    if patch:
        patch.write_text(tuning.patch_text(best.candidate, trials, plan.latency_target_ms or 0, percentile))
        out.print(f"config.pbtxt fields written to {patch}", markup=False)
    if json_file:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(best.result.dumps())
        out.print(f"Result written to {json_file} (tritonDeployments[].loadtestResult.path)", markup=False)


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

