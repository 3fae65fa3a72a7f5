"""The GPU pools as Karpenter objects: per pool an EC2NodeClass and its NodePools, and the warm-capacity placeholders.

Everything is decided in node_pools.py; this component only creates it through the Kubernetes provider, after the
Karpenter controller (its CRDs and webhook) exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.pod_security import CAPACITY_LEVEL, pod_security_labels
from tritonfleet.clouds.aws.node_pools import (
    NODE_CLASS_API,
    NODE_POOL_API,
    PLACEHOLDER_NAMESPACE,
    NodePoolSpec,
    placeholder_priority_class,
)


@dataclass(frozen=True)
class GpuNodePoolArgs:
    """One configured GPU pool, decided."""

    pool: str
    """The configured pool's name (the EC2NodeClass's name)."""
    node_class: dict
    """The EC2NodeClass spec without its role (`node_pools.node_class_spec`)."""
    node_pools: list[NodePoolSpec]
    """Its NodePools, highest weight first (`node_pools.node_pool_specs`)."""
    placeholders: dict | None = None
    """The warm-capacity Deployment (`node_pools.placeholder_deployment`), None when no node is kept warm."""


@dataclass(frozen=True)
class GpuNodePoolsArgs:
    """The stack's GPU pools and what their objects need."""

    pools: list[GpuNodePoolArgs]
    """Every enabled pool."""
    cluster_name: str
    """The EKS cluster (the value of the karpenter.sh/discovery tag the node classes select by)."""
    node_role_name: pulumi.Input[str]
    """The IAM role Karpenter's nodes take (it needs an EKS access entry of type EC2_LINUX)."""
    provider: k8s.Provider
    """The cluster's Kubernetes provider."""
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    """What must exist first: the Karpenter controller release (its CRDs and webhooks), the node role's access."""
    protected: bool = False
    """Protect the NodePools and EC2NodeClasses (deleting one drains its nodes)."""


class GpuNodePools(pulumi.ComponentResource):
    """Hands up `node_pools`: pool -> tier -> NodePool, and `node_classes`: pool -> EC2NodeClass."""

    node_pools: dict[str, dict[str, k8s.apiextensions.CustomResource]]
    node_classes: dict[str, k8s.apiextensions.CustomResource]

    def __init__(self, name: str, args: GpuNodePoolsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("tritonfleet:aws:GpuNodePools", name, None, opts)
        ordered = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=args.depends_on, protect=args.protected
        )
        self.node_classes, self.node_pools = {}, {}
        placeholders_needed = any(p.placeholders for p in args.pools)
        namespace = priority = None
        if placeholders_needed:
            plain = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=args.depends_on)
            namespace = k8s.core.v1.Namespace(
                f"{name}-warm",
                metadata={"name": PLACEHOLDER_NAMESPACE, "labels": pod_security_labels(CAPACITY_LEVEL)},
                opts=plain,
            )
            priority = k8s.scheduling.v1.PriorityClass(f"{name}-warm", **placeholder_priority_class(), opts=plain)
        for pool in args.pools:
            node_class = k8s.apiextensions.CustomResource(
                f"{name}-{pool.pool}",
                api_version=NODE_CLASS_API,
                kind="EC2NodeClass",
                metadata={"name": pool.pool},
                spec={**pool.node_class, "role": args.node_role_name},
                opts=ordered,
            )
            self.node_classes[pool.pool] = node_class
            self.node_pools[pool.pool] = {
                spec.tier: k8s.apiextensions.CustomResource(
                    f"{name}-{spec.name}",
                    api_version=NODE_POOL_API,
                    kind="NodePool",
                    metadata=spec.metadata(),
                    spec=spec.spec,
                    opts=pulumi.ResourceOptions.merge(ordered, pulumi.ResourceOptions(depends_on=[node_class])),
                )
                for spec in pool.node_pools
            }
            if pool.placeholders:
                k8s.apps.v1.Deployment(
                    f"{name}-warm-{pool.pool}",
                    **pool.placeholders,
                    opts=pulumi.ResourceOptions(
                        parent=self,
                        provider=args.provider,
                        depends_on=[namespace, priority, *self.node_pools[pool.pool].values()],
                    ),
                )
        self.register_outputs(
            {
                "node_pools": {pool.pool: [spec.name for spec in pool.node_pools] for pool in args.pools},
                "node_classes": [pool.pool for pool in args.pools],
            }
        )
