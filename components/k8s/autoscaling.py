"""prometheus-adapter: serves Triton's queue-to-compute ratio as a custom metric for the Triton HPAs.

Triton's counters have no `_total` suffix, so the adapter's default rules would hand the HPA raw cumulative counters.
Our rules take explicit rates. The ratio is request-weighted: queue and compute microseconds are summed over every
request of every model of a pod before dividing, so a busy model weighs more than an idle one (averaging per-model
series would under-report the queue by about the number of loaded models; triton-inference-server/server#8979).
An HPA can narrow the metric to one model with a `model` label selector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from tritonfleet.core import pins
from tritonfleet.core.conventions import MONITORING_NAMESPACE, PROMETHEUS_ADAPTER_RELEASE, PROMETHEUS_PORT, PROMETHEUS_SERVICE_URL

QUEUE_COMPUTE_RATIO = "triton_queue_compute_ratio"
QUEUE_US_PER_REQUEST = "triton_queue_us_per_request"
RATE_WINDOW = "1m"

_POD_RESOURCES = {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}}


def _rate(series: str) -> str:
    return f"sum(rate({series}{{<<.LabelMatchers>>}}[{RATE_WINDOW}])) by (<<.GroupBy>>)"


def triton_adapter_rules() -> list[dict[str, Any]]:
    """prometheus-adapter custom rules (templates with <<.LabelMatchers>> and <<.GroupBy>>)."""
    queue = "nv_inference_queue_duration_us"
    return [
        {
            "seriesQuery": f'{queue}{{namespace!="",pod!=""}}',
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{queue}$", "as": QUEUE_COMPUTE_RATIO},
            # clamp_min(…, 1): an idle pod (no compute in the window) reads as 0, not NaN.
            "metricsQuery": f"{_rate(queue)} / clamp_min({_rate('nv_inference_compute_infer_duration_us')}, 1)",
        },
        {
            "seriesQuery": f'{queue}{{namespace!="",pod!=""}}',
            "resources": _POD_RESOURCES,
            "name": {"matches": f"^{queue}$", "as": QUEUE_US_PER_REQUEST},
            "metricsQuery": f"{_rate(queue)} / clamp_min({_rate('nv_inference_request_success')}, 1e-9)",
        },
    ]


def prometheus_adapter_values() -> dict[str, Any]:
    return {
        "prometheus": {"url": PROMETHEUS_SERVICE_URL, "port": PROMETHEUS_PORT},
        # The default rules expose Triton's suffix-less counters as raw cumulative values: off, ours only.
        "rules": {"default": False, "custom": triton_adapter_rules()},
        "metricsRelistInterval": "1m",
        # The HPAs of every Triton deployment read through this APIService: two replicas and a disruption budget.
        "replicas": 2,
        "podDisruptionBudget": {"enabled": True, "maxUnavailable": 1},
    }


class PrometheusAdapter(pulumi.ComponentResource):
    """prometheus-adapter: serves Triton's queue metrics as custom metrics, so the Triton HPAs can scale on them."""

    def __init__(
        self,
        name: str,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:k8s:PrometheusAdapter", name, None, opts)
        self.release = k8s.helm.v3.Release(
            name,
            name=PROMETHEUS_ADAPTER_RELEASE,
            chart=pins.PROMETHEUS_ADAPTER_CHART["chart"],
            version=pins.PROMETHEUS_ADAPTER_CHART["version"],
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=pins.PROMETHEUS_ADAPTER_CHART["repo"]),
            namespace=MONITORING_NAMESPACE,
            create_namespace=True,
            values=prometheus_adapter_values(),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"status": self.release.status})
