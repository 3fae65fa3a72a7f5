"""One scheduling target per GPU pool on GKE: a custom compute class over the node pools the stack creates (plain data
and one builder; docs/gcp.md "Compute classes").

A configured pool (its *head*) and its fallback pool (`gpuPools[].fallbackPool`) share one ComputeClass named
`tritonfleet-<head>`. Each of their GKE node pools is labelled and tainted for that class, and the class lists them
in priority order: the head's node pools first (reservation, on-demand, flex-start, spot), then the fallback's in the
same order. A Triton deployment of either pool selects the class (node selector + toleration), so its pods may land on
every node pool whose cost the plan counts, and the autoscaler grows the first priority that has capacity.

Decisions (docs/gcp.md):
* `nodePoolAutoCreation.enabled: false`: GKE never creates a node pool the plan does not count.
* `whenUnsatisfiable: DoNotScaleUp`: when no listed pool has capacity, pods stay Pending rather than GKE creating a
  node outside the listed pools (which only node pool auto-creation could, and which no budget would see).
* `activeMigration.optimizeRulePriority`: on only when the class has a lower priority to move away from AND every
  deployment on it keeps at least 2 replicas. Migration drains lower-priority nodes (spot) once a preferred pool has
  capacity again; a deployment with one replica would be down while its only pod reloads its models.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.gcp.node_pools import class_taint, compute_class_name, gpu_node_pool_specs, spot_shutdown
from tritonfleet.clouds.gcp.facts import COMPUTE_CLASS_API_VERSION, COMPUTE_CLASS_KIND, COMPUTE_CLASS_LABEL
from tritonfleet.core.config import GpuPool, StackConfig
from tritonfleet.core.conventions import PROJECT
from tritonfleet.core.scheduling import PoolFacts, pool_facts, pool_members

# The order a class tries purchase options in: capacity already paid for, then capacity that stays, then spot.
PURCHASE_PRIORITY = ("reservation", "on-demand", "flex-start", "spot")
MIGRATION_MIN_REPLICAS = 2


@dataclass(frozen=True)
class ComputeClassSpec:
    name: str
    head: str  # the head pool
    node_pools: list[str]  # GKE node pool names, in priority order
    optimize_rule_priority: bool


def compute_class_specs(config: StackConfig) -> list[ComputeClassSpec]:
    """One class per enabled head pool, its node pools (and its fallback's) in priority order."""
    specs = []
    for pool in config.enabled_pools:
        members = pool_members(config, pool)
        if members[0] is not pool:
            continue
        node_pools = [
            spec.name
            for member in members
            for spec in sorted(gpu_node_pool_specs(config, member), key=lambda s: PURCHASE_PRIORITY.index(s.option))
        ]
        served = [d for d in config.triton_deployments if d.pool in {m.name for m in members}]
        specs.append(
            ComputeClassSpec(
                name=compute_class_name(pool.name),
                head=pool.name,
                node_pools=node_pools,
                optimize_rule_priority=len(node_pools) > 1
                and bool(served)
                and all(d.min_replicas >= MIGRATION_MIN_REPLICAS for d in served),
            )
        )
    return specs


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
        },
    }


def gke_pool_facts(config: StackConfig, pool: GpuPool) -> PoolFacts:
    """What a Triton deployment of `pool` selects on GKE: its class, which reaches the fallback pool's nodes too."""
    members = pool_members(config, pool)
    name = compute_class_name(members[0].name)
    spot = any(spec.spot for member in members for spec in gpu_node_pool_specs(config, member))
    shutdown = spot_shutdown(config.cluster.kubernetes_version)
    neutral = pool_facts(config, pool)
    return dataclasses.replace(
        neutral,
        node_selector={COMPUTE_CLASS_LABEL: name},
        taints=(*neutral.taints, class_taint(name)),
        spot=spot,
        spot_notice_seconds=shutdown.window_seconds if spot else None,
        spot_pod_shutdown_seconds=shutdown.pod_seconds if spot else None,
    )


def create_compute_class(name: str, spec: ComputeClassSpec, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """The class as a Kubernetes custom resource (pulumi-gcp has no typed resource for it)."""
    manifest = compute_class_manifest(spec)
    return k8s.apiextensions.CustomResource(
        f"{name}-class-{spec.head}",
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata=manifest["metadata"],
        spec=manifest["spec"],
        opts=opts,
    )
