"""Values for the kube-prometheus-stack release and the Alertmanager configuration, as plain data.

Every key set here exists in the chart's pinned default values (`tests/upstream/kube-prometheus-stack-88.5.3`),
except the kube-state-metrics sub-chart key named in SUBCHART_KEYS; a test walks the dict against that file.
"""

from __future__ import annotations

from typing import Any

from tritonfleet.core.cluster_monitoring import SCRAPE_INTERVAL_SECONDS, ClusterMonitoringFacts
from tritonfleet.core.config import AlertReceiver, Monitoring
from tritonfleet.core.conventions import (
    CAPACITY_LABEL,
    GPU_LABEL,
    GRAFANA_DASHBOARD_LABEL,
    GRAFANA_DATASOURCE_UID,
    KUBE_PROMETHEUS_STACK_RELEASE,
    NODE_EXPORTER_NAMESPACE,
    POOL_LABEL,
)
from tritonfleet.monitoring.sizing import PrometheusSizing

GRAFANA_ADMIN_SECRET = "tritonfleet-grafana-admin"
GRAFANA_ADMIN_USER = "admin"
GRAFANA_USER_KEY = "admin-user"
GRAFANA_PASSWORD_KEY = "admin-password"

# With alertmanagerSpec.useExistingSecret the chart creates no config Secret and the operator reads the default one:
# "alertmanager-" + the Alertmanager object's name, which the chart sets to "<fullname>-alertmanager".
ALERTMANAGER_CONFIG_SECRET = f"alertmanager-{KUBE_PROMETHEUS_STACK_RELEASE}-alertmanager"
ALERTMANAGER_CONFIG_KEY = "alertmanager.yaml"
# Where alerts nobody subscribed to go; the underscore keeps it apart from receiver names users can choose.
DISCARD_RECEIVER = "tritonfleet_discard"
# Where the Watchdog heartbeat goes when a dead-man's switch is configured (healthchecks.io, Dead Man's Snitch, ...):
# the service pages when the heartbeat STOPS, i.e. when Prometheus, Alertmanager or the path between them is down.
DEAD_MANS_SWITCH_RECEIVER = "tritonfleet_dead_mans_switch"
HEARTBEAT_REPEAT = "1m"

# Keys of sub-charts whose defaults are not in the parent chart's values.yaml, with where they are defined.
SUBCHART_KEYS = {
    ("kube-state-metrics", "metricLabelsAllowlist"): "prometheus-community/helm-charts charts/kube-state-metrics/values.yaml",
}

_SELECTOR_SWITCHES = (
    "serviceMonitorSelectorNilUsesHelmValues",
    "podMonitorSelectorNilUsesHelmValues",
    "ruleSelectorNilUsesHelmValues",
    "probeSelectorNilUsesHelmValues",
    "scrapeConfigSelectorNilUsesHelmValues",
)


def kube_prometheus_stack_values(
    monitoring: Monitoring, cluster: ClusterMonitoringFacts, sizing: PrometheusSizing
) -> dict[str, Any]:
    """Selectors open to every ServiceMonitor/PodMonitor/PrometheusRule, persistent storage bounded by retentionSize,
    resources from the series estimate, Grafana from a Secret, and nothing scraped that the managed cluster hides."""
    [(dashboard_label, dashboard_label_value)] = GRAFANA_DASHBOARD_LABEL.items()
    volume_spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": f"{monitoring.storage_gi}Gi"}},
    }
    if monitoring.storage_class:
        volume_spec["storageClassName"] = monitoring.storage_class
    values: dict[str, Any] = {
        "crds": {"enabled": True},
        "prometheus": {
            "prometheusSpec": {
                # False: select every ServiceMonitor, PodMonitor, Probe, ScrapeConfig and PrometheusRule, not only
                # those labelled release=kube-prometheus-stack (the chart's default silently ignores ours).
                **{switch: False for switch in _SELECTOR_SWITCHES},
                "retention": f"{monitoring.retention_days}d",
                # Whichever comes first: the volume never fills, even when the series estimate was low.
                "retentionSize": f"{sizing.retention_size_gib}GiB",
                "scrapeInterval": f"{SCRAPE_INTERVAL_SECONDS}s",
                "resources": {
                    "requests": {"cpu": f"{sizing.cpu_request_millicores}m", "memory": f"{sizing.memory_request_mib}Mi"},
                    "limits": {"memory": f"{sizing.memory_limit_mib}Mi"},
                },
                "storageSpec": {"volumeClaimTemplate": {"spec": volume_spec}},
            }
        },
        "grafana": {
            "admin": {"existingSecret": GRAFANA_ADMIN_SECRET, "userKey": GRAFANA_USER_KEY, "passwordKey": GRAFANA_PASSWORD_KEY},
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": dashboard_label,
                    "labelValue": dashboard_label_value,
                    "searchNamespace": "ALL",
                },
                "datasources": {"enabled": True, "uid": GRAFANA_DATASOURCE_UID},
            },
        },
        # The node exporter reads the host, which Pod Security "baseline" refuses: it gets a namespace of its own.
        "prometheus-node-exporter": {"namespaceOverride": NODE_EXPORTER_NAMESPACE},
        # kube_node_labels carries no labels unless allowed: the cost rules need the pool and purchase option.
        "kube-state-metrics": {
            "metricLabelsAllowlist": [
                "nodes=[" + ",".join([POOL_LABEL, GPU_LABEL, CAPACITY_LABEL, *filter(None, [cluster.capacity_type_label])]) + "]",
                # the Triton release of each pod: the live cost per deployment (monitoring/rules.py allocation_rules)
                "pods=[app.kubernetes.io/instance]",
            ]
        },
    }
    # Scraping a component the cluster hides makes the chart's absent()/TargetDown alerts fire forever.
    for fact in cluster.hidden:
        values[fact.chart_key] = {"enabled": False}
    for fact in cluster.extra:
        values[fact.chart_key] = {"enabled": True}
    if has_alertmanager_config(monitoring):
        values["alertmanager"] = {"alertmanagerSpec": {"useExistingSecret": True}}
    return values


