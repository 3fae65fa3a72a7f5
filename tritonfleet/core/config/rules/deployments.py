"""Triton deployment rules: unique names, replica bounds, something to autoscale on, and a bucket and an enabled pool
of this stack that fit."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tritonfleet.core import pins
from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config.problems import MISSING, choose_from, nearest
from tritonfleet.core.config.rules.access import check_access
from tritonfleet.core.config.rules.context import RuleContext, listed, validate_section
from tritonfleet.core.config.rules.llm import check_llm
from tritonfleet.core.config.rules.pools import ValidPools
from tritonfleet.core.config.rules.rollout import check_rollout
from tritonfleet.core.config.rules.scale_to_zero import check_scale_to_zero
from tritonfleet.core.config.schema import GpuPool, TritonDeployment
from tritonfleet.core.conventions import PLATFORM_NAMESPACES, model_cache_identity, reserved_namespace


def check_deployments(ctx: RuleContext, pools: ValidPools, bucket_names: list[str]) -> None:
    seen: set[str] = set()
    cached = []
    for i, raw_deployment in enumerate(listed(ctx.data, "tritonDeployments")):
        at = f"tritonDeployments[{i}]"
        _check_pool_name_is_text(ctx, raw_deployment, pools, at)
        deployment = validate_section(TritonDeployment, raw_deployment)
        if deployment is None:
            continue
        ctx.new_name(deployment.name, seen, at, "deployment")
        seen.add(deployment.name)
        if deployment.min_replicas > deployment.max_replicas:
            ctx.add(
                f"{at}.maxReplicas", deployment.max_replicas, f">= minReplicas ({deployment.min_replicas})", deployment.min_replicas
            )
        _check_autoscaling(ctx, deployment, raw_deployment, at)
        if deployment.bucket is not None and bucket_names and deployment.bucket not in bucket_names:
            allowed = "one of the stack's model buckets: " + ", ".join(bucket_names)
            ctx.add(f"{at}.bucket", deployment.bucket, allowed, _meant(deployment.bucket, bucket_names))
        if reserved_namespace(deployment.namespace):
            ctx.add(
                f"{at}.namespace",
                deployment.namespace,
                "a namespace of its own: not default, kube-* (Kubernetes' own) or one the platform runs in ("
                + ", ".join(PLATFORM_NAMESPACES[1:]) + ")",
                "triton",
            )
        check_access(ctx, raw_deployment.get("access", {}), deployment.namespace, f"{at}.access")
        _check_pool(ctx, deployment, pools, at)
        if deployment.pool in pools:
            check_llm(ctx, deployment, raw_deployment, pools[deployment.pool][1], at)
        _check_models(ctx, deployment, at)
        _check_disruption_budget(ctx, deployment, at)
        check_rollout(ctx, deployment, at)
        if deployment.pool in pools:
            check_scale_to_zero(ctx, deployment, *pools[deployment.pool], at)
        if deployment.model_cache:
            cached.append(deployment.name)
    for name in cached:  # its prefetch's read identity is named after it (conventions.model_cache_identity)
        if model_cache_identity(name) in seen:
            index = [d.get("name") for d in listed(ctx.data, "tritonDeployments")].index(model_cache_identity(name))
            ctx.add(f"tritonDeployments[{index}].name", model_cache_identity(name),
                    f"another name: deployment '{name}' has modelCache, whose prefetch identity takes this one",
                    f"{name}-cached")  # fmt: skip
    if cached and ctx.cluster is not None and ctx.cluster.model_cache_image is None:
        ctx.add(
            "cluster.modelCacheImage",
            MISSING,
            f"the prefetch image that modelCache ({', '.join(cached)}) runs on every node of its pool: build "
            f"images/model-cache/Dockerfile, push it to your registry with tag {pins.MODEL_CACHE_IMAGE_TAG} and give "
            "its repository, or its reference with the digest (docs/serving.md \"Node-local model cache\")",
            "<registry>/tritonfleet-model-cache",
        )


# Besides the repository copy, a node's disk holds Triton's image (10-16 GB), the other images and the system.
NODE_DISK_RESERVED_GI = 40


def _check_models(ctx: RuleContext, deployment: TritonDeployment, at: str) -> None:
    """loadModels only in explicit mode; a required model must be one the replicas load (else never ready)."""
    if deployment.load_models and deployment.model_control_mode != "explicit":
        ctx.remove(
            f"{at}.loadModels",
            deployment.load_models,
            f"only with modelControlMode explicit (this deployment runs {deployment.model_control_mode}: every model loads)",
        )
    if deployment.model_control_mode == "explicit" and deployment.load_models:
        for j, model in enumerate(deployment.required_models):
            if model not in deployment.load_models:
                ctx.add(
                    f"{at}.requiredModels[{j}]",
                    model,
                    "a model in loadModels (" + ", ".join(deployment.load_models) + "): a required model that is never "
                    "loaded keeps every replica unready",
                    deployment.load_models[0],
                )


def _check_disruption_budget(ctx: RuleContext, deployment: TritonDeployment, at: str) -> None:
    """A budget that lets a drain stop every replica protects nothing; 0 could never be satisfied (the schema's >= 1)."""
    budget = deployment.max_unavailable
    if budget is None:
        return
    if deployment.min_replicas == 1 and budget != 1:
        ctx.add(f"{at}.maxUnavailable", budget, "1 with minReplicas 1 (a drain can only stop the one replica)", 1)
    elif deployment.min_replicas > 1 and budget >= deployment.min_replicas:
        ctx.add(
            f"{at}.maxUnavailable",
            budget,
            f"below minReplicas ({deployment.min_replicas}), or a drain may stop every replica",
            max(1, deployment.min_replicas // 4),
        )


def _check_autoscaling(ctx: RuleContext, deployment: TritonDeployment, raw: Mapping[str, Any], at: str) -> None:
    """An autoscaled deployment (monitoring on, maxReplicas > minReplicas) needs something for its HPA to scale on:
    the per-replica capacity, stated or measured (the load signal's target), or at least the queue-time guard."""
    monitoring = ctx.data.get("monitoring") if isinstance(ctx.data.get("monitoring"), Mapping) else {}
    autoscaled = monitoring.get("enabled", True) is not False and deployment.max_replicas > deployment.min_replicas
    given = {"throughputPerReplica", "loadtestResult", "queueTimeTarget"} & set(raw)  # a bad value given was reported by the schema
    measured = deployment.loadtest_result
    if measured and deployment.client_models and measured.model not in deployment.client_models:
        ctx.add(
            f"{at}.clientModels[{len(deployment.client_models)}]",
            MISSING,
            f"'{measured.model}' in clientModels: the measured capacity is in that model's inferences, so the HPA "
            "must count them",
            measured.model,
        )
    if autoscaled and not given:
        ctx.add(
            f"{at}.throughputPerReplica",
            MISSING,
            "the inferences/s one replica carries within its latency target (or loadtestResult: a `tritonfleet "
            "loadtest --sweep` result); the HPA scales on offered load against it (or set queueTimeTarget, e.g. 20ms, "
            "to scale on queue time alone)",
            "<inferences/s per replica>",
        )


def _pools_allowed(names: list[str]) -> str:
    return "one of the stack's GPU pools: " + ", ".join(names)


def _check_pool_name_is_text(ctx: RuleContext, raw_deployment: object, pools: ValidPools, at: str) -> None:
    """A pool that is not text at all: the choices are the stack's pools (the schema would say "a valid string")."""
    if not pools or not isinstance(raw_deployment, dict) or "pool" not in raw_deployment:
        return
    value, names = raw_deployment["pool"], list(pools)
    if not isinstance(value, str):
        ctx.add(f"{at}.pool", value, _pools_allowed(names), _meant(value, names))


def _check_pool(ctx: RuleContext, deployment: TritonDeployment, pools: ValidPools, at: str) -> None:
    """The deployment's pool exists, is enabled, and its nodes hold a replica's GPUs.

    With no pool that parses, the pools' own problems say why; a deployment naming one is not a problem of its own."""
    if not pools:
        return
    if deployment.pool not in pools:
        names = list(pools)
        ctx.add(f"{at}.pool", deployment.pool, _pools_allowed(names), _meant(deployment.pool, names))
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
    _check_ephemeral_room(ctx, deployment, pool, itype, at)
    if deployment.model_cache:
        _check_model_cache_room(ctx, deployment, pool, itype, at)
    if itype is not None and deployment.gpus_per_replica > itype.gpu_count:
        ctx.add(
            f"{at}.gpusPerReplica",
            deployment.gpus_per_replica,
            f"at most {itype.gpu_count}: a replica must fit on one {itype.name} node of pool '{pool.name}'",
            itype.gpu_count,
        )
    elif itype is not None:
        _check_replicas_fit(ctx, deployment, pools, pool, itype, at)
        _check_tuning(ctx, deployment, itype, at)


def _check_replicas_fit(
    ctx: RuleContext, deployment: TritonDeployment, pools: ValidPools, pool: GpuPool, itype: InstanceType, at: str
) -> None:
    """maxReplicas within what the pool (and its fallback pool) holds at maxNodes: the HPA would otherwise scale
    into pods that never schedule (maxReplicas 1e20 once planned, sizing Prometheus for 10^12 series)."""
    index = next((i for i, raw in enumerate(listed(ctx.data, "gpuPools")) if isinstance(raw, dict) and raw.get("name") == pool.name), None)
    if any(p.key.startswith(f"gpuPools[{index}].") for p in ctx.problems):
        return  # the pool's own size is wrong: fixing it comes first
    nodes = pool.max_nodes + (pools[pool.fallback_pool][0].max_nodes if pool.fallback_pool in pools else 0)
    most = nodes * (itype.gpu_count // deployment.gpus_per_replica)
    if deployment.max_replicas > most >= deployment.min_replicas:
        ctx.add(
            f"{at}.maxReplicas",
            deployment.max_replicas,
            f"at most {most:,}: pool '{pool.name}' holds {most:,} replicas of {deployment.gpus_per_replica} GPU(s) at its "
            f"{nodes:,} nodes of {itype.gpu_count} GPU(s); or raise that pool's maxNodes",
            most,
        )


def _check_tuning(ctx: RuleContext, deployment: TritonDeployment, itype: InstanceType, at: str) -> None:
    """/dev/shm is memory-backed, so a stated size must leave the replica memory to run in; rate-limiter resources
    do nothing unless the rate limiter is on."""
    from tritonfleet.core.packing import SHM_MAX_MEMORY_SHARE, replica_requests  # sizing imports the config package

    tuning = deployment.tuning
    memory_gi = replica_requests(itype, deployment.gpus_per_replica)[1]
    most = max(1, math.floor(memory_gi * SHM_MAX_MEMORY_SHARE))
    if tuning.shm_gi is not None and tuning.shm_gi > most:
        ctx.add(
            f"{at}.tuning.shmGi",
            tuning.shm_gi,
            f"at most {most}: /dev/shm is memory-backed and counts against the replica's {memory_gi} GiB on "
            f"{itype.name}",
            most,
        )
    if tuning.rate_limit_resources and tuning.rate_limit != "execution_count":
        ctx.add(f"{at}.tuning.rateLimit", tuning.rate_limit, "execution_count when rateLimitResources are given (off "
                "ignores every model's rate_limiter)", "execution_count")  # fmt: skip


def _check_ephemeral_room(
    ctx: RuleContext, deployment: TritonDeployment, pool: GpuPool, itype: InstanceType | None, at: str
) -> None:
    """The repository copy (the chart's ephemeral-storage request: repositoryGi + 1) fits the node's ephemeral
    storage: the boot disk less what the image and the system take, or the machine's local SSDs where the cloud
    backs ephemeral storage with them (GKE a3/a4) — there for every replica a node holds."""
    local_gi = ctx.rules.node_local_ssd_gi(itype.name, ctx.region) if ctx.rules is not None and itype is not None else None
    if local_gi is None:
        room = pool.disk_gi - NODE_DISK_RESERVED_GI
        if deployment.repository_gi + 1 > room:
            ctx.add(
                f"{at}.repositoryGi",
                deployment.repository_gi,
                f"at most {room - 1}: the repository copy must fit on a {pool.disk_gi} GiB node disk of pool "
                f"'{pool.name}' next to Triton's image and the system ({NODE_DISK_RESERVED_GI} GiB); or raise that "
                "pool's diskGi",
                max(1, room - 1),
            )
        return
    assert itype is not None
    per_node = max(1, itype.gpu_count // max(1, deployment.gpus_per_replica))
    if per_node * (deployment.repository_gi + 1) > local_gi:
        most = local_gi // per_node - 1
        ctx.add(
            f"{at}.repositoryGi",
            deployment.repository_gi,
            f"at most {most}: {per_node} replicas per {itype.name} node each copy the repository to the node's "
            f"{local_gi} GiB of local SSD",
            max(1, most),
        )


# The node-local model cache keeps a deployment's published repository twice at most (the current view's entries and
# the previous view's, tritonfleet/models/node_cache.py KEPT_VIEWS) plus its free margin (FREE_MARGIN_BYTES, 1 GiB).
MODEL_CACHE_COPIES = 2
MODEL_CACHE_MARGIN_GI = 1


def model_cache_gi(deployment: TritonDeployment) -> int:
    """GiB the node-local model cache may hold for a deployment on one node."""
    return MODEL_CACHE_COPIES * deployment.repository_gi + MODEL_CACHE_MARGIN_GI


def _check_model_cache_room(
    ctx: RuleContext, deployment: TritonDeployment, pool: GpuPool, itype: InstanceType | None, at: str
) -> None:
    """The cache lives on the node's local NVMe (instance store, local SSD) beside what the replicas reserve there for
    the bucket fallback (repositoryGi + 1 each): both must fit, or the kubelet evicts pods for disk pressure."""
    if ctx.rules is None or itype is None:
        return
    local_gi = ctx.rules.node_local_ssd_gi(itype.name, ctx.region)
    if local_gi is None:
        ctx.add(
            f"{at}.modelCache",
            True,
            f"false: pool '{pool.name}' runs {itype.name}, which has no instance store or local SSD for the "
            "node-local model cache (it would fill the boot disk); or give the pool a type with local NVMe",
            False,
        )
        return
    per_node = max(1, itype.gpu_count // max(1, deployment.gpus_per_replica))
    needed = model_cache_gi(deployment) + per_node * (deployment.repository_gi + 1)
    if needed > local_gi >= per_node * (deployment.repository_gi + 1):  # else the copies alone are refused above
        most = max(1, (local_gi - MODEL_CACHE_MARGIN_GI - per_node) // (MODEL_CACHE_COPIES + per_node))
        ctx.add(
            f"{at}.repositoryGi",
            deployment.repository_gi,
            f"at most {most} with modelCache: the cache holds up to {MODEL_CACHE_COPIES} copies of the repository "
            f"({model_cache_gi(deployment)} GiB) and {per_node} replicas per {itype.name} node each reserve "
            f"{deployment.repository_gi + 1} GiB for the bucket fallback, {needed} GiB in all, on the node's "
            f"{local_gi} GiB of local NVMe; or set modelCache false, or give the pool a type with more NVMe",
            most,
        )


def _meant(name: str, names: list[str]) -> str:
    """The name `name` was likely meant to be: the closest by spelling, or the only one; else the choices."""
    return nearest(name, names) or (names[0] if len(names) == 1 else choose_from(names))
