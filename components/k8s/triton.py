"""One Triton Inference Server release per configured deployment, from our chart in charts/triton-inference-server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core import pins
from tritonfleet.core.catalog import InstanceType
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.conventions import MONITOR_SELECTOR_LABELS, TRITON_CHART_NAME, triton_release_name
from tritonfleet.core.disruption import POD_STOP_SECONDS, pdb_max_unavailable
from tritonfleet.core.exposure import ExposureFacts
from tritonfleet.core.llm_exports import serving_layout
from tritonfleet.core.packing import NodeShape, replica_requests, replica_shape, replicas_per_node, shm_gi
from tritonfleet.core.placement import SOFT, HostnameSpread
from tritonfleet.core.rollout import pinned_config_name
from tritonfleet.core.scheduling import PoolFacts
from tritonfleet.core.startup import HPA_SCALE_UP, helm_timeout_seconds, model_load_threads

from .access import access_values
from .autoscaling import (
    INFERENCES_PER_SECOND,
    KV_CACHE,
    LLM_SIGNALS,
    QUEUE_MS_PER_REQUEST,
    SEQUENCES,
    TTFT,
    target_inferences_per_second,
    target_kv_cache,
    target_sequences,
)
from .rollout import rollout_values
from .values import taint_toleration

# Facts of a cluster whose load balancers tritonfleet does not drive: exposure cluster (ClusterIP) only.
NO_LOAD_BALANCERS = ExposureFacts()
# Relative to the project directory, where the language host runs the program: the plan stays machine-independent.
CHART_PATH = f"./charts/{TRITON_CHART_NAME}"  # "./": unambiguously a local path, never repo/chart
CHART_DIR = Path(__file__).resolve().parents[2] / CHART_PATH

# Seconds between Triton's exit timeout and the kubelet's SIGKILL (Triton's own shutdown after draining).
KILL_MARGIN_SECONDS = 5
# On-demand pools have no external deadline; this budget bounds a rollout or a scale-down.
ON_DEMAND_SHUTDOWN_SECONDS = POD_STOP_SECONDS
# How often Triton re-reads the repository in `poll` mode, where the shutdown budget allows (repository_poll_seconds).
REPOSITORY_POLL_SECONDS = 60


@dataclass(frozen=True)
class ShutdownBudget:
    pre_stop_seconds: int
    exit_timeout_seconds: int
    termination_grace_period_seconds: int


def shutdown_budget(pool: PoolFacts) -> ShutdownBudget:
    """preStop + Triton's drain + margin = grace period, which fits inside what a spot reclaim leaves a pod.

    That is the notice less the margin, or the pods' share of the node's own shutdown where it is shorter
    (`PoolFacts.spot_pod_shutdown_seconds`). AWS spot (120 s notice): 15 + 95 + 5 = 115. GKE spot (30 s notice, 15 s
    for pods): 3 + 10 + 2 = 15; with GKE's extended 120 s window (105 s for pods): 15 + 85 + 5 = 105.
    On-demand: 15 + 100 + 5 = 120.
    """
    grace = ON_DEMAND_SHUTDOWN_SECONDS
    if pool.spot and pool.spot_notice_seconds:
        grace = pool.spot_notice_seconds - KILL_MARGIN_SECONDS
        if pool.spot_pod_shutdown_seconds is not None:
            grace = min(grace, pool.spot_pod_shutdown_seconds)
    pre_stop = max(3, min(15, grace // 6))
    margin = min(KILL_MARGIN_SECONDS, grace // 6)  # a short budget keeps 10 s for the drain
    return ShutdownBudget(pre_stop, grace - pre_stop - margin, grace)


def repository_poll_seconds(budget: ShutdownBudget) -> int:
    """Triton's poll interval in `poll` mode: REPOSITORY_POLL_SECONDS, or the drain budget where that is shorter.

    Triton's main loop polls the repository, then sleeps the interval on a condition variable that SIGTERM's handler
    notifies without the loop checking its flag first (triton-inference-server/server src/main.cc): a SIGTERM that
    arrives during a poll starts the drain only when the interval ends (63 s seen on the real tritonserver here). No
    new request reaches the pod after preStop, so an interval no longer than the drain budget still lets every
    request finish before the kubelet's SIGKILL: on GKE spot (15 s in all) that is a poll every 10 s."""
    return min(REPOSITORY_POLL_SECONDS, budget.exit_timeout_seconds)


