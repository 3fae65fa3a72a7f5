"""Triton deployment rules: unique names, replica bounds, something to autoscale on, and a bucket and an enabled pool
of this stack that fit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tritonfleet.core.config.problems import MISSING
from tritonfleet.core.config.rules.access import check_access
from tritonfleet.core.config.rules.context import RuleContext, listed, validate_section
from tritonfleet.core.config.rules.pools import ValidPools
from tritonfleet.core.config.schema import TritonDeployment


def check_deployments(ctx: RuleContext, pools: ValidPools, bucket_names: list[str]) -> None:
    seen: set[str] = set()
    for i, raw_deployment in enumerate(listed(ctx.data, "tritonDeployments")):
        deployment = validate_section(TritonDeployment, raw_deployment)
        if deployment is None:
            continue
        at = f"tritonDeployments[{i}]"
        if deployment.name in seen:
            ctx.add(f"{at}.name", deployment.name, "a deployment name not used by another deployment", f"{deployment.name}-2")
        seen.add(deployment.name)
        if deployment.min_replicas > deployment.max_replicas:
            ctx.add(
                f"{at}.maxReplicas", deployment.max_replicas, f">= minReplicas ({deployment.min_replicas})", deployment.min_replicas
            )
        _check_autoscaling(ctx, deployment, raw_deployment, at)
        if deployment.bucket is not None and bucket_names and deployment.bucket not in bucket_names:
            allowed = "one of the stack's model buckets: " + ", ".join(bucket_names)
            ctx.add(f"{at}.bucket", deployment.bucket, allowed, bucket_names[0])
        check_access(ctx, raw_deployment.get("access", {}), deployment.namespace, f"{at}.access")
        _check_pool(ctx, deployment, pools, at)


def _check_autoscaling(ctx: RuleContext, deployment: TritonDeployment, raw: Mapping[str, Any], at: str) -> None:
    """An autoscaled deployment (monitoring on, maxReplicas > minReplicas) needs something for its HPA to scale on:
    the per-replica capacity (the load signal's target) or at least the queue-time guard."""
    monitoring = ctx.data.get("monitoring") if isinstance(ctx.data.get("monitoring"), Mapping) else {}
    autoscaled = monitoring.get("enabled", True) is not False and deployment.max_replicas > deployment.min_replicas
    given = {"throughputPerReplica", "queueTimeTarget"} & set(raw)  # a bad value given was reported by the schema
    if autoscaled and not given:
        ctx.add(
            f"{at}.throughputPerReplica",
            MISSING,
            "the inferences/s one replica carries within its latency target (measure it with a load test); the HPA "
            "scales on offered load against it (or set queueTimeTarget, e.g. 20ms, to scale on queue time alone)",
            "<inferences/s per replica>",
        )


def _check_pool(ctx: RuleContext, deployment: TritonDeployment, pools: ValidPools, at: str) -> None:
    """The deployment's pool exists, is enabled, and its nodes hold a replica's GPUs."""
    if deployment.pool not in pools:
        names = ", ".join(pools) or "(no valid pools)"
        ctx.add(f"{at}.pool", deployment.pool, f"one of the stack's GPU pools: {names}", next(iter(pools), "<pool>"))
        return
    pool, itype = pools[deployment.pool]
    if not pool.enabled:
        ctx.add(
            f"{at}.pool",
            deployment.pool,
            f"an enabled pool; pool '{pool.name}' is disabled",
            next((n for n, (p, _) in pools.items() if p.enabled), "<pool>"),
        )
    if itype is not None and deployment.gpus_per_replica > itype.gpu_count:
        ctx.add(
            f"{at}.gpusPerReplica",
            deployment.gpus_per_replica,
            f"at most {itype.gpu_count}: a replica must fit on one {itype.name} node of pool '{pool.name}'",
            itype.gpu_count,
        )
