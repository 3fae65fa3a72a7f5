"""How fast is the offline plan? Prints ratios measured in this one run (no absolute targets in tests).

1. `tritonfleet plan --stack prod` against its floor: a process that only imports the pulumi and provider SDK
   modules that the same plan loads (measured from a real plan run, so the floor tracks the program).
2. Plan time with 1, 10 and 100 Triton deployments: the cost of each extra deployment.

Targets (from the foundation issue): plan <= 1.5x the import floor; each extra deployment < 10 ms.
Run: venv/bin/python benchmarks/plan_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

MODULES_OF_A_PLAN = """
import sys
from pathlib import Path
from tritonfleet.plan.document import build_plan
build_plan(Path(sys.argv[1]), sys.argv[2])
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in {"pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_kubernetes", "pulumi_random"})))
"""


def best_of(repeat: int, command: list[str], cwd: Path = ROOT) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=ENV, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def project_with_deployments(base: Path, count: int) -> Path:
    target = base / f"n{count}"
    target.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", target)
    shutil.copy(ROOT / "__main__.py", target)
    shutil.copytree(ROOT / "policies", target / "policies", ignore=shutil.ignore_patterns("__pycache__"))
    (target / "stacks").mkdir()
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    template = doc["config"]["tritonfleet:tritonDeployments"][1]
    doc["config"]["tritonfleet:tritonDeployments"] = [
        {**template, "name": f"model-{i}", "modelPrefix": f"model-{i}/"} for i in range(count)
    ]
    (target / "stacks" / "Pulumi.prod.yaml").write_text(yaml.safe_dump(doc))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    args = parser.parse_args()
    python = sys.executable

    modules = subprocess.run(
        [python, "-c", MODULES_OF_A_PLAN, str(ROOT), "prod"], env=ENV, check=True, capture_output=True, text=True
    ).stdout.split()
    floor = best_of(args.repeat, [python, "-c", "import " + ", ".join(modules)])
    plan = best_of(args.repeat, [python, "-m", "tritonfleet", "plan", "--stack", "prod"])
    print(f"import floor ({len(modules)} SDK modules): {floor:.3f} s")
    print(f"tritonfleet plan --stack prod:           {plan:.3f} s")
    print(f"plan / floor = {plan / floor:.2f}x (target <= 1.5x)")

    with tempfile.TemporaryDirectory() as scratch:
        times = {}
        for count in (1, 10, 100):
            project = project_with_deployments(Path(scratch), count)
            times[count] = best_of(
                args.repeat, [python, "-m", "tritonfleet", "plan", "--stack", "prod", "--project-dir", str(project)]
            )
            print(
                f"plan with {count:>3} Triton deployments: {times[count]:.3f} s ({times[count] / times[1]:.2f}x the 1-deployment plan)"
            )
        per_deployment_ms = (times[100] - times[1]) / 99 * 1000
        print(f"each extra deployment adds {per_deployment_ms:.1f} ms (target < 10 ms)")
    print(json.dumps({"planOverFloor": round(plan / floor, 3), "msPerDeployment": round(per_deployment_ms, 2)}))


if __name__ == "__main__":
    main()