def replica_resources(instance_type: InstanceType, gpus_per_replica: int) -> dict[str, str]:
    """CPU and memory of one replica: its GPUs' share of the node, less what the node keeps for itself."""
    cpu, memory_gib = replica_requests(instance_type, gpus_per_replica)
    return {"cpu": str(cpu), "memory": f"{memory_gib}Gi"}


def model_repository_path(bucket_uri: str, prefix: str) -> str:
    """s3://bucket or gs://bucket joined with a model prefix ('' or 'a/b/')."""
    return f"{bucket_uri.rstrip('/')}/{prefix.strip('/')}".rstrip("/")


MIB = 1024 * 1024


def tuning_args(deployment: TritonDeployment) -> list[str]:
    """Triton's flags for the deployment's tuning (formats as tritonserver --help of the pinned release gives them);
    the CUDA pool is set for each GPU the replica sees (0..gpusPerReplica-1)."""
    tuning = deployment.tuning
    args = [
        f"--{flag}={name},{setting}={_flag_value(value)}"
        for flag, sections in (("backend-config", tuning.backend_config), ("cache-config", tuning.cache_config))
        for name, settings in sorted(sections.items())
        for setting, value in sorted(settings.items())
    ]
    if tuning.pinned_memory_mib is not None:
        args.append(f"--pinned-memory-pool-byte-size={tuning.pinned_memory_mib * MIB}")
    if tuning.cuda_memory_pool_mib is not None:
        args += [f"--cuda-memory-pool-byte-size={gpu}:{tuning.cuda_memory_pool_mib * MIB}"
                 for gpu in range(deployment.gpus_per_replica)]  # fmt: skip
    if tuning.rate_limit != "off":
        args.append(f"--rate-limit={tuning.rate_limit}")
    args += [f"--rate-limit-resource={name}:{count}" for name, count in sorted(tuning.rate_limit_resources.items())]
    if tuning.buffer_manager_threads is not None:
        args.append(f"--buffer-manager-thread-count={tuning.buffer_manager_threads}")
    return args


def _flag_value(value: str | int | bool) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def autoscaling_values(deployment: TritonDeployment, monitoring: bool) -> dict[str, Any]:
    """The HPA's targets: offered load against the per-replica capacity (measured where the deployment has a usable
    loadtestResult, else stated), counting only the models clients call; and the optional queue-time guard."""
    capacity = deployment.capacity_per_replica
    guard = deployment.queue_time_target
    return {
        "enabled": monitoring and deployment.max_replicas > deployment.min_replicas,
        "models": deployment.counted_models,
        "inferencesPerSecond": {
            "metric": INFERENCES_PER_SECOND,
            "target": target_inferences_per_second(capacity, deployment.target_utilization) if capacity else "",
        },
        "queueTime": {"metric": QUEUE_MS_PER_REQUEST, "targetMs": f"{latency_ms(guard):g}" if guard else ""},
        # The startup budget's reach to maxReplicas assumes this policy: one place for both.
        "scaleUp": dict(HPA_SCALE_UP),
        **_llm_autoscaling(deployment),
    }


def _llm_autoscaling(deployment: TritonDeployment) -> dict[str, Any]:
    """An LLM deployment also scales on what its layout exports (autoscaling.LLM_SIGNALS): its sequences against its
    batch capacity and the share of its KV cache in use, both at targetUtilization, and its mean time to first token
    against llm.ttftTarget as a guard; the HPA takes the largest proposal of all its metrics. A signal the layout
    cannot serve is left out (empty target): an HPA missing one metric never scales down."""
    llm = deployment.llm
    if llm is None:
        return {}
    signals = LLM_SIGNALS[serving_layout(llm)]
    targets = {
        SEQUENCES: ("target", target_sequences(llm.max_sequences, deployment.target_utilization)),
        KV_CACHE: ("target", target_kv_cache(deployment.target_utilization)),
        TTFT: ("targetMs", f"{latency_ms(llm.ttft_target):g}"),
    }
    return {kind: {"metric": signals[kind], key: target} for kind, (key, target) in targets.items() if kind in signals}


