"""The security and hygiene rows of the cloud review (2026-12-05): break-glass admins in prod, the S3 gateway
endpoint's policy, every Container Insights log group with a retention, and the GCP rows (Workload Identity
principals, shared and block reservations, CMEK key location, configurable GKE ranges)."""

from __future__ import annotations

import json

import pytest
from conftest import engine_config

from tritonfleet.core.config import ConfigError, load_stack_config


def _config(stack: str, edit) -> dict[str, str]:
    data = {k: json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v for k, v in engine_config(stack).items()}
    edit(data)
    return {k: json.dumps(v) if isinstance(v, dict | list) else str(v) for k, v in data.items()}


def _problems(stack: str, edit) -> dict[str, tuple]:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(_config(stack, edit), stack)
    return {p.key: (p.value, p.allowed, p.fix) for p in caught.value.problems}


# ---- break-glass access to prod EKS


def test_prod_on_eks_needs_an_admin_principal_besides_the_deployer():
    found = _problems("prod", lambda d: d["tritonfleet:cluster"].pop("adminPrincipals"))
    _, allowed, fix = found["cluster.adminPrincipals[0]"]
    assert "break-glass" in allowed
    assert fix == (
        "pulumi config set --path 'tritonfleet:cluster.adminPrincipals[0]' "
        "arn:aws:iam::123456789012:role/platform-admin --stack prod"
    )
    load_stack_config(engine_config("dev"), "dev")  # dev and staging may rely on the creator alone
