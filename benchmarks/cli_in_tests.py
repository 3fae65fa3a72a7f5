"""How much does the tests' CLI fork server (tests/cli_forkserver.py) save per command? Ratios measured in this run.

The tests run `tritonfleet ...` hundreds of times. `run_cli` forks each command from a warm process (SDKs and our
modules imported) instead of starting a fresh interpreter. Each command below runs both ways, interleaved, and the
median wall times are compared: a config error (what most CLI tests run), `--version`, and a plan of the dev stack.
Wall time only: the forked commands are the server's children, whose CPU time reaches no one here until it exits.
Run: venv/bin/python benchmarks/cli_in_tests.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from measure import ENV, ROOT, load

sys.path.insert(0, str(ROOT))
from tests.cli_forkserver import ForkServer  # noqa: E402

COMMANDS = {
    "unknown stack (exit 1)": ["plan", "--stack", "no-such-stack"],
    "--version": ["--version"],
    "plan --stack dev": ["plan", "--stack", "dev"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians are kept")
    args = parser.parse_args()
    print(load())
    started = time.perf_counter()
    server = ForkServer(ROOT)
    server.run(["--version"], ROOT, ENV, 300)
    print(f"fork server ready in {time.perf_counter() - started:.2f} s (once per test run)")
    try:
        for label, command in COMMANDS.items():
            fresh, forked = [], []
            for _ in range(args.rounds):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "tritonfleet", *command], cwd=ROOT, env=ENV, capture_output=True)
                fresh.append(time.perf_counter() - start)
                start = time.perf_counter()
                server.run(command, ROOT, ENV, 300)
                forked.append(time.perf_counter() - start)
            f, k = statistics.median(fresh), statistics.median(forked)
            print(f"  {label:24} fresh interpreter {f:6.2f} s   forked {k:6.2f} s   ({k / f:.2f}x)")
    finally:
        server.close()


if __name__ == "__main__":
    main()
