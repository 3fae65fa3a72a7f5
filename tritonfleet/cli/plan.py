"""`tritonfleet plan`: the real program run offline under the Pulumi mock runtime, its GPU pools, cost and verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from tritonfleet.cli.options import PolicyConfigOption, ProjectOption, StackOption
from tritonfleet.cli.output import err, out, policy_exit, print_policy, show, user_error, without_cyclic_gc, write
from tritonfleet.output_paths import OutputError, check_output_file
from tritonfleet.terminal import print_labelled

app = typer.Typer()


@app.command(short_help="plan a stack offline: GPUs, monthly cost, policy verdicts")
def plan(
    stack: StackOption,
    json_file: Annotated[Path | None, typer.Option("--json", help="write the plan document (deterministic JSON) here")] = None,
    project_dir: ProjectOption = None,
    policy_config: PolicyConfigOption = None,
    resources: Annotated[bool, typer.Option("--resources", help="also list the resources by type")] = False,
) -> None:
    """Run the real program offline under the Pulumi mock runtime; print GPU pools, monthly cost and policy verdicts.

    Exit 2 when a mandatory policy is violated (the plan document is still written)."""
    without_cyclic_gc()
    from tritonfleet.core.config import ConfigError
    from tritonfleet.plan.document import PlanDocumentError, build_plan, dumps
    from tritonfleet.plan.harness import PlanError
    from tritonfleet.plan.project import ProjectError, find_project
    from tritonfleet.policycheck.engine import PackError
    from tritonfleet.policycheck.pack_config import PackConfigError

    try:
        if json_file:
            check_output_file(json_file)  # before the plan, not after it
        directory = project_dir or find_project(Path.cwd())
        document = build_plan(directory, stack, with_policy=True, policy_config=policy_config)
        text = dumps(document) if json_file else ""
    except (ConfigError, ProjectError, PlanError, PackConfigError, PackError, PlanDocumentError, OutputError) as error:
        raise user_error(error) from None
    print_plan(document, resources=resources)
    out.print()
    print_policy(document["policy"])
    if json_file:
        from tritonfleet.policycheck.saved_plan import seal_plan

        write(json_file, text)
        seal_plan(json_file)
        out.print(Text(f"Plan document written to {json_file}"))
    policy_exit(document["policy"])


def print_plan(plan: dict, resources: bool = False) -> None:
    """The plan's summary, then Prometheus sizing, disruption and start-up budgets; warnings on stderr."""
    from tritonfleet.core.startup import budget_lines
    from tritonfleet.plan.text import plan_lines

    show(plan_lines(plan, out.width, resources=resources))
    monitoring = plan.get("monitoring", {})
    if monitoring.get("enabled"):
        out.print(
            f"Prometheus: ~{monitoring['estimatedSeries']:,} series at the ceiling, memory "
            f"{monitoring['prometheusMemoryRequestMi']}Mi (limit {monitoring['prometheusMemoryLimitMi']}Mi)"
        )
        out.print(f"  retention needs ~{monitoring['diskNeededGi']} of {monitoring['retentionSizeGi']} GiB retentionSize")
    for d in plan.get("disruption", {}).get("deployments", []):
        ceiling = d["ceiling"]
        out.print(f"Triton '{d['deployment']}': PDB maxUnavailable {d['pdbMaxUnavailable']}")
        out.print(
            f"  at {ceiling['replicas']} replicas a spot reclaim costs {ceiling['lost_per_spot_node']}, "
            f"all spot {ceiling['replicas'] - ceiling['left_without_spot']}"
        )
    for budget in plan.get("startup", {}).get("deployments", []):
        for line in budget_lines(budget):
            out.print(line)
    sections = ("disruption", "startup")
    for warning in monitoring.get("warnings", []) + [w for s in sections for w in plan.get(s, {}).get("warnings", [])]:
        print_labelled(err, "warning:", "yellow", warning)
