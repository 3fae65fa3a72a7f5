"""kube-prometheus-stack with our dashboards and rules: the Monitoring component.

Other releases whose objects need the Prometheus Operator CRDs (ServiceMonitor, PodMonitor, PrometheusRule) pass
`depends_on=[monitoring.release]`. The values, rules and dashboards are plain data from `tritonfleet.monitoring`.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random
import yaml

from components.k8s.pod_security import MONITORING_LEVEL, NODE_EXPORTER_LEVEL, pod_security_labels
from components.k8s.values import pinned_chart
from tritonfleet.core import pins
from tritonfleet.core.cluster_monitoring import ClusterMonitoringFacts
from tritonfleet.core.config import StackConfig
from tritonfleet.core.conventions import (
    KUBE_PROMETHEUS_STACK_RELEASE,
    MONITORING_NAMESPACE,
    NODE_EXPORTER_NAMESPACE,
    PROMETHEUS_URL,
)
from tritonfleet.monitoring import stack_values
from tritonfleet.monitoring.dashboards import dashboard_configmap, dashboards
from tritonfleet.monitoring.rules import prometheus_rule
from tritonfleet.monitoring.sizing import prometheus_sizing

RELEASE_TIMEOUT_SECONDS = 900  # CRDs, admission-webhook hook jobs and a PersistentVolume to bind


class Monitoring(pulumi.ComponentResource):
    """kube-prometheus-stack, its Grafana admin and Alertmanager secrets, our dashboards and our PrometheusRule."""

    def __init__(
        self,
        name: str,
        config: StackConfig,
        cluster: ClusterMonitoringFacts,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`cluster`: what the managed cluster hides from Prometheus (from the cloud adapter's ClusterFacts)."""
        super().__init__("tritonfleet:k8s:Monitoring", name, None, opts)
        monitoring = config.monitoring
        on_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={"name": MONITORING_NAMESPACE, "labels": pod_security_labels(MONITORING_LEVEL)},
            opts=on_cluster,
        )
        node_exporter_namespace = k8s.core.v1.Namespace(
            f"{name}-node-exporter-namespace",
            metadata={"name": NODE_EXPORTER_NAMESPACE, "labels": pod_security_labels(NODE_EXPORTER_LEVEL)},
            opts=on_cluster,
        )
        in_namespace = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace])

        password = random.RandomPassword(
            f"{name}-grafana-admin", length=32, special=False, opts=pulumi.ResourceOptions(parent=self)
        )
        self.grafana_admin_password = pulumi.Output.secret(password.result)
        grafana_admin = k8s.core.v1.Secret(
            f"{name}-grafana-admin",
            metadata={"name": stack_values.GRAFANA_ADMIN_SECRET, "namespace": MONITORING_NAMESPACE},
            type="Opaque",
            string_data={
                stack_values.GRAFANA_USER_KEY: stack_values.GRAFANA_ADMIN_USER,
                stack_values.GRAFANA_PASSWORD_KEY: self.grafana_admin_password,
            },
            opts=in_namespace,
        )
        release_needs: list[pulumi.Resource] = [namespace, node_exporter_namespace, grafana_admin]
        if stack_values.has_alertmanager_config(monitoring):
            # The receivers' URLs and keys are secrets: they go to a Secret, never into the Helm values.
            config_data = stack_values.alertmanager_config(monitoring.alert_receivers, monitoring.dead_mans_switch_url)
            alertmanager_yaml = yaml.safe_dump(config_data, sort_keys=False)
            release_needs.append(
                k8s.core.v1.Secret(
                    f"{name}-alertmanager-config",
                    metadata={"name": stack_values.ALERTMANAGER_CONFIG_SECRET, "namespace": MONITORING_NAMESPACE},
                    type="Opaque",
                    string_data={stack_values.ALERTMANAGER_CONFIG_KEY: pulumi.Output.secret(alertmanager_yaml)},
                    opts=in_namespace,
                )
            )

        self.release = k8s.helm.v3.Release(
            name,
            name=KUBE_PROMETHEUS_STACK_RELEASE,
            **pinned_chart(pins.KUBE_PROMETHEUS_STACK_CHART),
            namespace=MONITORING_NAMESPACE,
            values=stack_values.kube_prometheus_stack_values(monitoring, cluster, prometheus_sizing(config)),
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=release_needs),
        )

        for key, board in dashboards(config).items():
            manifest = dashboard_configmap(key, board, MONITORING_NAMESPACE)
            k8s.core.v1.ConfigMap(
                f"{name}-dashboard-{key}", metadata=manifest["metadata"], data=manifest["data"], opts=in_namespace
            )

        rule = prometheus_rule(config, MONITORING_NAMESPACE)
        k8s.apiextensions.CustomResource(
            f"{name}-rules",
            api_version=rule["apiVersion"],
            kind=rule["kind"],
            metadata=rule["metadata"],
            spec=rule["spec"],
            # The PrometheusRule CRD comes with the release.
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[self.release]),
        )
        self.prometheus_url = PROMETHEUS_URL
        self.register_outputs({"release": self.release.status, "prometheusUrl": PROMETHEUS_URL})
