"""Disruptions of a Triton deployment: its PodDisruptionBudget from the replica bounds, and what a spot reclaim costs.

Drains (node upgrades, consolidation) are voluntary: the PodDisruptionBudget limits them. A spot reclaim is not: the
node goes away after the notice whatever the budget says, so what protects serving there is the spread of replicas
over capacity types (spot / on-demand), zones and nodes. `spot_exposure` says what one reclaim costs at the floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tritonfleet.core.capacity import fill_split
from tritonfleet.core.config import StackConfig, TritonDeployment
from tritonfleet.core.config.problems import both_ways, set_command

PDB_SHARE = 4  # a drain may take a quarter of the floor's replicas at once, at least one
# An empty or underused GPU node is removed only after this long (Karpenter consolidateAfter, GKE
# consolidationDelayMinutes), or after the longest model load of a deployment on it: a lull shorter than a reload
# does not cost one.
CONSOLIDATION_DELAY_SECONDS = 600


def pdb_max_unavailable(deployment: TritonDeployment) -> int:
    """maxUnavailable of the deployment's PodDisruptionBudget: its `maxUnavailable`, else a quarter of the floor.

    At least 1: a budget of 0 (or minAvailable = replicas) blocks every drain, so node upgrades never finish. With one
    replica a drain therefore takes the deployment down; the plan warns (`disruption_warnings`).
    """
    if deployment.max_unavailable is not None:
        return deployment.max_unavailable
    return max(1, deployment.min_replicas // PDB_SHARE)


# The longest a Triton pod takes to stop (components/k8s/triton.py ON_DEMAND_SHUTDOWN_SECONDS: preStop, drain, exit).
POD_STOP_SECONDS = 120


def drain_seconds(config: StackConfig, pool: str) -> int:
    """How long a PodDisruptionBudget-paced drain of a node of `pool` takes, full of its slowest deployment: its
    replicas per node leave maxUnavailable at a time, each round a stop and a replacement's model load."""
    from tritonfleet.core.placement import deployment_per_node

    rounds = [
        (math.ceil(deployment_per_node(config, d) / pdb_max_unavailable(d)), d.model_load_seconds + POD_STOP_SECONDS)
        for d in config.triton_deployments
        if d.pool == pool
    ]
    return max([count * seconds for count, seconds in rounds], default=0)


def consolidation_delay_seconds(config: StackConfig, pools: set[str]) -> int:
    """How long a GPU node of `pools` must stay empty (or underused) before its autoscaler removes it."""
    loads = [d.model_load_seconds for d in config.triton_deployments if d.pool in pools]
    return max([CONSOLIDATION_DELAY_SECONDS, *loads])


@dataclass(frozen=True)
class SpotExposure:
    deployment: str
    pool: str
    replicas: int
    nodes: int  # nodes these replicas need (at least what the pool keeps up, at most its maxNodes)
    spot_nodes: int
    replicas_on_spot: int
    lost_per_spot_node: int  # replicas one reclaimed spot node takes with it
    left_without_spot: int  # replicas left if every spot node of the pool is reclaimed at once


def spot_exposure(config: StackConfig, deployment: TritonDeployment, replicas: int | None = None) -> SpotExposure:
    """For `replicas` (default: the floor, minReplicas) on the nodes the placement gives them
    (tritonfleet/core/placement.py), bought in the order the pool fills (`fill_split`). Where the chart spreads over
    capacity types (GKE) the replicas split evenly between spot and on-demand; elsewhere (AWS, no such spread) they
    fill the on-demand nodes first, spread evenly over the nodes where the hostname spread is hard."""
    from tritonfleet.core.placement import HARD, deployment_per_node, hostname_spread, place
    from tritonfleet.core.scheduling import pool_members

    pool = config.pool(deployment.pool)
    per_node = deployment_per_node(config, deployment)
    replicas = deployment.min_replicas if replicas is None else replicas
    placed = place(config, {deployment.name: replicas}, only=pool.name)
    members = [(m, placed[m.name].nodes) for m in pool_members(config, pool)]  # its own nodes and its fallback's
    nodes = sum(count for _, count in members)
    replicas = min(replicas, nodes * per_node)
    spot = sum(fill_split(config.cloud, member, count).get("spot", 0) for member, count in members)
    on_demand = nodes - spot
    if spot == 0:
        on_spot = 0
    elif on_demand == 0:
        on_spot = replicas
    elif capacity_spread(config):  # maxSkew 1 across the two capacity types, bounded by what each side's nodes hold
        on_spot = min(spot * per_node, max(replicas // 2, replicas - on_demand * per_node))
    elif hostname_spread(config, deployment).when_unsatisfiable == HARD:  # even over the nodes
        on_spot = replicas - min(on_demand * per_node, math.ceil(replicas * on_demand / nodes))
    else:
        on_spot = max(0, replicas - on_demand * per_node)
    return SpotExposure(
        deployment=deployment.name,
        pool=pool.name,
        replicas=replicas,
        nodes=nodes,
        spot_nodes=spot,
        replicas_on_spot=on_spot,
        lost_per_spot_node=math.ceil(on_spot / spot) if spot else 0,
        left_without_spot=replicas - on_spot,
    )


def capacity_spread(config: StackConfig) -> bool:
    """Whether Triton's pods spread over spot and on-demand nodes: where a preferred spread only scores existing nodes
    (GKE). Karpenter would hold it as required and split every deployment half and half, so AWS ships none."""
    from tritonfleet.core.cloud import cloud

    return not cloud(config.cloud).preferred_spreads_add_nodes


def disruption_warnings(config: StackConfig) -> list[str]:
    """What the plan says about deployments a single drain or spot reclaim takes down."""
    warnings = []
    for deployment in config.triton_deployments:
        at = f"tritonDeployments[{config.triton_deployments.index(deployment)}]"
        exposure = spot_exposure(config, deployment, deployment.max_replicas)
        if deployment.min_replicas == 1:
            warnings.append(
                f"{at}.minReplicas: 1 replica: a node drain or a spot reclaim stops deployment {deployment.name} until a "
                f"new pod is ready. Fix: {both_ways(set_command(f'{at}.minReplicas', 2, config.stack))}"
            )
        elif exposure.left_without_spot == 0:
            warnings.append(
                f"{at}: at maxReplicas every replica of {deployment.name} runs on spot nodes of pool {exposure.pool}: a "
                "capacity-wide spot reclaim stops it; give the pool an on-demand base (gpuPools[].onDemandBase)"
            )
    return warnings
