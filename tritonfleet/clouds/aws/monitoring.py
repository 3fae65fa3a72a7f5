"""EKS facts for monitoring: what its managed control plane and add-ons hide from Prometheus (plain data)."""

from __future__ import annotations

from tritonfleet.clouds.aws.facts import NODE_CAPACITY_TYPE_LABEL
from tritonfleet.core.cluster_monitoring import ClusterMonitoringFacts, ScrapeFact, managed_control_plane

_CONTROL_PLANE = (
    "EKS runs the control plane in an AWS-managed account: no {what} endpoint is reachable from the nodes (EKS offers "
    "some control-plane metrics only through the API server, which this chart does not scrape for {what})"
)
_RAW_METRICS = "https://docs.aws.amazon.com/eks/latest/userguide/view-raw-metrics.html"


def aws_monitoring_facts() -> ClusterMonitoringFacts:
    return ClusterMonitoringFacts(
        hidden=(
            *managed_control_plane(_CONTROL_PLANE, _RAW_METRICS, "2026-12-03"),
            ScrapeFact(
                "kubeProxy",
                "the EKS kube-proxy add-on binds its metrics to 127.0.0.1:10249 (kube-proxy's default), so Prometheus "
                "cannot reach them (VERIFY on a live cluster: kube-system ConfigMap kube-proxy-config, metricsBindAddress)",
                "https://github.com/eksctl-io/eksctl/issues/4081",
                "2026-12-03",
            ),
        ),
        log_destination=(
            "CloudWatch Logs, log group /aws/containerinsights/<cluster>/application, through the "
            "amazon-cloudwatch-observability EKS add-on (Fluent Bit)"
        ),
        capacity_type_label=NODE_CAPACITY_TYPE_LABEL,
    )
