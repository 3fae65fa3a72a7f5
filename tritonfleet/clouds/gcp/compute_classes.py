"""One scheduling target per GPU pool on GKE: a custom compute class over the node pools the stack creates (plain data,
no Pulumi; components/gcp/compute_classes.py creates them; docs/gcp.md "Compute classes").

A configured pool (its *head*) and its fallback pool (`gpuPools[].fallbackPool`) share one ComputeClass named
`tritonfleet-<head>`. Each of their GKE node pools is labelled and tainted for that class, and the class lists them
in priority order: the head's node pools first (reservation, spot, flex-start, on-demand), then the fallback's in the
same order. A Triton deployment of either pool selects the class (node selector + toleration), so its pods may land on
every node pool whose cost the plan counts, and the autoscaler grows the first priority that has capacity.

Decisions (docs/gcp.md):
* `nodePoolAutoCreation.enabled: false`: GKE never creates a node pool the plan does not count.
* `whenUnsatisfiable: DoNotScaleUp`: when no listed pool has capacity, pods stay Pending rather than GKE creating a
  node outside the listed pools (which only node pool auto-creation could, and which no budget would see).
* `activeMigration.optimizeRulePriority`: on only when the class has a lower priority to move away from, no
  on-demand node pool ranks below a spot one, AND every deployment on it keeps at least 2 replicas. Migration drains
  lower-priority nodes once a preferred pool has capacity again (spot back to the reservation); below spot it would
  drain the on-demand base onto spot, and a deployment with one replica would be down while its only pod reloads.
* `autoscalingPolicy`: a GPU node is consolidated only when no GPU is requested on it, and only after the longest
  model load of the class's deployments (at least 10 minutes).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from tritonfleet.clouds.gcp.facts import (
    COMPUTE_CLASS_API_VERSION,
    COMPUTE_CLASS_KIND,
    COMPUTE_CLASS_LABEL,
    SCHEDULED_MAINTENANCE_LABEL,
)
from tritonfleet.clouds.gcp.node_pools import class_taint, compute_class_name, gpu_node_pool_specs, spot_shutdown
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import PROJECT
from tritonfleet.core.disruption import consolidation_delay_seconds
from tritonfleet.core.scheduling import PoolFacts, pool_facts, pool_members

# The order a class tries purchase options in: capacity already paid for, then spot, then flex-start (VMs that live
# at most seven days), on-demand last. A mixed pool's on-demand base is its on-demand node pool's minimum
# (node_pools.class_bounds), so it stays up whatever the order; above it the burst is spot first, as spotShare says.
PURCHASE_PRIORITY = ("reservation", "spot", "flex-start", "on-demand")
MIGRATION_MIN_REPLICAS = 2
# A GPU node is consolidated only when no GPU is requested on it (below 1 %): draining a node to pack its replicas
# elsewhere would reload their models (Karpenter's WhenEmpty on AWS).
GPU_CONSOLIDATION_THRESHOLD = 1


@dataclass(frozen=True)
class ComputeClassSpec:
    name: str
    head: str  # the head pool
    node_pools: list[str]  # GKE node pool names, in priority order
    optimize_rule_priority: bool
    consolidation_delay_minutes: int = 10


def compute_class_specs(config: StackConfig) -> list[ComputeClassSpec]:
    """One class per enabled head pool, its node pools (and its fallback's) in priority order."""
    specs = []
    for pool in config.enabled_pools:
        members = pool_members(config, pool)
        if members[0] is not pool:
            continue
        ordered = [
            spec
            for member in members
            for spec in sorted(gpu_node_pool_specs(config, member), key=lambda s: PURCHASE_PRIORITY.index(s.option))
        ]
        names = {m.name for m in members}
        served = [d for d in config.triton_deployments if d.pool in names]
        specs.append(
            ComputeClassSpec(
                name=compute_class_name(pool.name),
                head=pool.name,
                node_pools=[spec.name for spec in ordered],
                optimize_rule_priority=len(ordered) > 1
                and not _on_demand_after_spot([spec.option for spec in ordered])
                and bool(served)
                and all(d.min_replicas >= MIGRATION_MIN_REPLICAS for d in served),
                consolidation_delay_minutes=math.ceil(consolidation_delay_seconds(config, names) / 60),
            )
        )
    return specs


def _on_demand_after_spot(options: list[str]) -> bool:
    """Whether an on-demand node pool ranks below a spot one: migration toward the higher priority would then move
    replicas off the on-demand base onto spot, so the class does not migrate."""
    return "spot" in options and "on-demand" in options[options.index("spot") :]


def compute_class_manifest(spec: ComputeClassSpec) -> dict[str, Any]:
    """The ComputeClass object (validated in tests against tests/data/computeclass-v1.schema.json)."""
    return {
        "apiVersion": COMPUTE_CLASS_API_VERSION,
        "kind": COMPUTE_CLASS_KIND,
        "metadata": {"name": spec.name, "labels": {"app.kubernetes.io/managed-by": PROJECT}},
        "spec": {
            "description": f"tritonfleet GPU pool {spec.head}: its node pools in priority order",
            "priorities": [{"nodepools": [name]} for name in spec.node_pools],
            "whenUnsatisfiable": "DoNotScaleUp",
            "nodePoolAutoCreation": {"enabled": False},
            "activeMigration": {"optimizeRulePriority": spec.optimize_rule_priority},
            "autoscalingPolicy": {
                "consolidationDelayMinutes": spec.consolidation_delay_minutes,
                "gpuConsolidationThreshold": GPU_CONSOLIDATION_THRESHOLD,
            },
        },
    }


def gke_pool_facts(config: StackConfig, pool: GpuPool) -> PoolFacts:
    """What a Triton deployment of `pool` selects on GKE: its class, which reaches the fallback pool's nodes too."""
    members = pool_members(config, pool)
    name = compute_class_name(members[0].name)
    spot = any(spec.spot for member in members for spec in gpu_node_pool_specs(config, member))
    shutdown = spot_shutdown(config.cluster.gke_build)
    neutral = pool_facts(config, pool)
    return dataclasses.replace(
        neutral,
        node_selector={COMPUTE_CLASS_LABEL: name},
        taints=(*neutral.taints, class_taint(name)),
        spot=spot,
        spot_notice_seconds=shutdown.window_seconds if spot else None,
        spot_pod_shutdown_seconds=shutdown.pod_seconds if spot else None,
        avoid_node_labels=(SCHEDULED_MAINTENANCE_LABEL,),
    )

