"""kube-prometheus-stack values and the Alertmanager configuration: every key exists upstream, selectors are open,
storage is persistent, Grafana reads its password from a Secret, and alert receivers are validated and kept secret."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.conftest import STACKS, engine_config
from tests.monitoring_support import KPS_CHART, run, tool, upstream_chart
from tritonfleet.clouds.aws.monitoring import aws_monitoring_facts
from tritonfleet.core.config import AlertReceiver, ConfigError, Monitoring, load_stack_config
from tritonfleet.monitoring import stack_values
from tritonfleet.monitoring.sizing import RETENTION_SIZE_SHARE, prometheus_sizing
from tritonfleet.monitoring.stack_values import alertmanager_config, kube_prometheus_stack_values

RECEIVERS = [
    {"name": "oncall", "kind": "pagerduty", "routingKey": "pd-routing-key-123", "severities": ["critical"]},
    {"name": "chat", "kind": "slack", "url": "https://hooks.slack.example/T000/B000/XXXX", "channel": "#gpu-alerts"},
    {"name": "hook", "kind": "webhook", "url": "https://alerts.example.internal/tritonfleet"},
]


def _paths(values: Any, upstream: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths in `values` that the upstream defaults do not have. Below a `{}` or list default the content is free-form."""
    missing = []
    for key, value in values.items():
        path = (*prefix, key)
        if not isinstance(upstream, dict) or key not in upstream:
            missing.append(path)
            continue
        below = upstream[key]
        if isinstance(value, dict) and isinstance(below, dict) and below:
            missing += _paths(value, below, path)
    return missing


def _values(receivers: bool = False, **monitoring: Any) -> dict[str, Any]:
    section = Monitoring(**monitoring, alert_receivers=[AlertReceiver.model_validate(r) for r in RECEIVERS] if receivers else [])
    config = load_stack_config(engine_config("prod"), "prod").model_copy(update={"monitoring": section})
    return kube_prometheus_stack_values(section, aws_monitoring_facts(), prometheus_sizing(config))


@pytest.mark.parametrize("receivers", [False, True])
def test_every_values_key_exists_in_the_pinned_chart(receivers):
    upstream = yaml.safe_load((upstream_chart(KPS_CHART) / "values.yaml").read_text())
    missing = _paths(_values(receivers, storage_class="gp3"), upstream)
    assert set(missing) == set(stack_values.SUBCHART_KEYS), "unknown keys (typos?) or an outdated SUBCHART_KEYS list"


def test_the_chart_version_is_the_pinned_one():
    from tritonfleet.core import pins

    chart = yaml.safe_load((upstream_chart(KPS_CHART) / "Chart.yaml").read_text())
    assert (chart["name"], chart["version"]) == (
        pins.KUBE_PROMETHEUS_STACK_CHART["chart"],
        pins.KUBE_PROMETHEUS_STACK_CHART["version"],
    )


def test_selectors_pick_up_every_monitor_and_rule():
    spec = _values()["prometheus"]["prometheusSpec"]
    for kind in ("serviceMonitor", "podMonitor", "rule", "probe", "scrapeConfig"):
        assert spec[f"{kind}SelectorNilUsesHelmValues"] is False


