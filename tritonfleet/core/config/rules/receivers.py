"""Alertmanager receiver rules: unique names, the credential field each kind takes, credentials only as Pulumi secrets."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection

from tritonfleet.core.config.problems import MISSING, NOT_SHOWN
from tritonfleet.core.config.rules.context import RuleContext, validate_section
from tritonfleet.core.config.schema import AlertReceiver
from tritonfleet.core.conventions import CONFIG_NAMESPACE, SECRET_PLACEHOLDER

# The credential field each receiver kind needs (camelCase config name).
CREDENTIAL_FIELD = {"webhook": "url", "slack": "url", "pagerduty": "routingKey"}


def _secret_leaf(monitoring: object, key_is_secret: bool) -> Callable[[object], bool]:
    """Whether a credential value is a Pulumi secret. The offline plan shows each `secure:` leaf as SECRET_PLACEHOLDER,
    so there a clear value beside a secret one is caught (once, one secret sibling made every monitoring value pass);
    the engine decrypts the whole key, and there only the key's secrecy can be known."""
    leaf_level = SECRET_PLACEHOLDER in json.dumps(monitoring, default=str)
    return lambda value: value == SECRET_PLACEHOLDER or (key_is_secret and not leaf_level)


def check_receivers(ctx: RuleContext, secret_keys: Collection[str]) -> None:
    """`secret_keys` are the full config keys the engine marks secret; every credential must be a secret value."""
    monitoring = ctx.data.get("monitoring")
    is_secret = _secret_leaf(monitoring, f"{CONFIG_NAMESPACE}:monitoring" in secret_keys)
    if isinstance(monitoring, dict) and monitoring.get("deadMansSwitchUrl") and not is_secret(monitoring["deadMansSwitchUrl"]):
        ctx.set_secret(
            "monitoring.deadMansSwitchUrl", NOT_SHOWN, "a Pulumi secret (it is stored in clear text in the stack file)"
        )
    raw_receivers = monitoring.get("alertReceivers") if isinstance(monitoring, dict) else None
    if not isinstance(raw_receivers, list):
        return
    names: set[str] = set()
    for i, raw_receiver in enumerate(raw_receivers):
        receiver = validate_section(AlertReceiver, raw_receiver)
        if receiver is None:
            continue
        at = f"monitoring.alertReceivers[{i}]"
        ctx.new_name(receiver.name, names, at, "receiver")
        names.add(receiver.name)
        _check_credentials(ctx, receiver, is_secret, at)
        if receiver.channel is not None and receiver.kind != "slack":
            ctx.remove(f"{at}.channel", receiver.channel, "only for slack receivers")


def _check_credentials(ctx: RuleContext, receiver: AlertReceiver, is_secret: Callable[[object], bool], at: str) -> None:
    needed = CREDENTIAL_FIELD[receiver.kind]
    given = {"url": receiver.url, "routingKey": receiver.routing_key}
    for field_name, value in given.items():
        key = f"{at}.{field_name}"
        if field_name == needed and value is None:
            allowed = f"required for a {receiver.kind} receiver, set as a Pulumi secret"
            ctx.set_secret(key, MISSING, allowed)
        elif field_name != needed and value is not None:
            ctx.remove(key, NOT_SHOWN, f"not used by a {receiver.kind} receiver (it takes {needed})")
        elif value is not None and not is_secret(value):
            ctx.set_secret(key, NOT_SHOWN, "a Pulumi secret (it is stored in clear text in the stack file)")

