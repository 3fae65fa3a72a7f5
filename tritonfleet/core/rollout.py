"""Safe model rollouts, as pure decisions: a deployment's canary steps, what each step runs, the extra replicas and
GPUs the canary holds while it runs, and the analysis that judges it on Triton's own metrics, canary against stable.

Argo Rollouts runs the rollout (chart and CRDs pinned in tritonfleet/core/pins.py, objects rendered by
components/k8s/rollout.py); docs/serving.md "Model rollouts" says why Argo Rollouts and how traffic is split.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from tritonfleet.core.config.schema import StackConfig, TritonDeployment, duration_seconds, latency_ms

# The pod label Argo Rollouts sets on canary and stable pods (canaryMetadata/stableMetadata), and the label it becomes
# on every scraped series (the ServiceMonitor's podTargetLabels; Prometheus turns '.' and '/' into '_').
TRACK_LABEL = "tritonfleet.io/track"
TRACK_SERIES_LABEL = "tritonfleet_io_track"
CANARY, STABLE = "canary", "stable"
# Extra replicas a replica-ratio step may add beyond spec.replicas (the Rollout's maxSurge; maxUnavailable is 0, so
# the stable version never drops below what the weight leaves it).
MAX_SURGE = 1
# What a query answers when the canary has served too little to judge: neither condition holds, so Argo Rollouts
# records the measurement as Inconclusive and pauses the rollout (inconclusiveLimit 0): it is never promoted.
NO_VERDICT = -1
DEFAULT_TTFT_RATIO = 1.2


def pinned_config_name(deployment: TritonDeployment) -> str | None:
    """The custom model configuration a deployment's replicas load (Triton's --model-config-name: each model's
    configs/<name>.pbtxt, else its config.pbtxt), named after the pins: changing a pin changes the pod template, which
    is what starts a rollout. `models sync --stack --deployment` writes those files. None without pins."""
    if not deployment.model_versions:
        return None
    pins = ",".join(f"{model}={version}" for model, version in sorted(deployment.model_versions.items()))
    return "tfpin-" + hashlib.sha256(pins.encode()).hexdigest()[:12]


def canary_counts(replicas: int, weight: int, max_surge: int = MAX_SURGE) -> tuple[int, int]:
    """(canary, stable) replicas Argo Rollouts runs for a weight without a traffic router: the closest split of
    `replicas` (or `replicas` + 1 with surge) to the weight, never 0 canaries for a weight of 1-99.

    A port of approximateWeightedCanaryStableReplicaCounts, utils/replicaset/canary.go of argoproj/argo-rollouts at
    v1.9.1 (https://github.com/argoproj/argo-rollouts/blob/v1.9.1/utils/replicaset/canary.go, read 2026-12-05)."""
    if replicas == 0:
        return 0, 0
    ceil_count = math.ceil(replicas * weight / 100)
    floor_count = math.floor(replicas * weight / 100)
    zero_allowed = weight in (0, 100) or (replicas == 1 and max_surge == 0)

    def tied(total: int) -> bool:
        return math.modf(total * (weight / 100))[0] == 0.5

    options = []
    if ceil_count < replicas or zero_allowed:
        options.append((ceil_count, replicas))
    if not tied(replicas) and (floor_count != 0 or zero_allowed):
        options.append((floor_count, replicas))
    if max_surge > 0:
        options.append((ceil_count, replicas + 1))
        if not tied(replicas + 1) and (floor_count != 0 or zero_allowed):
            options.append((floor_count, replicas + 1))
    if not options:
        return 0, replicas
    canary, total = min(options, key=lambda o: abs(o[0] * 100 / o[1] - weight))  # first of equals, as upstream
    return canary, total - canary


REPLICA_RATIO = "replica-ratio"  # no traffic router: the canary's share is its share of the pods


def traffic_router(cloud: str, deployment: TritonDeployment) -> str | None:
    """The Argo Rollouts traffic router that splits the deployment's canary by weight ("alb"), or None where its
    exposure mode has none (a replica-ratio canary): the cloud's ROLLOUT_TRAFFIC_ROUTERS fact."""
    from tritonfleet.core.cloud import cloud as cloud_named

    return cloud_named(cloud).rollout_traffic_routers.get(deployment.access.mode)


def routed_canary_count(replicas: int, weight: int) -> int:
    """Canary replicas Argo Rollouts runs for a weight with a traffic router (the stable version stays at all
    `replicas`): the weight's share of them, rounded up. trafficWeightToReplicas in
    CalculateReplicaCountsForTrafficRoutedCanary, utils/replicaset/canary.go of argoproj/argo-rollouts at v1.9.1
    (https://github.com/argoproj/argo-rollouts/blob/v1.9.1/utils/replicaset/canary.go, read 2026-12-05)."""
    return math.ceil(weight * replicas / 100)


@dataclass(frozen=True)
class Step:
    weight: int  # declared, percent
    canary: int  # replicas at minReplicas
    stable: int
    seconds: int
    routed: bool = False  # a traffic router sends the weight itself to the canary

    @property
    def effective_weight(self) -> float:
        """The share of traffic the canary really gets: the weight where a router splits it, else its share of the
        ready replicas (a Service spreads evenly)."""
        if self.routed:
            return float(self.weight)
        return round(100 * self.canary / (self.canary + self.stable), 1)


def steps(deployment: TritonDeployment, router: str | None = None) -> list[Step]:
    """The steps below 100 % at the deployment's minReplicas (the last, 100 %, is the promotion)."""
    assert deployment.rollout is not None
    seconds = duration_seconds(deployment.rollout.interval)
    replicas = deployment.min_replicas
    out = []
    for weight in deployment.rollout.steps:
        if weight == 100:
            break
        if router:
            out.append(Step(weight, routed_canary_count(replicas, weight), replicas, seconds, routed=True))
        else:
            out.append(Step(weight, *canary_counts(replicas, weight), seconds))
    return out


def extra_replicas(deployment: TritonDeployment, router: str | None = None) -> int:
    """Replicas beyond minReplicas the rollout holds at its widest step: at most the surge for a replica-ratio canary,
    the widest step's canary pods where a router splits traffic (the stable version keeps all its pods)."""
    return max((s.canary + s.stable - deployment.min_replicas for s in steps(deployment, router)), default=0)


@dataclass(frozen=True)
class Thresholds:
    max_error_ratio: float
    max_latency_ratio: float
    max_queue_ms: float | None
    max_ttft_ratio: float | None
    min_requests: int


def thresholds(deployment: TritonDeployment) -> Thresholds:
    assert deployment.rollout is not None
    analysis = deployment.rollout.analysis
    queue = analysis.max_queue_time or deployment.queue_time_target
    ttft = analysis.max_ttft_ratio or (DEFAULT_TTFT_RATIO if deployment.llm else None)
    return Thresholds(
        analysis.max_error_ratio, analysis.max_latency_ratio, latency_ms(queue) if queue else None, ttft, analysis.min_requests
    )


@dataclass(frozen=True)
class Metric:
    """One analysis metric: a PromQL query answering one number, and the threshold it must stay at or under."""

    name: str
    query: str
    limit: float

    @property
    def success_condition(self) -> str:  # Argo Rollouts' expr over the query's vector, `result`
        return f"result[0] >= 0 && result[0] <= {self.limit:g}"

    @property
    def failure_condition(self) -> str:
        return f"result[0] > {self.limit:g}"


def _selector(namespace: str, models: list[str], track: str) -> str:
    model = f', model=~"{"|".join(models)}"' if models else ""
    return f'namespace="{namespace}"{model}, {TRACK_SERIES_LABEL}="{track}"'


def analysis_metrics(deployment: TritonDeployment) -> list[Metric]:
    """The queries the AnalysisTemplate runs every interval, each comparing the canary's pods with the stable
    version's over the same window; each answers NO_VERDICT until the canary served minRequests in the window."""
    assert deployment.rollout is not None
    limits = thresholds(deployment)
    window = deployment.rollout.interval
    models = deployment.counted_models or sorted(deployment.model_versions)
    canary, stable = (_selector(deployment.namespace, models, t) for t in (CANARY, STABLE))

    def rate(metric: str, sel: str) -> str:
        return f"sum(rate({metric}{{{sel}}}[{window}]))"

    served = (
        f"(sum(increase(nv_inference_request_success{{{canary}}}[{window}])) + "
        f"(sum(increase(nv_inference_request_failure{{{canary}}}[{window}])) or vector(0)))"
    )

    def judged(expr: str) -> str:
        return f"(({expr}) and on() ({served} >= {limits.min_requests})) or on() vector({NO_VERDICT})"

    failures = f"({rate('nv_inference_request_failure', canary)} or vector(0))"
    metrics = [
        Metric(
            "error-ratio",
            judged(f"{failures} / ({rate('nv_inference_request_success', canary)} + {failures})"),
            limits.max_error_ratio,
        ),
        Metric(
            "latency-vs-stable",
            # Mean latency over the interval from Triton's counters, not its p99 summary: a summary's quantiles cover
            # Triton's own sliding window, so at a canary's few inferences its p99 is the new pod's first (cold)
            # inference and fails a good version (tests/test_rollout_live.py measured it).
            judged(
                " / ".join(
                    f"({rate('nv_inference_request_duration_us', sel)} / {rate('nv_inference_request_success', sel)})"
                    for sel in (canary, stable)
                )
            ),
            limits.max_latency_ratio,
        ),
    ]
    if limits.max_queue_ms is not None:
        metrics.append(
            Metric(
                "queue-ms",
                judged(
                    f"{rate('nv_inference_queue_duration_us', canary)} / "
                    f"{rate('nv_inference_request_success', canary)} / 1000"
                ),
                limits.max_queue_ms,
            )
        )
    if limits.max_ttft_ratio is not None:
        metrics.append(
            Metric(
                "ttft-p95-vs-stable",
                judged(
                    " / ".join(
                        f"histogram_quantile(0.95, sum by (le) "
                        f"(rate(nv_inference_first_response_histogram_ms_bucket{{{sel}}}[{window}])))"
                        for sel in (canary, stable)
                    )
                ),
                limits.max_ttft_ratio,
            )
        )
    return metrics


PASSED, FAILED, INCONCLUSIVE = "passed", "failed", "inconclusive"


def verdict(metric: Metric, result: list[float]) -> str:
    """What Argo Rollouts makes of one measurement, as the conditions say: an empty answer is an error upstream (it
    retries; the queries never give one), NO_VERDICT and NaN (no latency observed) match neither condition: inconclusive, never passed."""
    value = result[0] if result else math.nan
    if 0 <= value <= metric.limit:
        return PASSED
    return FAILED if value > metric.limit else INCONCLUSIVE


def summary(config: StackConfig, deployment: TritonDeployment) -> dict[str, Any]:
    """What the plan shows of a deployment's rollout: pins, the traffic split (a router's weights, else the replica
    ratio), steps (the weight each really gives at minReplicas), the
    thresholds, how long it runs and the GPUs the canary holds beyond the floor while it runs, with their price.

    The extra GPUs are priced at the pool's on-demand $/GPU-hour (a canary lands on burst capacity, on-demand the
    dearest it can be), else the dearest price the pool has, else its assumed price; "unknown" when none is known,
    never 0."""
    from tritonfleet.core.conventions import HOURS_PER_MONTH
    from tritonfleet.core.cost import pool_prices

    assert deployment.rollout is not None
    pool = config.pool(deployment.pool)
    itype = config.instance_type(pool)
    prices = pool_prices(pool, itype, config.region, config.cloud)
    known = [p for p in prices.values() if p is not None]
    node_hour = prices.get("on-demand") or max(known, default=None) or pool.assumed_usd_per_hour
    router = traffic_router(config.cloud, deployment)
    plan = steps(deployment, router)
    gpus = extra_replicas(deployment, router) * deployment.gpus_per_replica
    hours = sum(s.seconds for s in plan) / 3600
    hourly = None if node_hour is None else node_hour / itype.gpu_count * gpus
    limits = thresholds(deployment)
    return {
        "deployment": deployment.name,
        "modelVersions": dict(sorted(deployment.model_versions.items())),
        "imageTag": deployment.image_tag,
        "controller": "argo-rollouts",
        "trafficSplit": f"{router} weights" if router else REPLICA_RATIO,
        "interval": deployment.rollout.interval,
        "steps": [
            {"weight": s.weight, "effectiveWeight": s.effective_weight, "canaryReplicas": s.canary, "stableReplicas": s.stable}
            for s in plan
        ],
        "thresholds": {
            "maxErrorRatio": limits.max_error_ratio,
            "maxLatencyRatio": limits.max_latency_ratio,
            "maxQueueMs": limits.max_queue_ms,
            "maxTtftRatio": limits.max_ttft_ratio,
            "minRequests": limits.min_requests,
        },
        "minutes": round(hours * 60, 1),
        "extraGpus": gpus,
        "extraUsdPerHour": "unknown" if hourly is None else round(hourly, 2),
        "usdPerRollout": "unknown" if hourly is None else round(hourly * hours, 2),
        "monthlyUsdWhileRunning": "unknown" if hourly is None else round(hourly * HOURS_PER_MONTH, 2),
    }