def test_persistent_storage_and_retention_follow_the_config():
    spec = _values(retention_days=30, storage_gi=200, storage_class="premium-rwo")["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "30d"
    claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "200Gi"}},
        "storageClassName": "premium-rwo",
    }
    assert "storageClassName" not in _values()["prometheus"]["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]
    # The volume never fills: retention by size stops short of it, whatever the series estimate said.
    assert spec["retentionSize"] == f"{int(200 * RETENTION_SIZE_SHARE)}GiB"


def test_prometheus_resources_follow_the_series_estimate():
    prod = load_stack_config(engine_config("prod"), "prod")
    dev = load_stack_config(engine_config("dev"), "dev")
    big, small = prometheus_sizing(prod), prometheus_sizing(dev)
    assert big.series > small.series > 25_000
    assert big.memory_request_mib > small.memory_request_mib
    resources = _values()["prometheus"]["prometheusSpec"]["resources"]
    assert resources["requests"]["memory"] == f"{big.memory_request_mib}Mi"
    assert resources["limits"]["memory"] == f"{big.memory_limit_mib}Mi"
    assert big.memory_limit_mib >= 2 * big.memory_request_mib


def test_disk_estimate_is_prometheus_formula_and_warns_when_retention_does_not_fit():
    dev = load_stack_config(engine_config("dev"), "dev")
    sizing = prometheus_sizing(dev)
    # retention seconds x samples/s (series / 30 s scrape) x 2 bytes per sample
    expected = dev.monitoring.retention_days * 86_400 * sizing.series / 30 * 2 / 2**30
    assert sizing.disk_needed_gib == pytest.approx(expected, abs=0.1)
    tiny = dev.model_copy(update={"monitoring": Monitoring(retention_days=365, storage_gi=10)})
    [warning] = prometheus_sizing(tiny).warnings()
    assert warning.startswith("monitoring.storageGi:") and "pulumi config set --path 'tritonfleet:monitoring.storageGi'" in warning


def test_grafana_reads_its_admin_from_a_secret_and_loads_labelled_dashboards():
    grafana = _values()["grafana"]
    assert grafana["admin"] == {
        "existingSecret": "tritonfleet-grafana-admin",
        "userKey": "admin-user",
        "passwordKey": "admin-password",
    }
    assert "adminPassword" not in grafana
    assert grafana["sidecar"]["dashboards"]["label"] == "grafana_dashboard"
    assert grafana["sidecar"]["dashboards"]["labelValue"] == "1"


def test_kube_state_metrics_exports_our_node_labels():
    """Ours, and on EKS Karpenter's capacity type (what a burst node really is: the cost rules read it); each pod's
    Triton release (the live cost per deployment)."""
    allow = _values()["kube-state-metrics"]["metricLabelsAllowlist"]
    assert allow == [
        "nodes=[tritonfleet.io/pool,tritonfleet.io/gpu,tritonfleet.io/capacity,karpenter.sh/capacity-type]",
        "pods=[app.kubernetes.io/instance]",
    ]


def test_alertmanager_keeps_chart_defaults_without_receivers():
    assert "alertmanager" not in _values()
    assert _values(receivers=True)["alertmanager"] == {"alertmanagerSpec": {"useExistingSecret": True}}


def test_alertmanager_config_routes_by_severity_and_passes_amtool(tmp_path):
    config = alertmanager_config([AlertReceiver.model_validate(r) for r in RECEIVERS])
    routes = {r["receiver"]: r for r in config["route"]["routes"]}
    assert routes["oncall"]["matchers"] == ['severity =~ "critical"']
    assert routes["chat"]["matchers"] == ['severity =~ "critical|warning"']
    assert routes[stack_values.DISCARD_RECEIVER]["matchers"] == ['alertname = "Watchdog"']
    receivers = {r["name"]: r for r in config["receivers"]}
    assert receivers["oncall"]["pagerduty_configs"][0]["routing_key"] == "pd-routing-key-123"
    assert receivers["chat"]["slack_configs"][0]["channel"] == "#gpu-alerts"

    amtool = tool("amtool", "prometheus-alertmanager")
    path = tmp_path / "alertmanager.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    result = run(amtool, "check-config", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- config: receivers are validated, and secret


def _load(receivers: list[dict[str, Any]], secret: bool, stack: str = "dev"):
    raw = dict(engine_config(stack))
    monitoring = json.loads(raw.get("tritonfleet:monitoring", "{}"))
    raw["tritonfleet:monitoring"] = json.dumps({**monitoring, "alertReceivers": receivers})
    return load_stack_config(raw, stack, ["tritonfleet:monitoring"] if secret else [])


def test_receivers_given_as_secrets_load():
    config = _load(RECEIVERS, secret=True)
    assert [r.kind for r in config.monitoring.alert_receivers] == ["pagerduty", "slack", "webhook"]


def test_receivers_in_clear_text_are_a_problem_that_never_echoes_the_secret():
    with pytest.raises(ConfigError) as caught:
        _load(RECEIVERS, secret=False)
    message = str(caught.value)
    assert "hooks.slack.example" not in message and "pd-routing-key-123" not in message
    assert message.count("a Pulumi secret") == 3
    assert "pulumi config set --secret --path 'tritonfleet:monitoring.alertReceivers[1].url' <value> --stack dev" in message


@pytest.mark.parametrize(
    ("receiver", "key", "expected"),
    [
        ({"name": "a", "kind": "webhook"}, "alertReceivers[0].url", "required for a webhook receiver"),
        ({"name": "a", "kind": "pagerduty", "url": "https://x"}, "alertReceivers[0].url", "not used by a pagerduty receiver"),
        ({"name": "a", "kind": "webhook", "url": "https://x", "channel": "#x"}, "alertReceivers[0].channel", "only for slack"),
        ({"name": "a", "kind": "email", "url": "https://x"}, "alertReceivers[0].kind", "webhook, slack or pagerduty"),
        (
            {"name": "a", "kind": "slack", "url": "https://x", "severities": ["page"]},
            "alertReceivers[0].severities[0]",
            "critical",
        ),
        ({"name": "Bad_Name", "kind": "slack", "url": "https://x"}, "alertReceivers[0].name", "lower-case letters"),
    ],
)
def test_bad_receivers_are_problems(receiver, key, expected):
    with pytest.raises(ConfigError) as caught:
        _load([receiver], secret=True)
    problems = {p.key: p for p in caught.value.problems}
    assert f"monitoring.{key}" in problems, str(caught.value)
    assert expected in problems[f"monitoring.{key}"].allowed


def test_duplicate_receiver_names_are_a_problem():
    with pytest.raises(ConfigError) as caught:
        _load([RECEIVERS[1], {**RECEIVERS[2], "name": "chat"}], secret=True)
    assert [p.key for p in caught.value.problems] == ["monitoring.alertReceivers[1].name"]


@pytest.mark.parametrize(("field", "value"), [("storageGi", 5), ("retentionDays", 0), ("storageClass", "Not A Class")])
def test_bad_storage_settings_are_problems(field, value):
    raw = dict(engine_config("dev"))
    raw["tritonfleet:monitoring"] = json.dumps({field: value})
    with pytest.raises(ConfigError) as caught:
        load_stack_config(raw, "dev")
    assert [p.key for p in caught.value.problems] == [f"monitoring.{field}"]


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_have_valid_monitoring(stack):
    assert load_stack_config(engine_config(stack), stack).monitoring.enabled


def test_the_plan_shows_the_prometheus_estimate():
    from tritonfleet.plan.document import monitoring_section

    section = monitoring_section(load_stack_config(engine_config("prod"), "prod"))
    assert section["estimatedSeries"] > 25_000 and section["retentionSizeGi"] == 170
    assert section["warnings"] == [], "prod's 200 GiB must hold its 30 days"


def test_watchdog_goes_to_the_dead_mans_switch_every_minute_and_passes_amtool(tmp_path):
    url = "https://hc-ping.example/0000-heartbeat"
    config = alertmanager_config([AlertReceiver.model_validate(r) for r in RECEIVERS], dead_mans_switch_url=url)
    first = config["route"]["routes"][0]
    assert first["receiver"] == stack_values.DEAD_MANS_SWITCH_RECEIVER and first["matchers"] == ['alertname = "Watchdog"']
    assert first["repeat_interval"] == "1m" and "continue" not in first, "the heartbeat reaches nothing else"
    switch = next(r for r in config["receivers"] if r["name"] == stack_values.DEAD_MANS_SWITCH_RECEIVER)
    assert switch["webhook_configs"] == [{"url": url, "send_resolved": False}]
    without = alertmanager_config([AlertReceiver.model_validate(r) for r in RECEIVERS])
    assert without["route"]["routes"][0]["receiver"] == stack_values.DISCARD_RECEIVER
    import shutil

    amtool = shutil.which("amtool")
    if amtool is None:
        pytest.skip("amtool (Debian package prometheus-alertmanager) is not installed; the config was not checked by it")
    path = tmp_path / "alertmanager.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    result = run(amtool, "check-config", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    routed = run(amtool, "config", "routes", "test", "--config.file", str(path), "alertname=Watchdog", "severity=none")
    assert routed.stdout.strip() == stack_values.DEAD_MANS_SWITCH_RECEIVER, routed.stdout + routed.stderr


def test_a_dead_mans_switch_in_clear_text_is_a_problem_that_never_echoes_it():
    raw = dict(engine_config("dev"))
    raw["tritonfleet:monitoring"] = json.dumps({"deadMansSwitchUrl": "https://hc-ping.example/secret-uuid"})
    with pytest.raises(ConfigError) as caught:
        load_stack_config(raw, "dev")
    assert [p.key for p in caught.value.problems] == ["monitoring.deadMansSwitchUrl"]
    assert "secret-uuid" not in str(caught.value)
    assert "pulumi config set --secret --path 'tritonfleet:monitoring.deadMansSwitchUrl'" in str(caught.value)
    config = load_stack_config(raw, "dev", ["tritonfleet:monitoring"])
    assert stack_values.has_alertmanager_config(config.monitoring)
