"""Idle capacity to zero: KEDA and its HTTP add-on, and the Triton chart values that scale a deployment with them.

A deployment at zero replicas has no Triton to count its requests, and a request to a Service without endpoints is
refused before anything counts it, so a Prometheus trigger on Triton's own metrics can never wake it. The HTTP
add-on's interceptor sits in the request's path: it holds the request, pushes the pending count to KEDA (trigger
`external-push`), which scales the deployment from zero, and forwards the request once a replica is ready. KEDA's
ScaledObject then owns the deployment's HPA (`keda-hpa-<name>`; KEDA's admission webhook refuses a second HPA on the
same workload), so the chart renders its own HPA only without scale-to-zero and KEDA's carries the same Triton
metrics as Prometheus triggers, with the same scale-up and scale-down behaviour (docs/serving.md "Idle capacity to
zero").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core import pins
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.config.schema import latency_ms
from tritonfleet.core.conventions import (
    KEDA_HTTP_ADD_ON_RELEASE,
    KEDA_HTTP_SCALER_ADDRESS,
    KEDA_NAMESPACE,
    KEDA_RELEASE,
    PROMETHEUS_URL,
    triton_release_name,
)
from tritonfleet.core.startup import FirstRequest
from tritonfleet.monitoring.autoscaling import SIGNAL_COUNTER, SIGNAL_WINDOW

from .pod_security import KEDA_LEVEL, pod_security_labels

# The interceptor's concurrency target per replica: high, so that above one replica Triton's own metrics (the
# Prometheus triggers) decide, as the HPA's do without scale-to-zero; it still scales a deployment with none.
CONCURRENCY_PER_REPLICA = 100
# KEDA polls its Prometheus triggers this often (its default is 30 s); the interceptor's trigger pushes, so a first
# request never waits for a poll.
POLLING_SECONDS = 15
# Margin on the interceptor's readiness timeout over the first request's known wait (unknown steps come on top).
READINESS_MARGIN = 2
RELEASE_TIMEOUT_SECONDS = 600


def _pod_matchers(deployment: TritonDeployment, models: Sequence[str] = ()) -> str:
    matchers = [f'namespace="{deployment.namespace}"', f'pod=~"{triton_release_name(deployment.name)}-.*"']
    if models:
        matchers.append(f'model=~"{"|".join(models)}"')
    return "{" + ",".join(matchers) + "}"


def prometheus_triggers(deployment: TritonDeployment) -> list[dict[str, str]]:
    """KEDA Prometheus triggers carrying the HPA's signals (components/k8s/autoscaling.py): inferences/s per replica
    against the usable capacity (AverageValue: KEDA divides the deployment's sum by its replicas), and the mean queue
    wait per request against the guard (Value: already a mean over the pods)."""
    triggers = []
    capacity = deployment.capacity_per_replica
    if capacity:
        query = f"sum(rate({SIGNAL_COUNTER}{_pod_matchers(deployment, deployment.counted_models)}[{SIGNAL_WINDOW}]))"
        threshold = round(capacity * deployment.target_utilization, 3)
        triggers.append({"name": "inferences-per-second", "metricType": "AverageValue", "query": query,
                         "threshold": f"{threshold:g}"})  # fmt: skip
    if deployment.queue_time_target:
        rate = f"sum(rate(%s{_pod_matchers(deployment)}[{SIGNAL_WINDOW}]))"
        query = f"{rate % 'nv_inference_queue_duration_us'} / clamp_min({rate % 'nv_inference_request_success'}, 1e-9) / 1000"
        triggers.append({"name": "queue-ms-per-request", "metricType": "Value", "query": query,
                         "threshold": f"{latency_ms(deployment.queue_time_target):g}"})  # fmt: skip
    return triggers


def scale_to_zero_values(deployment: TritonDeployment, monitoring: bool, wait: FirstRequest) -> dict[str, Any]:
    """The chart's `scaleToZero` values: KEDA's ScaledObject and the add-on's InterceptorRoute. The interceptor holds
    the first request for the replica's start (`wait`, with a margin; 0 = as long as it takes when steps are
    unknown), so it is answered instead of timing out."""
    idle = deployment.scale_to_zero
    assert idle is not None
    readiness = wait.seconds * READINESS_MARGIN if wait.complete else 0
    return {
        "enabled": True,
        "idleSeconds": idle.idle_minutes * 60,
        "pollingSeconds": POLLING_SECONDS,
        "readinessTimeoutSeconds": readiness,
        "concurrencyPerReplica": CONCURRENCY_PER_REPLICA,
        "scalerAddress": KEDA_HTTP_SCALER_ADDRESS,
        "interceptorNamespace": KEDA_NAMESPACE,
        "prometheus": {
            "serverAddress": PROMETHEUS_URL if monitoring else "",
            "triggers": prometheus_triggers(deployment) if monitoring else [],
        },
    }


# Both charts install their CRDs (ScaledObject, InterceptorRoute), which the Triton releases render: they go first.
# Their defaults say so too (kedacore/charts keda/values.yaml and http-add-on/values.yaml `crds.install: true`, 0.15.0 /
# 2.20.2, read 2026-12-05); set here so that a changed default cannot drop them.
CHART_VALUES = {"crds": {"install": True}}


class Keda(pulumi.ComponentResource):
    """KEDA and its HTTP add-on in the `keda` namespace, pinned in tritonfleet/core/pins.py; installed only where a
    deployment scales to zero."""

    def __init__(
        self,
        name: str,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:k8s:Keda", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={"name": KEDA_NAMESPACE, "labels": pod_security_labels(KEDA_LEVEL)},
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        releases = []
        for release, chart in ((KEDA_RELEASE, pins.KEDA_CHART), (KEDA_HTTP_ADD_ON_RELEASE, pins.KEDA_HTTP_ADD_ON_CHART)):
            releases.append(
                k8s.helm.v3.Release(
                    f"{name}-{release}",
                    name=release,
                    chart=chart["chart"],
                    version=chart["version"],
                    repository_opts={"repo": chart["repo"]},
                    namespace=KEDA_NAMESPACE,
                    values=CHART_VALUES,
                    timeout=RELEASE_TIMEOUT_SECONDS,
                    # The add-on's operator creates ScaledObjects: KEDA's CRDs first.
                    opts=pulumi.ResourceOptions(
                        parent=self, provider=provider, depends_on=[namespace, *depends_on, *releases]
                    ),
                )
            )
        self.releases = releases
        self.register_outputs({"status": [r.status for r in releases]})
