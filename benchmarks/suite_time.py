"""Does the test suite run in under 3 minutes on this machine? The ratio to that target, measured in this run.

Runs the pytest command of `make test` (read from the Makefile, the one place it is written) as CI meets it on a
fresh clone: no bytecode and no plan cache yet (a fresh PYTHONPYCACHEPREFIX and pytest cache_dir in a temporary
folder, so this checkout's own caches are neither used nor touched). Prints the wall time, the CPU time of everything
it waited for, the test counts and wall / 180 s. Assumes `make install-test` has run (venv, venv-checkov, venv-nca).
Run: venv/bin/python benchmarks/suite_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time

from measure import ROOT, load

TARGET_S = 180.0


def suite_command() -> list[str]:
    """`make test`'s pytest invocation, with the venv's python (the Makefile's $(VENV) is venv by default)."""
    recipe = re.search(r"^test:.*\n\t(.+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    if recipe is None:
        raise SystemExit("no test recipe in the Makefile")
    words = shlex.split(recipe.group(1).replace("$(VENV)", "venv"))
    return words[words.index("venv/bin/python") :]


def run_cold(command: list[str]) -> tuple[float, float, str]:
    """Wall time, CPU time (user + system of all it waited for) and pytest's summary line of one cold run."""
    with tempfile.TemporaryDirectory(prefix="tritonfleet-suite-") as folder:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "pycache")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "-o", f"cache_dir={folder}/pytest-cache"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = done.stdout.strip().splitlines()
    summary = lines[-1] if lines else done.stderr.strip()[-500:]
    if done.returncode != 0:
        print(done.stdout[-4000:], file=sys.stderr)
        raise SystemExit(f"the suite failed (exit {done.returncode}): {summary}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1, help="cold runs, one after the other")
    args = parser.parse_args()
    command = suite_command()
    print(load())
    print("command:", shlex.join(command))
    for run in range(1, args.runs + 1):
        wall, cpu, summary = run_cold(command)
        print(f"run {run}: {summary.strip('= ')}")
        print(f"  wall {wall:.0f} s ({wall / 60:.1f} min), cpu {cpu:.0f} s; wall / {TARGET_S:.0f} s target: {wall / TARGET_S:.2f}x")
    print(load())


if __name__ == "__main__":
    main()
