"""PodDisruptionBudgets from replica bounds, what a spot reclaim costs per shipped stack (the docs table is computed),
and the rendered chart's budget and capacity-type spread."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, STACKS, engine_config
from tritonfleet.core.config import TritonDeployment, load_stack_config
from tritonfleet.core.disruption import disruption_warnings, pdb_max_unavailable, spot_exposure


def _config(stack: str):
    return load_stack_config(engine_config(stack), stack)


@pytest.mark.parametrize(("floor", "expected"), [(1, 1), (2, 1), (4, 1), (8, 2), (20, 5)])
def test_the_budget_follows_the_floor_and_never_blocks_a_drain(floor, expected):
    deployment = TritonDeployment.model_validate(
        {"name": "d", "pool": "p", "minReplicas": floor, "maxReplicas": floor * 2}
    )
    assert pdb_max_unavailable(deployment) == expected >= 1


def _cell(exposure) -> str:
    return f"{exposure.replicas} ({exposure.replicas_on_spot} on spot) / {exposure.lost_per_spot_node} / {exposure.left_without_spot}"


def test_the_docs_table_is_what_the_code_computes():
    docs = (ROOT / "docs" / "serving.md").read_text()
    for stack in STACKS:
        config = _config(stack)
        for d in config.triton_deployments:
            row = (
                f"| {stack} | {d.name} | {pdb_max_unavailable(d)} | {_cell(spot_exposure(config, d))} "
                f"| {_cell(spot_exposure(config, d, d.max_replicas))} |"
            )
            assert row in docs, row


def test_spread_over_capacity_types_bounds_a_reclaim():
    prod = _config("prod")
    llm = next(d for d in prod.triton_deployments if d.name == "llm")
    ceiling = spot_exposure(prod, llm, llm.max_replicas)
    # 3 H200 nodes of 8 GPUs hold four 2-GPU replicas each: one on-demand (the base), two spot; a reclaim takes one
    # node's replicas, not most of them.
    assert (ceiling.nodes, ceiling.spot_nodes) == (3, 2)
    assert ceiling.lost_per_spot_node == 4 < ceiling.replicas / 2
    assert ceiling.left_without_spot == 4


def test_the_plan_warns_about_single_replica_and_spot_only_deployments():
    (single,) = [w for w in disruption_warnings(_config("dev")) if "minReplicas: 1 replica" in w]
    assert single.endswith("--stack dev, or in stacks/Pulumi.dev.yaml, set tritonfleet:tritonDeployments[0].minReplicas to 2")
    assert disruption_warnings(_config("prod")) == []