def has_alertmanager_config(monitoring: Monitoring) -> bool:
    """Whether the stack writes alertmanager.yaml (receivers or a dead-man's switch); else the chart's default."""
    return bool(monitoring.alert_receivers or monitoring.dead_mans_switch_url)


_RECEIVER_CONFIG = {
    "webhook": lambda r: {"webhook_configs": [{"url": r.url, "send_resolved": True}]},
    "slack": lambda r: {
        "slack_configs": [{"api_url": r.url, "send_resolved": True, **({"channel": r.channel} if r.channel else {})}]
    },
    "pagerduty": lambda r: {"pagerduty_configs": [{"routing_key": r.routing_key, "send_resolved": True}]},
}


def alertmanager_config(receivers: list[AlertReceiver], dead_mans_switch_url: str | None = None) -> dict[str, Any]:
    """alertmanager.yaml for the configured receivers (it holds their secrets: keep it in a secret Output).

    Each receiver gets the alerts of its severities. Watchdog (the always-firing heartbeat) goes, every minute, to the
    dead-man's switch URL when one is set, else it is discarded; nothing else reaches the switch. Inhibition follows
    the chart's default: a critical alert mutes warnings and infos of the same name and namespace.
    """
    watchdog = ['alertname = "Watchdog"']
    if dead_mans_switch_url:
        heartbeat = {"group_wait": "0s", "group_interval": HEARTBEAT_REPEAT, "repeat_interval": HEARTBEAT_REPEAT}
        routes: list[dict[str, Any]] = [{"receiver": DEAD_MANS_SWITCH_RECEIVER, "matchers": watchdog, **heartbeat}]
    else:
        routes = [{"receiver": DISCARD_RECEIVER, "matchers": watchdog}]
    routes += [{"receiver": r.name, "matchers": [f'severity =~ "{"|".join(r.severities)}"'], "continue": True} for r in receivers]
    return {
        "global": {"resolve_timeout": "5m"},
        "route": {
            "receiver": DISCARD_RECEIVER,
            "group_by": ["namespace", "alertname"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "12h",
            "routes": routes,
        },
        "inhibit_rules": [
            {
                "source_matchers": ['severity = "critical"'],
                "target_matchers": ['severity =~ "warning|info"'],
                "equal": ["namespace", "alertname"],
            },
            {
                "source_matchers": ['severity = "warning"'],
                "target_matchers": ['severity = "info"'],
                "equal": ["namespace", "alertname"],
            },
        ],
        "receivers": [{"name": DISCARD_RECEIVER}]
        + (
            [{"name": DEAD_MANS_SWITCH_RECEIVER, "webhook_configs": [{"url": dead_mans_switch_url, "send_resolved": False}]}]
            if dead_mans_switch_url
            else []
        )
        + [{"name": r.name, **_RECEIVER_CONFIG[r.kind](r)} for r in receivers],
    }