def llm_env(deployment: TritonDeployment) -> dict[str, str]:
    """TensorRT-LLM across several GPUs of one pod: orchestrator mode, where the backend spawns one worker per GPU
    itself (TRTLLM_ORCHESTRATOR=1, as NVIDIA's Triton OpenAI frontend guide runs it), so plain `tritonserver` serves
    a tensor-parallel engine without mpirun. vLLM reads tensor_parallel_size from the model's model.json."""
    llm = deployment.llm
    if llm is not None and llm.backend == "tensorrtllm" and deployment.gpus_per_replica > 1:
        return {"TRTLLM_ORCHESTRATOR": "1"}
    return {}


def node_affinity_values(pool: PoolFacts) -> dict[str, Any]:
    """Preferred node affinity away from nodes that carry one of the pool's `avoid_node_labels` (GKE: a host
    maintenance is scheduled there), or {} when there are none."""
    if not pool.avoid_node_labels:
        return {}
    terms = [{"key": key, "operator": "DoesNotExist"} for key in pool.avoid_node_labels]
    return {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {"matchExpressions": terms}}]}


def triton_values(
    deployment: TritonDeployment,
    pool: PoolFacts,
    instance_type: InstanceType,
    bucket_uri: str,
    env: Mapping[str, str],
    service_account_annotations: Mapping[str, str],
    monitoring: bool,
    hostname: HostnameSpread | None = None,
    model_cache_host_path: str = "",
) -> dict[str, Any]:
    """The chart values for one deployment (plain data; tested without Pulumi). `hostname` is the deployment's node
    spread (`tritonfleet.core.placement.hostname_spread`); by default a soft one with maxSkew = replicas per node.
    `model_cache_host_path`: the cloud's node folder of the node-local model cache (Cloud.model_cache_host_path)."""
    budget = shutdown_budget(pool)
    if hostname is None:
        per_node = replicas_per_node(NodeShape.of(instance_type), replica_shape(instance_type, deployment.gpus_per_replica))
        hostname = HostnameSpread(max(1, per_node), SOFT)
    return {
        "image": {"repository": pins.TRITON_IMAGE_REPOSITORY, "tag": deployment.image_tag},
        "modelRepository": model_repository_path(bucket_uri, deployment.model_prefix),
        "modelControlMode": deployment.model_control_mode,
        "repositoryPollSeconds": repository_poll_seconds(budget),
        "modelLoadSeconds": deployment.model_load_seconds,
        "requiredModels": list(deployment.required_models),
        "loadModels": list(deployment.load_models),
        "modelLoadThreads": model_load_threads(
            deployment, replica_requests(instance_type, deployment.gpus_per_replica)[0]
        ),
        "modelConfigName": pinned_config_name(deployment) or "",
        "logging": {"verbose": deployment.log_verbose, "format": deployment.log_format},
        "storage": {"repositoryGi": deployment.repository_gi},
        "gpusPerReplica": deployment.gpus_per_replica,
        "resources": replica_resources(instance_type, deployment.gpus_per_replica),
        "shmSize": f"{shm_gi(instance_type, deployment.gpus_per_replica, deployment.tuning.shm_gi, deployment.llm is not None)}Gi",
        "tuningArgs": tuning_args(deployment),
        "replicas": {"min": deployment.min_replicas, "max": deployment.max_replicas},
        "nodeSelector": dict(pool.node_selector),
        "tolerations": [taint_toleration(taint) for taint in pool.taints],
        # Spread over spot and on-demand nodes too (the label that says how each node of the pool was bought).
        "topologySpread": {"capacityTypeKey": pool.capacity_type_label, "hostname": hostname.values()},
        "nodeAffinity": node_affinity_values(pool),
        "podDisruptionBudget": {"maxUnavailable": pdb_max_unavailable(deployment)},
        "spotNoticeSeconds": pool.spot_pod_shutdown_seconds or pool.spot_notice_seconds,
        "shutdown": {
            "preStopSeconds": budget.pre_stop_seconds,
            "exitTimeoutSeconds": budget.exit_timeout_seconds,
            "terminationGracePeriodSeconds": budget.termination_grace_period_seconds,
        },
        "env": {**env, **llm_env(deployment)},
        "serviceAccount": {"annotations": dict(service_account_annotations)},
        "serviceMonitor": {"enabled": monitoring, "labels": dict(MONITOR_SELECTOR_LABELS) if monitoring else {}},
        # The HPA reads custom metrics that only prometheus-adapter (installed with monitoring) serves.
        "autoscaling": autoscaling_values(deployment, monitoring),
        "rollout": rollout_values(deployment, monitoring),
        # Only where it scales to zero: every other deployment's values stay as they were (the chart's default is off).
        **({"scaleToZero": _scale_to_zero(deployment, monitoring, instance_type)} if deployment.scale_to_zero else {}),
        **openai_frontend_values(deployment),
        # Likewise only where the deployment reads the node-local model cache.
        **({"modelCache": _model_cache(deployment, instance_type, model_cache_host_path)} if deployment.model_cache else {}),
    }


