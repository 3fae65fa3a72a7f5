"""The zones an AWS stack and its pools use (the config rules, the adapter and the preflight agree through these)."""

from __future__ import annotations

from tritonfleet.core.config import Cluster, GpuPool, StackConfig


def aws_zones(region: str, cluster: Cluster) -> list[str]:
    """The zones an AWS stack uses: the configured ones, else those of the existing subnets, else <region>a and b."""
    return list(cluster.zones or cluster.existing_private_subnets or [f"{region}a", f"{region}b"])


def pool_zones(config: StackConfig, pool: GpuPool) -> list[str]:
    """The zones a pool's nodes may run in (AWS): the pool's own subset, else every zone of the cluster."""
    return list(pool.zones) or aws_zones(config.region, config.cluster)
