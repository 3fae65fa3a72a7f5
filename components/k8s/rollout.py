"""Canary rollouts: the Argo Rollouts controller (one pinned helm.v3.Release) and a deployment's rollout values for
the Triton chart (templates/rollout.yaml renders the Rollout and its AnalysisTemplate from them).

The decisions (steps, replica split, thresholds, queries) are tritonfleet.core.rollout's; this module only spells
them as Argo Rollouts reads them. docs/serving.md "Model rollouts" says why Argo Rollouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.values import pinned_chart
from tritonfleet.core import pins
from tritonfleet.core import rollout as decisions
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.conventions import PROMETHEUS_URL

from .pod_security import ARGO_ROLLOUTS_LEVEL, pod_security_labels

ARGO_ROLLOUTS_NAMESPACE = "argo-rollouts"
RELEASE_TIMEOUT_SECONDS = 600


def canary_steps(deployment: TritonDeployment) -> list[dict[str, Any]]:
    """setWeight then pause {interval} per weight below 100; the end of the steps is the promotion."""
    assert deployment.rollout is not None
    out: list[dict[str, Any]] = []
    for step in decisions.steps(deployment):
        out += [{"setWeight": step.weight}, {"pause": {"duration": deployment.rollout.interval}}]
    return out


def rollout_values(deployment: TritonDeployment, monitoring: bool, router: str | None = None) -> dict[str, Any]:
    """The chart's `rollout` values: off without a rollout (or without the Prometheus that judges it). `router`: the
    Argo Rollouts traffic router of the deployment's exposure mode (ExposureFacts.rollout_traffic_routers), which then
    sends each step's weight itself to the canary; None: a replica-ratio canary."""
    if deployment.rollout is None or not monitoring:
        return {"enabled": False}
    return {
        "enabled": True,
        "trafficRouting": router or "",
        "trackLabel": decisions.TRACK_LABEL,
        "maxSurge": decisions.MAX_SURGE,
        "steps": canary_steps(deployment),
        "analysis": {
            "prometheusAddress": PROMETHEUS_URL,
            "interval": deployment.rollout.interval,
            "metrics": [
                {
                    "name": m.name,
                    "query": m.query,
                    "successCondition": m.success_condition,
                    "failureCondition": m.failure_condition,
                }
                for m in decisions.analysis_metrics(deployment)
            ],
        },
    }


class ArgoRollouts(pulumi.ComponentResource):
    """The Argo Rollouts controller and its CRDs (Rollout, AnalysisTemplate, ...), pinned in tritonfleet/core/pins.py."""

    def __init__(
        self,
        name: str,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:k8s:ArgoRollouts", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={"name": ARGO_ROLLOUTS_NAMESPACE, "labels": pod_security_labels(ARGO_ROLLOUTS_LEVEL)},
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.release = k8s.helm.v3.Release(
            name,
            name="argo-rollouts",
            **pinned_chart(pins.ARGO_ROLLOUTS_CHART),
            namespace=ARGO_ROLLOUTS_NAMESPACE,
            values={"installCRDs": True, "dashboard": {"enabled": False}},
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace, *depends_on]),
        )
        self.register_outputs({"release": self.release.status})
