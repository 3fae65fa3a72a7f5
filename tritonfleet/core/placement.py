"""Where the autoscalers put Triton's replicas, and so how many GPU nodes of each pool run: the plan's floor, expected
and ceiling count these nodes (tritonfleet/core/cost.py), the chart gets the hostname spread from here and the AWS
warm placeholders fill only the gap to minNodes. docs/serving.md "How the nodes are counted" gives the sources.

The model, per deployment (replicas of one shape on nodes of its pool's type):
* a node holds `per_node` replicas (GPUs, CPU and memory: `sizing.replicas_per_node`);
* the chart's hostname spread (`hostname_spread`): where a pod could share a node with another replica of a prod
  deployment's minimum, a hard spread (DoNotSchedule, minDomains 2) keeps that minimum on two nodes; elsewhere a soft
  one with maxSkew = per_node, which never asks for a node the replicas do not fill;
* Karpenter (AWS) treats the soft zone spread as required when it launches nodes and lets each new node take at most
  the hostname spread's maxSkew (the cloud's PREFERRED_SPREADS_ADD_NODES, HOSTNAME_SPREAD_CAPS_NEW_NODES facts); GKE's
  cluster autoscaler adds nodes for hard spreads only;
* pools sharing a compute class (GKE `fallbackPool`) fill in class order: the head's nodes, then the fallback's;
* every pool keeps at least its minNodes (GKE node pool minimum, AWS warm placeholders) and at most its maxNodes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from tritonfleet.core.config import GpuPool, StackConfig, TritonDeployment
from tritonfleet.core.packing import NodeShape, pack, replica_shape, replicas_per_node
from tritonfleet.core.scheduling import pool_members

SOFT = "ScheduleAnyway"
HARD = "DoNotSchedule"
# A prod deployment's minimum replicas stay on at least this many nodes (policy prod-min-replicas-on-two-nodes).
FLOOR_NODES_APART = 2


@dataclass(frozen=True)
class HostnameSpread:
    """The chart's kubernetes.io/hostname topology spread of one deployment."""

    max_skew: int
    when_unsatisfiable: str  # ScheduleAnyway or DoNotSchedule
    min_domains: int | None = None  # only with DoNotSchedule

    def values(self) -> dict[str, object]:
        """The chart's `topologySpread.hostname` values."""
        return {"maxSkew": self.max_skew, "whenUnsatisfiable": self.when_unsatisfiable, "minDomains": self.min_domains}


def deployment_per_node(config: StackConfig, deployment: TritonDeployment) -> int:
    """Replicas of the deployment one node of its pool holds (at least 1: a replica that does not fit is a config
    error reported by the sizing check)."""
    itype = config.instance_type(config.pool(deployment.pool))
    return max(1, replicas_per_node(NodeShape.of(itype), replica_shape(itype, deployment.gpus_per_replica)))


def keeps_floor_apart(config: StackConfig, deployment: TritonDeployment) -> bool:
    """Whether the deployment's minimum replicas must not share one node: prod, at least two replicas, and replicas
    that could share a node (a replica that fills a node is apart already)."""
    return (
        config.environment == "prod"
        and deployment.min_replicas >= FLOOR_NODES_APART
        and deployment_per_node(config, deployment) >= FLOOR_NODES_APART
    )


def hostname_spread(config: StackConfig, deployment: TritonDeployment) -> HostnameSpread:
    """Hard where the floor must stay apart: maxSkew minReplicas-1 with minDomains 2 puts the last replica of the
    minimum on a second node (one node alone counts from 0), then keeps nodes within maxSkew of each other. Soft
    otherwise, maxSkew = replicas per node: a node is filled before the next one is asked for."""
    if keeps_floor_apart(config, deployment):
        return HostnameSpread(max(1, deployment.min_replicas - 1), HARD, FLOOR_NODES_APART)
    return HostnameSpread(deployment_per_node(config, deployment), SOFT)


def _cloud(config: StackConfig):  # noqa: ANN202 - tritonfleet.core.cloud.Cloud, imported when called
    from tritonfleet.core.cloud import cloud

    return cloud(config.cloud)


