"""GKE facts for monitoring: what its managed control plane hides from Prometheus, and its DNS (plain data)."""

from __future__ import annotations

from tritonfleet.core.cluster_monitoring import ClusterMonitoringFacts, ScrapeFact, managed_control_plane

_CONTROL_PLANE = (
    "GKE manages the control plane outside the cluster's nodes: {what} cannot be scraped from inside (GKE sends "
    "control-plane metrics to Cloud Monitoring instead)"
)
_CONTROL_PLANE_METRICS = "https://cloud.google.com/kubernetes-engine/docs/how-to/control-plane-metrics"


def gcp_monitoring_facts() -> ClusterMonitoringFacts:
    return ClusterMonitoringFacts(
        hidden=(
            *managed_control_plane(_CONTROL_PLANE, _CONTROL_PLANE_METRICS, "2026-12-03"),
            ScrapeFact(
                "kubeProxy",
                "GKE runs kube-proxy as a static pod whose metrics listen on 127.0.0.1:10249 (none at all with Dataplane "
                "V2) (VERIFY on a live cluster)",
                "https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2",
                "2026-12-03",
            ),
            ScrapeFact(
                "coreDns",
                "GKE's cluster DNS is kube-dns, not CoreDNS: nothing serves CoreDNS metrics on port 9153",
                "https://cloud.google.com/kubernetes-engine/docs/how-to/kube-dns",
                "2026-12-03",
            ),
        ),
        extra=(
            ScrapeFact(
                "kubeDns",
                "kube-dns is GKE's cluster DNS; its dnsmasq/sidecar metrics are scraped instead of CoreDNS's (VERIFY on a "
                "live cluster that the chart's ports 10054/10055 answer)",
                "https://github.com/robusta-dev/robusta/issues/553",
                "2026-12-03",
            ),
        ),
        log_destination=(
            "Cloud Logging: GKE clusters send system and workload logs there by default (logging_config left at its "
            "default); query resource.type=\"k8s_container\""
        ),
    )
