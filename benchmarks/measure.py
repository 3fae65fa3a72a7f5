"""Paired, interleaved timing of commands, for the benchmark scripts.

Each round runs every variant once, in turn, so that load from other processes on a shared machine falls on all
variants alike; medians over the rounds are compared as ratios. Both wall time and CPU time (user + system of the
process and everything it waited for, e.g. the policy pack) are kept: on a busy machine CPU time is the steadier one.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def run_once(command: list[str], cwd: Path = ROOT, ok: tuple[int, ...] = (0,)) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return Timing(wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))


def interleaved(rounds: int, variants: dict[str, tuple[list[str], Path]], ok: tuple[int, ...] = (0,)) -> dict[str, Timing]:
    """The median wall and CPU time of each variant over `rounds` rounds (one run of every variant per round)."""
    runs: dict[str, list[Timing]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, (command, cwd) in variants.items():
            runs[name].append(run_once(command, cwd, ok))
    return {
        name: Timing(statistics.median(t.wall for t in timings), statistics.median(t.cpu for t in timings))
        for name, timings in runs.items()
    }


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"
