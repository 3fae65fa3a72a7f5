"""Alertmanager receiver credentials live in Kubernetes Secrets only, never in Helm values, ConfigMaps or container
environments: a Slack webhook URL, a PagerDuty routing key or a dead man's switch URL there sits in the Helm release
record and the Pulumi state, and in a ConfigMap anyone who can read the namespace reads it.

tritonfleet renders the Alertmanager configuration into a Secret (components/k8s/monitoring.py) from stack values the
config requires to be secrets; this policy keeps every other path to the cluster to that standard.
"""

import re

import yaml
from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from policies._match import HELM_CHART_V4, HELM_RELEASE, K8S_CONFIG_MAP, K8S_WORKLOADS, get, is_mapping, walk

# Receiver fields that carry a credential (Alertmanager's configuration reference,
# https://prometheus.io/docs/alerting/latest/configuration/#receiver, read 2026-12-05), and the global ones.
RECEIVER_CREDENTIALS = {
    "api_url", "url", "routing_key", "service_key", "api_key", "bot_token", "token", "webhook_url", "api_secret",
    "password", "auth_password", "user_key",
}
GLOBAL_CREDENTIALS = {"slack_api_url", "opsgenie_api_key", "victorops_api_key", "wechat_api_secret", "smtp_auth_password",
                      "telegram_bot_token", "webex_api_url"}
# Container environment names that carry alerting credentials (compared lower-case, letters and digits only).
ENV_NAMES = re.compile(r"(slack|pagerduty|opsgenie|deadmans|healthchecks|webhook).*(url|key|token)")


def _config_findings(value, path: str) -> list[str]:
    """Credential paths inside an Alertmanager configuration (an object, or YAML text of one)."""
    if isinstance(value, str) and ("_configs" in value or any(g in value for g in GLOBAL_CREDENTIALS)):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            return []
    found = []
    for here, key, child in walk(value):
        if key is None or child in (None, "") or not isinstance(child, str):
            continue
        parent = here.rsplit(".", 1)[0]
        under_receiver = re.search(r"_configs\[\d+\]$", parent) is not None
        if (under_receiver and key in RECEIVER_CREDENTIALS) or key in GLOBAL_CREDENTIALS:
            found.append(f"{path}.{here}" if path else here)
    return found


def findings(resource_type: str, props) -> list[str]:
    if resource_type in (HELM_RELEASE, HELM_CHART_V4):
        return _config_findings(get(props, "values", {}), "values")
    if resource_type == K8S_CONFIG_MAP:
        data = get(props, "data", {})
        return [f for key, text in (data.items() if is_mapping(data) else []) for f in _config_findings(text, f"data.{key}")]
    if resource_type in K8S_WORKLOADS:
        return [
            f"{path}={value.get('name')}"
            for path, _, value in walk(get(props, "spec", {}))
            if is_mapping(value)
            and isinstance(value.get("name"), str)
            and value.get("value") not in (None, "")
            and ENV_NAMES.search(re.sub(r"[^a-z0-9]", "", value["name"].lower()))
        ]
    return []


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    paths = findings(args.resource_type, args.props)
    if paths:
        report_violation(
            f"{args.resource_type.rsplit(':', 1)[-1]} '{args.name}' carries alerting credentials outside a Secret at "
            f"{', '.join(paths)}. Set them as Pulumi secrets in tritonfleet:monitoring (alertReceivers, "
            "deadMansSwitchUrl): tritonfleet puts them in a Secret.",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="k8s-alert-credentials-require-secret",
    description="Alertmanager receiver credentials must live in Kubernetes Secrets, not values, ConfigMaps or env.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    remediation_steps=(
        "Move the URL or key to tritonfleet:monitoring.alertReceivers / deadMansSwitchUrl as a Pulumi secret (pulumi "
        "config set --secret --path ...), or reference a Secret (valueFrom.secretKeyRef, *_file); rotate what leaked."
    ),
)
