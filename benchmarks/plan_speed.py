"""How fast is the offline plan? Prints ratios measured in this one run (no absolute targets in tests).

1. `tritonfleet plan --stack prod` against its floor: a process that only imports the pulumi and provider SDK
   modules that the same plan loads (measured from a real plan run, so the floor tracks the program).
2. Plan time with 1, 10 and 100 Triton deployments: the cost of each extra deployment.

Targets (from the foundation issue): plan <= 1.5x the import floor; each extra deployment < 10 ms.
Runs are interleaved (paired) and medians of --rounds rounds compared; wall and CPU time (CPU is steadier on a busy
machine). Run: venv/bin/python benchmarks/plan_speed.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from measure import ENV, ROOT, interleaved, load

COUNTS = (1, 10, 100)

MODULES_OF_A_PLAN = """
import sys
from pathlib import Path
from tritonfleet.plan.document import build_plan
build_plan(Path(sys.argv[1]), sys.argv[2])
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in {"pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_kubernetes", "pulumi_random"})))
"""


def project_with_deployments(base: Path, count: int) -> Path:
    target = base / f"n{count}"
    target.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", target)
    shutil.copy(ROOT / "__main__.py", target)
    shutil.copytree(ROOT / "policies", target / "policies", ignore=shutil.ignore_patterns("__pycache__"))
    (target / "stacks").mkdir()
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    config = doc["config"]
    template = config["tritonfleet:tritonDeployments"][1]  # vision, on the l40s pool (1 GPU per node)
    # Two replicas each (prod keeps a minimum on two nodes: policy triton-release-require-min-replicas-apart), and a
    # pool, GPU limit and budget that hold them all: the plan must stay valid at any count.
    replicas = 2
    small = {
        "minReplicas": replicas,
        "maxReplicas": replicas,
        "targetLoad": {**template["targetLoad"], "peak": 1000, "average": 500},
    }
    config["tritonfleet:tritonDeployments"] = [
        {**template, **small, "name": f"model-{i}", "modelPrefix": f"model-{i}/"} for i in range(count)
    ]
    nodes = replicas * count  # one 1-GPU node per replica
    pool = next(p for p in config["tritonfleet:gpuPools"] if p["name"] == template["pool"])
    pool["maxNodes"] = max(pool["maxNodes"], nodes)
    budget_per_node = 2000  # USD/month, above a g6e.xlarge's on-demand price
    config["tritonfleet:gpuLimit"] += nodes
    config["tritonfleet:budget"]["monthlyUsd"] += budget_per_node * nodes
    policy_config = target / "policies" / "config" / "prod.json"  # the pack's limits, raised alike
    limits = json.loads(policy_config.read_text())
    limits["gpu-stack-limit-total-gpus"]["maxGpus"] += nodes
    for name in ("cost-stack-enforce-monthly-budget", "cost-stack-warn-monthly-budget"):
        limits[name]["monthlyUsd"] += budget_per_node * nodes
    policy_config.write_text(json.dumps(limits))
    (target / "stacks" / "Pulumi.prod.yaml").write_text(yaml.safe_dump(doc))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per measurement; medians are kept")
    args = parser.parse_args()
    python = sys.executable
    print(load())

    modules = subprocess.run(
        [python, "-c", MODULES_OF_A_PLAN, str(ROOT), "prod"], env=ENV, check=True, capture_output=True, text=True
    ).stdout.split()
    first = interleaved(
        args.rounds,
        {
            # The CLI's plan runs without the cyclic GC (tritonfleet/cli/output.py); so do its imports here.
            "floor": ([python, "-c", "import gc; gc.disable(); import " + ", ".join(modules)], ROOT),
            "plan": ([python, "-m", "tritonfleet", "plan", "--stack", "prod"], ROOT),
        },
    )
    floor, plan = first["floor"], first["plan"]
    print(f"import floor ({len(modules)} SDK modules): wall {floor.wall:.3f} s, cpu {floor.cpu:.3f} s")
    print(f"tritonfleet plan --stack prod:           wall {plan.wall:.3f} s, cpu {plan.cpu:.3f} s")
    print(f"plan / floor = {plan.wall / floor.wall:.2f}x wall, {plan.cpu / floor.cpu:.2f}x cpu (target <= 1.5x)")

    with tempfile.TemporaryDirectory() as scratch:
        command = [python, "-m", "tritonfleet", "plan", "--stack", "prod", "--project-dir"]
        times = interleaved(
            args.rounds, {count: ([*command, str(project_with_deployments(Path(scratch), count))], ROOT) for count in COUNTS}
        )
    for count, t in times.items():
        print(f"plan with {count:>3} Triton deployments: wall {t.wall:.3f} s, cpu {t.cpu:.3f} s ({t.cpu / times[1].cpu:.2f}x the 1-deployment plan's cpu)")
    per_deployment = {k: (getattr(times[100], k) - getattr(times[1], k)) / 99 * 1000 for k in ("wall", "cpu")}
    print(f"each extra deployment adds {per_deployment['wall']:.1f} ms wall, {per_deployment['cpu']:.1f} ms cpu (target < 10 ms)")
    print(load())
    print(
        json.dumps(
            {
                "planOverFloor": {"wall": round(plan.wall / floor.wall, 3), "cpu": round(plan.cpu / floor.cpu, 3)},
                "msPerDeployment": {k: round(v, 2) for k, v in per_deployment.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
