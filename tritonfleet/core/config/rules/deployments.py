"""Triton deployment rules: unique names, replica bounds, and a bucket and an enabled pool of this stack that fit."""

from __future__ import annotations

from tritonfleet.core.config.problems import choose_from, nearest
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
        if deployment.bucket is not None and bucket_names and deployment.bucket not in bucket_names:
            allowed = "one of the stack's model buckets: " + ", ".join(bucket_names)
            ctx.add(f"{at}.bucket", deployment.bucket, allowed, _meant(deployment.bucket, bucket_names))
        check_access(ctx, raw_deployment.get("access", {}), deployment.namespace, f"{at}.access")
        _check_pool(ctx, deployment, pools, at)


def _check_pool(ctx: RuleContext, deployment: TritonDeployment, pools: ValidPools, at: str) -> None:
    """The deployment's pool exists, is enabled, and its nodes hold a replica's GPUs.

    With no pool that parses, the pools' own problems say why; a deployment naming one is not a problem of its own."""
    if not pools:
        return
    if deployment.pool not in pools:
        names = list(pools)
        ctx.add(f"{at}.pool", deployment.pool, "one of the stack's GPU pools: " + ", ".join(names), _meant(deployment.pool, names))
        return
    pool, itype = pools[deployment.pool]
    if not pool.enabled:
        enabled = [n for n, (p, _) in pools.items() if p.enabled]
        if enabled:
            allowed = f"an enabled pool ({', '.join(enabled)}); pool '{pool.name}' is disabled"
            ctx.add(f"{at}.pool", deployment.pool, allowed, _meant(deployment.pool, enabled))
        else:
            index = next(i for i, raw in enumerate(listed(ctx.data, "gpuPools")) if raw.get("name") == pool.name)
            allowed = f"an enabled pool; pool '{pool.name}' is disabled and no pool is enabled: enable it"
            ctx.add(f"gpuPools[{index}].enabled", False, allowed, True)
    if itype is not None and deployment.gpus_per_replica > itype.gpu_count:
        ctx.add(
            f"{at}.gpusPerReplica",
            deployment.gpus_per_replica,
            f"at most {itype.gpu_count}: a replica must fit on one {itype.name} node of pool '{pool.name}'",
            itype.gpu_count,
        )


def _meant(name: str, names: list[str]) -> str:
    """The name `name` was likely meant to be: the closest by spelling, or the only one; else the choices."""
    return nearest(name, names) or (names[0] if len(names) == 1 else choose_from(names))
