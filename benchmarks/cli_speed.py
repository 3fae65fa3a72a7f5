"""How fast are `tritonfleet policy check`, the CLI's garbage-collector setting and its start-up? Ratios measured in
this one run.

1. `policy check --stack prod` reusing a saved plans/prod.json (inputs unchanged) against planning afresh, and
   against the pack itself (a process that only runs the policy check on a loaded plan document).
   Target: reuse costs < 1 s beyond the pack itself.
2. `plan --stack prod` as shipped (the cyclic GC off for the command) against the GC left on, and against
   `gc.freeze()` once the SDKs are imported. Adopted where measured faster.
3. With --against REF (a commit, e.g. main): `tritonfleet --help` and `plan --stack prod` of this checkout against
   the same commands of REF's tree (exported with git archive), each run from its own tree. Target: ratio <= 1 (a
   change to the CLI's layout must not slow its start-up).

Variants run interleaved (paired), medians of --rounds rounds; wall and CPU seconds (CPU is steadier on a busy
machine). Run: venv/bin/python benchmarks/cli_speed.py [--rounds N] [--against REF]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import ENV, ROOT, Timing, interleaved, load

PACK_ONLY = """
import json, sys
from pathlib import Path
from tritonfleet.policycheck.check import check
check(Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())).section()
"""
# The CLI as shipped, except for the GC setting of its plan commands (tritonfleet/cli/output.py: without_cyclic_gc
# calls gc.disable).
CLI_WITH = """
import gc, sys
import tritonfleet.cli as cli
{setting}
cli.main()
"""
GC_SETTINGS = {
    "GC off (shipped)": "",
    "GC on": "gc.disable = lambda: None",
    "gc.freeze() after SDK imports": (
        "import tritonfleet.plan.harness, pulumi_aws, pulumi_kubernetes, pulumi_random\n"
        "gc.disable = gc.freeze"
    ),
}


def project_copy(base: Path) -> Path:
    """A project folder with the checkout's code and stacks (linked), and a plans/ folder of its own."""
    project = base / "project"
    project.mkdir(parents=True)
    for name in ("__main__.py", "components", "policies", "charts", "stacks"):
        (project / name).symlink_to(ROOT / name)
    for name in ("Pulumi.yaml", "pyproject.toml"):
        shutil.copy(ROOT / name, project / name)
    return project


def exported(ref: str, base: Path) -> Path:
    """REF's tree, exported with git archive."""
    tree = base / "against"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def startup(rounds: int, ref: str, scratch: Path) -> dict[str, dict[str, float]]:
    """`--help` and `plan --stack prod` of this checkout against REF's: `python -m tritonfleet` run in each tree, with
    that tree on PYTHONPATH (for the policy pack's process too)."""
    tree = exported(ref, scratch)
    python = sys.executable
    for folder in (ROOT, tree):  # both trees' bytecode written beforehand: $PYTHONDONTWRITEBYTECODE may be set
        subprocess.run([python, "-m", "compileall", "-q", *(str(folder / p) for p in ("tritonfleet", "components", "policies"))],
                       check=True, capture_output=True)  # fmt: skip
    ratios = {}
    for label, args, times in (("--help", ["--help"], rounds * 4), ("plan --stack prod", ["plan", "--stack", "prod"], rounds)):
        variants = {name: (["env", f"PYTHONPATH={folder}", python, "-m", "tritonfleet", *args], folder)
                    for name, folder in (("this checkout", ROOT), (ref, tree))}  # fmt: skip
        interleaved(1, variants)  # once, not timed: the files in the page cache
        timings = interleaved(times, variants)
        print(f"{label}, this checkout against {ref}:")
        show(timings, ref)
        ratios[label] = {k: round(getattr(timings["this checkout"], k) / getattr(timings[ref], k), 3) for k in ("wall", "cpu")}
    return ratios


def show(timings: dict[str, Timing], base: str) -> None:
    for name, t in timings.items():
        print(
            f"  {name:32} wall {t.wall:6.2f} s ({t.wall / timings[base].wall:.2f}x)   "
            f"cpu {t.cpu:6.2f} s ({t.cpu / timings[base].cpu:.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are kept")
    parser.add_argument("--against", metavar="REF", help="also time start-up against this commit's tree (e.g. main)")
    args = parser.parse_args()
    python = sys.executable
    print(load())

    with tempfile.TemporaryDirectory() as scratch:
        project = project_copy(Path(scratch))
        saved = project / "plans" / "prod.json"
        saved.parent.mkdir()
        subprocess.run([python, "-m", "tritonfleet", "plan", "--stack", "prod", "--json", str(saved)], cwd=ROOT, env=ENV,
                       check=True, capture_output=True)
        fresh_project = project_copy(Path(scratch) / "fresh")  # no plans/: every check plans afresh
        check = [python, "-m", "tritonfleet", "policy", "check", "--stack", "prod", "--project-dir"]
        policy = interleaved(
            args.rounds,
            {
                "policy check, saved plan reused": ([*check, str(project)], ROOT),
                "policy check, planning afresh": ([*check, str(fresh_project)], ROOT),
                "the pack itself (no CLI, no plan)": ([python, "-c", PACK_ONLY, str(project), str(saved)], ROOT),
            },
        )
        started = startup(args.rounds, args.against, Path(scratch)) if args.against else None
    print("policy check --stack prod:")
    show(policy, "policy check, planning afresh")
    reuse, pack = policy["policy check, saved plan reused"], policy["the pack itself (no CLI, no plan)"]
    print(f"  reuse beyond the pack itself: wall {reuse.wall - pack.wall:+.2f} s, cpu {reuse.cpu - pack.cpu:+.2f} s (target < 1 s)")

    plans = interleaved(
        args.rounds,
        {name: ([python, "-c", CLI_WITH.format(setting=s), "plan", "--stack", "prod"], ROOT) for name, s in GC_SETTINGS.items()},
    )
    print("plan --stack prod, garbage collector:")
    show(plans, "GC on")
    print(load())
    print(
        json.dumps(
            {
                "reuseOverFresh": {k: round(getattr(reuse, k) / getattr(policy["policy check, planning afresh"], k), 3) for k in ("wall", "cpu")},
                "reuseBeyondPackS": {k: round(getattr(reuse, k) - getattr(pack, k), 3) for k in ("wall", "cpu")},
                "gcOffOverOn": {k: round(getattr(plans["GC off (shipped)"], k) / getattr(plans["GC on"], k), 3) for k in ("wall", "cpu")},
                "freezeOverOn": {
                    k: round(getattr(plans["gc.freeze() after SDK imports"], k) / getattr(plans["GC on"], k), 3) for k in ("wall", "cpu")
                },
                **({f"startupOver{args.against}": started} if started else {}),
            }
        )
    )


if __name__ == "__main__":
    main()
