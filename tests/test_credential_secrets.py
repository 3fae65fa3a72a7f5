"""Every credential in the stack config is a Pulumi secret value, leaf by leaf: one secret monitoring value once made
the whole `monitoring` key secret, so an alert receiver's URL in clear text beside it passed (issue 37)."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import copy_project, engine_config, run_cli

from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import SECRET_PLACEHOLDER

SLACK_URL = "https://hooks.slack.example/T000/B000/clear-text-token"


def _load(monitoring: dict, secret: bool = True):
    raw = dict(engine_config("dev"))
    raw["tritonfleet:monitoring"] = json.dumps(monitoring)
    return load_stack_config(raw, "dev", ["tritonfleet:monitoring"] if secret else [])


def test_a_clear_receiver_url_beside_a_secret_dead_mans_switch_is_a_problem():
    monitoring = {
        "deadMansSwitchUrl": SECRET_PLACEHOLDER,
        "alertReceivers": [{"name": "oncall", "kind": "slack", "url": SLACK_URL}],
    }
    with pytest.raises(ConfigError) as caught:
        _load(monitoring)
    assert [p.key for p in caught.value.problems] == ["monitoring.alertReceivers[0].url"]
    assert "clear-text-token" not in str(caught.value)
    assert "pulumi config set --secret --path 'tritonfleet:monitoring.alertReceivers[0].url'" in str(caught.value)


def test_a_clear_dead_mans_switch_beside_a_secret_routing_key_is_a_problem():
    monitoring = {
        "deadMansSwitchUrl": "https://hc-ping.example/secret-uuid",
        "alertReceivers": [{"name": "pager", "kind": "pagerduty", "routingKey": SECRET_PLACEHOLDER}],
    }
    with pytest.raises(ConfigError) as caught:
        _load(monitoring)
    assert [p.key for p in caught.value.problems] == ["monitoring.deadMansSwitchUrl"]


def test_every_credential_secret_loads_offline_and_as_the_engine_decrypts_it():
    offline = {
        "deadMansSwitchUrl": SECRET_PLACEHOLDER,
        "alertReceivers": [{"name": "oncall", "kind": "slack", "url": SECRET_PLACEHOLDER}],
    }
    assert _load(offline).monitoring.alert_receivers[0].url == SECRET_PLACEHOLDER
    # The engine hands the program decrypted values and marks the whole key secret: that is all it can tell.
    decrypted = {"deadMansSwitchUrl": "https://hc-ping.example/x", "alertReceivers": [{"name": "a", "kind": "slack", "url": SLACK_URL}]}
    assert _load(decrypted).monitoring.alert_receivers[0].url == SLACK_URL
    with pytest.raises(ConfigError):
        _load(decrypted, secret=False)


def test_the_plan_refuses_the_stack_file_that_mixes_them(tmp_path):
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.dev.yaml"
    document = yaml.safe_load(stack_file.read_text())
    document["config"]["tritonfleet:monitoring"] = {
        **document["config"].get("tritonfleet:monitoring", {}),
        "deadMansSwitchUrl": {"secure": "v1:AAAAbase64"},
        "alertReceivers": [{"name": "oncall", "kind": "slack", "url": SLACK_URL}],
    }
    stack_file.write_text(yaml.safe_dump(document))
    done = run_cli("plan", "--stack", "dev", "--project-dir", str(project))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tritonfleet:monitoring.alertReceivers[0].url" in done.stderr and "clear-text-token" not in done.stderr

