"""The NVIDIA GPU Operator: one pinned helm.v3.Release, values from the cloud adapter's profile for its node image."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.values import pinned_chart
from tritonfleet.core import pins
from tritonfleet.core.conventions import GPU_OPERATOR_NAMESPACE, GPU_OPERATOR_RELEASE, MONITOR_SELECTOR_LABELS
from tritonfleet.core.gpu_operator import chart_overrides, profile_options, standalone_dcgm_exporter

from .values import deep_merge, key_tolerations

# The operator rolls its DaemonSets one node at a time; on a few GPU nodes that takes far longer than Helm's 5 min.
RELEASE_TIMEOUT_SECONDS = 1200
_CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}


def gpu_operator_values(profile: dict[str, Any], gpu_taints: Iterable[dict[str, str]], monitoring: bool) -> dict[str, Any]:
    """gpu-operator chart values: our base (tolerations, DCGM ServiceMonitor) under the cloud profile's overrides."""
    tolerations = key_tolerations(gpu_taints)
    overrides = chart_overrides(profile)
    base: dict[str, Any] = {
        "daemonsets": {"tolerations": tolerations},
        # The NFD worker labels GPU nodes (the operands follow those labels), so it must run on tainted nodes too.
        "node-feature-discovery": {"worker": {"tolerations": [_CONTROL_PLANE_TOLERATION, *tolerations]}},
        "dcgmExporter": {
            "serviceMonitor": {"enabled": monitoring, "additionalLabels": dict(MONITOR_SELECTOR_LABELS) if monitoring else {}}
        },
    }
    if overrides.get("driver", {}).get("enabled", True):
        # An operator-managed driver upgrade evicts every GPU pod of a node: one node at a time.
        base["driver"] = {"upgradePolicy": {"maxParallelUpgrades": 1, "maxUnavailable": 1}}
    return deep_merge(base, overrides)


def resource_quota(namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The ResourceQuota object for a spec handed up by the cloud adapter (GKE: system-*-critical pods)."""
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpu-operator-quota", "namespace": namespace}, "spec": spec}


class GpuOperator(pulumi.ComponentResource):
    """gpu-operator in its own privileged namespace. When the profile says the cloud owns the GPU stack: nothing, or
    only NVIDIA's dcgm-exporter (profile option dcgmExporter) so DCGM metrics still reach Prometheus."""

    def __init__(
        self,
        name: str,
        profile: dict[str, Any],
        gpu_taints: Iterable[dict[str, str]],
        monitoring: bool,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        quota_spec: dict[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("tritonfleet:k8s:GpuOperator", name, None, opts)
        options = profile_options(profile)
        self.release: k8s.helm.v3.Release | None = None
        self.dcgm_exporter: list[pulumi.Resource] = []
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        if not options["install"] and options["dcgmExporter"] is None:
            self.register_outputs({})
            return
        namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={
                "name": GPU_OPERATOR_NAMESPACE,
                # Driver, toolkit, device-plugin and DCGM pods are privileged by design.
                "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
            },
            opts=child,
        )
        before_release: list[pulumi.Resource] = [namespace, *depends_on]
        if quota_spec is not None:
            quota = resource_quota(GPU_OPERATOR_NAMESPACE, quota_spec)
            before_release.append(
                k8s.core.v1.ResourceQuota(
                    f"{name}-quota",
                    metadata=quota["metadata"],
                    spec=quota["spec"],
                    opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[namespace])),
                )
            )
        if not options["install"]:
            exporter = options["dcgmExporter"]
            objects = standalone_dcgm_exporter(
                GPU_OPERATOR_NAMESPACE, exporter["driverHostDir"], exporter["gpuNodeLabel"], key_tolerations(gpu_taints),
                monitoring,
            )
            for obj in objects:
                kind = obj["kind"]
                # The ServiceMonitor CRD comes with the monitoring release, the quota admits system-node-critical pods.
                after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=before_release))
                resource_name = f"{name}-dcgm-{kind.lower()}"
                if kind == "DaemonSet":
                    resource = k8s.apps.v1.DaemonSet(resource_name, metadata=obj["metadata"], spec=obj["spec"], opts=after)
                elif kind == "Service":
                    resource = k8s.core.v1.Service(resource_name, metadata=obj["metadata"], spec=obj["spec"], opts=after)
                else:
                    resource = k8s.apiextensions.CustomResource(
                        resource_name, api_version=obj["apiVersion"], kind=kind, metadata=obj["metadata"], spec=obj["spec"],
                        opts=after,
                    )
                self.dcgm_exporter.append(resource)
            self.register_outputs({})
            return
        self.release = k8s.helm.v3.Release(
            name,
            name=GPU_OPERATOR_RELEASE,
            **pinned_chart(pins.GPU_OPERATOR_CHART),
            namespace=GPU_OPERATOR_NAMESPACE,
            values=gpu_operator_values(profile, gpu_taints, monitoring),
            timeout=RELEASE_TIMEOUT_SECONDS,
            # A half-upgraded GPU stack rolled back automatically is worse than one left for a person to inspect.
            atomic=False,
            cleanup_on_fail=False,
            # The chart's pre-upgrade hook applies newer CRDs; values.yaml asks for this flag on upgrades.
            disable_openapi_validation=True,
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=before_release)),
        )
        self.register_outputs({"status": self.release.status})
