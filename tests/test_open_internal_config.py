"""Prod refuses an internal endpoint open to 0.0.0.0/0 that serves inference without a key, unless acknowledged (the
policy pack's triton-release-require-secure-access checks the same on the release, with the reviewers' acknowledgement
in the policy config)."""

from __future__ import annotations

import json

import pytest
from conftest import engine_config

from tritonfleet.core.config import ConfigError, load_stack_config


def _with_access(access: dict, stack: str = "prod"):
    raw = dict(engine_config(stack))
    deployments = json.loads(raw["tritonfleet:tritonDeployments"])
    deployments[0]["access"] = access
    raw["tritonfleet:tritonDeployments"] = json.dumps(deployments)
    return load_stack_config(raw, stack)


OPEN_INTERNAL = {"exposure": "internal", "clientCidrs": ["0.0.0.0/0"]}


def test_prod_refuses_an_internal_endpoint_open_to_everyone_without_a_key():
    with pytest.raises(ConfigError) as caught:
        _with_access(OPEN_INTERNAL)
    [problem] = caught.value.problems
    assert problem.key.endswith("access.restrictInference") and "0.0.0.0/0 in prod" in problem.allowed
    assert problem.fix.startswith("pulumi config set --path 'tritonfleet:tritonDeployments[0].access.restrictInference' true")


@pytest.mark.parametrize(
    "access",
    [
        {**OPEN_INTERNAL, "restrictInference": True},
        {**OPEN_INTERNAL, "acknowledgeOpenInternalInference": True},
        {"exposure": "internal", "clientCidrs": ["10.0.0.0/8"]},
    ],
    ids=["with-a-key", "acknowledged", "narrowed"],
)
def test_prod_takes_a_key_a_narrow_range_or_an_acknowledgement(access):
    assert _with_access(access).triton_deployments[0].access.exposure == "internal"


def test_outside_prod_an_open_internal_endpoint_is_the_policy_pack_s_advisory():
    assert _with_access(OPEN_INTERNAL, "staging").triton_deployments[0].access.client_cidrs == ["0.0.0.0/0"]
