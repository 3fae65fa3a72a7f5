"""Disruptions of a Triton deployment: its PodDisruptionBudget from the replica bounds, and what a spot reclaim costs.

Drains (node upgrades, consolidation) are voluntary: the PodDisruptionBudget limits them. A spot reclaim is not: the
node goes away after the notice whatever the budget says, so what protects serving there is the spread of replicas
over capacity types (spot / on-demand), zones and nodes. `spot_exposure` says what one reclaim costs at the floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tritonfleet.core.config import StackConfig, TritonDeployment
from tritonfleet.core.cost import spot_nodes

PDB_SHARE = 4  # a drain may take a quarter of the floor's replicas at once, at least one


def pdb_max_unavailable(deployment: TritonDeployment) -> int:
    """maxUnavailable of the deployment's PodDisruptionBudget: its `maxUnavailable`, else a quarter of the floor.

    At least 1: a budget of 0 (or minAvailable = replicas) blocks every drain, so node upgrades never finish. With one
    replica a drain therefore takes the deployment down; the plan warns (`disruption_warnings`).
    """
    if deployment.max_unavailable is not None:
        return deployment.max_unavailable
    return max(1, deployment.min_replicas // PDB_SHARE)


@dataclass(frozen=True)
class SpotExposure:
    deployment: str
    pool: str
    replicas: int
    nodes: int  # nodes these replicas need (at least the pool's minNodes, at most its maxNodes)
    spot_nodes: int
    replicas_on_spot: int
    lost_per_spot_node: int  # replicas one reclaimed spot node takes with it
    left_without_spot: int  # replicas left if every spot node of the pool is reclaimed at once


def spot_exposure(config: StackConfig, deployment: TritonDeployment, replicas: int | None = None) -> SpotExposure:
    """For `replicas` (default: the floor, minReplicas) spread evenly over capacity types and then over nodes (the
    chart's spread); the pool's nodes beyond its on-demand base are spot in its spotShare."""
    pool = config.pool(deployment.pool)
    per_node = config.instance_type(pool).gpu_count // deployment.gpus_per_replica
    replicas = deployment.min_replicas if replicas is None else replicas
    nodes = min(pool.max_nodes, max(pool.min_nodes, math.ceil(replicas / per_node)))
    replicas = min(replicas, nodes * per_node)
    spot = spot_nodes(pool, nodes) if pool.capacity == "mixed" else 0
    on_demand = nodes - spot
    if spot == 0:
        on_spot = 0
    elif on_demand == 0:
        on_spot = replicas
    else:  # maxSkew 1 across the two capacity types, bounded by what each side's nodes hold
        on_spot = min(spot * per_node, max(replicas // 2, replicas - on_demand * per_node))
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


def disruption_warnings(config: StackConfig) -> list[str]:
    """What the plan says about deployments a single drain or spot reclaim takes down."""
    warnings = []
    for deployment in config.triton_deployments:
        at = f"tritonDeployments[{config.triton_deployments.index(deployment)}]"
        exposure = spot_exposure(config, deployment, deployment.max_replicas)
        if deployment.min_replicas == 1:
            warnings.append(
                f"{at}.minReplicas: 1 replica: a node drain or a spot reclaim stops deployment {deployment.name} until a "
                f"new pod is ready. Fix: pulumi config set --path 'tritonfleet:{at}.minReplicas' 2"
            )
        elif exposure.left_without_spot == 0:
            warnings.append(
                f"{at}: at maxReplicas every replica of {deployment.name} runs on spot nodes of pool {exposure.pool}: a "
                "capacity-wide spot reclaim stops it; give the pool an on-demand base (gpuPools[].onDemandBase)"
            )
    return warnings
