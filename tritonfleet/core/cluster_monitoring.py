"""What a managed Kubernetes cluster lets an in-cluster Prometheus see, in kube-prometheus-stack terms only.

Each cloud's facts fill one `ClusterMonitoringFacts` (tritonfleet/clouds/<cloud>/monitoring.py), which its adapter hands
up in ClusterFacts; the monitoring values turn them into chart switches without naming a cloud.
A component the cluster hides must be switched off: the chart's `absent(up{job=...})` alerts (KubeControllerManagerDown,
KubeSchedulerDown, KubeProxyDown) and TargetDown would otherwise fire forever on a healthy cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

# Prometheus' scrape interval, set explicitly in the monitoring values (kube-prometheus-stack's default too); the
# rollout rules need it to judge analysis intervals, so it lives here, below both. tritonfleet's choice.
SCRAPE_INTERVAL_SECONDS = 30

@dataclass(frozen=True)
class ScrapeFact:
    """One kube-prometheus-stack component (its top-level values key) and why this cluster needs it on or off."""

    chart_key: str
    why: str
    source: str
    as_of: str


# The control-plane components (chart key, process) a managed control plane keeps out of the nodes' reach.
CONTROL_PLANE_COMPONENTS = (
    ("kubeControllerManager", "kube-controller-manager"),
    ("kubeScheduler", "kube-scheduler"),
    ("kubeEtcd", "etcd"),
)


def managed_control_plane(why: str, source: str, as_of: str) -> tuple[ScrapeFact, ...]:
    """The hidden fact for each control-plane component, `why` naming it at `{what}`."""
    return tuple(ScrapeFact(key, why.format(what=what), source, as_of) for key, what in CONTROL_PLANE_COMPONENTS)


@dataclass(frozen=True)
class ClusterMonitoringFacts:
    # Components the managed cluster hides or serves on localhost only: their scraping and rules are switched off.
    hidden: tuple[ScrapeFact, ...] = ()
    # Components the chart leaves off by default that this cluster runs instead (kube-dns on GKE).
    extra: tuple[ScrapeFact, ...] = ()
    # Where container logs (Triton's model-load errors included) can be searched without `kubectl logs`.
    log_destination: str = ""
    # A node label the cloud's provisioner sets to how the node was bought, where tritonfleet.io/capacity says only
    # what its NodePool prefers (AWS: karpenter.sh/capacity-type); kube-state-metrics must export it.
    capacity_type_label: str | None = None