def openai_frontend_values(deployment: TritonDeployment) -> dict[str, Any]:
    """Triton's OpenAI-compatible frontend where an LLM deployment asks for it (docs/serving.md); {} elsewhere, so
    every other release's values stay as they were."""
    llm = deployment.llm
    if llm is None or not llm.openai_frontend:
        return {}
    return {"openaiFrontend": {"enabled": True, "backend": llm.backend, "tokenizer": llm.tokenizer or ""}}


def _model_cache(deployment: TritonDeployment, instance_type: InstanceType, host_path: str) -> dict[str, Any]:
    from tritonfleet.core.startup import cache_wait_seconds

    from .model_cache import model_cache_values

    return model_cache_values(deployment, host_path, cache_wait_seconds(deployment, instance_type))


def _scale_to_zero(deployment: TritonDeployment, monitoring: bool, instance_type: InstanceType) -> dict[str, Any]:
    from tritonfleet.core.startup import first_request_wait

    from .keda import scale_to_zero_values

    # The interceptor holds the first request for the longest start: on a new node.
    return scale_to_zero_values(deployment, monitoring, first_request_wait(deployment, instance_type, new_node=True))


def release_values(
    deployment: TritonDeployment,
    pool: PoolFacts,
    instance_type: InstanceType,
    bucket_uri: pulumi.Input[str],
    env: Mapping[str, str],
    service_account_annotations: Mapping[str, pulumi.Input[str]],
    monitoring: bool,
    exposure: ExposureFacts,
    hostname: HostnameSpread | None = None,
    image_repository: pulumi.Input[str] | None = None,
    model_cache_host_path: str = "",
) -> dict[str, Any]:
    """The release's values, with the cloud's outputs only at their own leaves (modelRepository, the ServiceAccount
    annotations, the mirror's image repository where the cloud has one). In a first preview the role ARN / service account email is unknown: wrapping the whole dict in one
    apply would make every value unknown, so the policy pack could not check nodeSelector, tolerations or access."""
    values = {
        **triton_values(deployment, pool, instance_type, "", env, {}, monitoring, hostname, model_cache_host_path),
        **access_values(deployment, exposure),
        # Where the exposure mode's load balancer splits traffic by weight, the canary's steps are real weights.
        "rollout": rollout_values(deployment, monitoring, exposure.rollout_traffic_routers.get(deployment.access.mode)),
    }
    values["modelRepository"] = pulumi.Output.from_input(bucket_uri).apply(
        lambda uri: model_repository_path(uri, deployment.model_prefix)
    )
    values["serviceAccount"] = {"annotations": dict(service_account_annotations)}
    if image_repository is not None:
        values["image"] = {**values["image"], "repository": image_repository}
    return values


class TritonRelease(pulumi.ComponentResource):
    """One Triton deployment: our pinned chart, on its GPU pool, reading its bucket under its own identity."""

    def __init__(
        self,
        name: str,
        deployment: TritonDeployment,
        pool: PoolFacts,
        instance_type: InstanceType,
        bucket_uri: pulumi.Input[str],
        env: Mapping[str, str],
        service_account_annotations: Mapping[str, pulumi.Input[str]],
        monitoring: bool,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
        exposure: ExposureFacts = NO_LOAD_BALANCERS,
        hostname: HostnameSpread | None = None,
        image_repository: pulumi.Input[str] | None = None,
        model_cache_host_path: str = "",
    ):
        super().__init__("tritonfleet:k8s:TritonRelease", name, None, opts)
        values = release_values(
            deployment, pool, instance_type, bucket_uri, env, service_account_annotations, monitoring, exposure, hostname,
            image_repository, model_cache_host_path,
        )
        self.release = k8s.helm.v3.Release(
            name,
            name=triton_release_name(deployment.name),
            chart=CHART_PATH,
            namespace=deployment.namespace,
            create_namespace=True,
            values=values,
            timeout=helm_timeout_seconds(deployment),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"status": self.release.status})