def _zone_count(config: StackConfig, pool: GpuPool) -> int:
    """Zones the pool's nodes may use; one when none is configured (the floor's lower bound)."""
    return len(pool.zones or config.cluster.zones) or 1


def replica_nodes(config: StackConfig, deployment: TritonDeployment, replicas: int) -> int:
    """Nodes the autoscaler opens for `replicas` of one deployment when none of its nodes run yet."""
    if replicas <= 0:
        return 0
    pool = config.pool(deployment.pool)
    per_node = deployment_per_node(config, deployment)
    spread = hostname_spread(config, deployment)
    per_new_node = min(per_node, spread.max_skew) if _cloud(config).hostname_spread_caps_new_nodes else per_node
    zones = _zone_count(config, pool) if _cloud(config).preferred_spreads_add_nodes else 1
    zones = min(zones, replicas)
    per_zone = [replicas // zones + (1 if i < replicas % zones else 0) for i in range(zones)]
    nodes = sum(math.ceil(count / per_new_node) for count in per_zone)
    if spread.min_domains and replicas > spread.max_skew:
        nodes = max(nodes, spread.min_domains)
    return nodes


def kept_nodes(config: StackConfig, pool: GpuPool) -> int:
    """Nodes the pool keeps up with nothing on them: minNodes, and where the cloud holds the spot share (GKE) at least
    the on-demand base, the minimum of the mixed pool's on-demand node pool."""
    if pool.capacity == "mixed" and _cloud(config).spot_share_enforced:
        return max(pool.min_nodes, min(pool.on_demand_base, pool.max_nodes))
    return pool.min_nodes


@dataclass(frozen=True)
class PoolNodes:
    pool: str
    replica_nodes: int  # nodes Triton's replicas take on this pool (before minNodes; at most maxNodes)
    nodes: int  # nodes running: at least minNodes, at most maxNodes

    @property
    def warm_nodes(self) -> int:
        """Nodes kept up beyond what the replicas need (AWS: one warm placeholder each)."""
        return max(0, self.nodes - self.replica_nodes)


def place(config: StackConfig, replicas: Mapping[str, int], only: str | None = None) -> dict[str, PoolNodes]:
    """Every enabled pool's nodes with `replicas` (deployment name -> replicas) running, deployments not named at 0;
    with `only`, just that pool's and its class's."""
    pools: dict[str, PoolNodes] = {}
    for head in config.enabled_pools:
        members = pool_members(config, head)
        if members[0] is not head or (only is not None and only not in {m.name for m in members}):
            continue
        names = {m.name for m in members}
        deployments = [d for d in config.triton_deployments if d.pool in names and replicas.get(d.name, 0) > 0]
        itype = config.instance_type(head)
        needed = max([replica_nodes(config, d, replicas.get(d.name, 0)) for d in deployments], default=0)
        packed = pack(
            NodeShape.of(itype),
            [(d.name, replica_shape(itype, d.gpus_per_replica), replicas.get(d.name, 0)) for d in deployments],
        ).nodes
        left = max(needed, packed)
        for member in members:  # class order: the head's nodes first, then its fallback's
            taken = min(left, member.max_nodes)
            left -= taken
            pools[member.name] = PoolNodes(member.name, taken, min(member.max_nodes, max(kept_nodes(config, member), taken)))
    return pools


def floor_placement(config: StackConfig) -> dict[str, PoolNodes]:
    """Every pool's nodes with each deployment at minReplicas: the plan's floor."""
    return place(config, {d.name: d.min_replicas for d in config.triton_deployments})


def ceiling_placement(config: StackConfig) -> dict[str, PoolNodes]:
    """Every pool's nodes with each deployment at maxReplicas and the warm nodes kept beside them (a preempted
    placeholder asks for a node again), never above maxNodes: the plan's ceiling and expected figures."""
    floor = floor_placement(config)
    at_max = place(config, {d.name: d.max_replicas for d in config.triton_deployments})
    pools = {}
    for name, nodes in at_max.items():
        pool = config.pool(name)
        running = min(pool.max_nodes, max(kept_nodes(config, pool), nodes.replica_nodes + floor[name].warm_nodes))
        pools[name] = PoolNodes(name, nodes.replica_nodes, running)
    return pools
