"""triton-release-require-rollout: a compliant and a violating release, and prod's shipped plan complies."""

from __future__ import annotations

from policies.rules import triton_release_require_rollout
from tests.policies.policy_cases import run_resource
from tritonfleet.core.conventions import TRITON_CHART_NAME

RELEASE = "kubernetes:helm.sh/v3:Release"
ROLLOUT = {
    "enabled": True,
    "steps": [{"setWeight": 10.0}, {"pause": {"duration": "5m"}}],
    "analysis": {"metrics": [{"name": "error-ratio", "query": "q", "successCondition": "s", "failureCondition": "f"}]},
}


def release(rollout: dict | None) -> dict:
    values = {"replicas": {"min": 2.0}} | ({"rollout": rollout} if rollout is not None else {})
    return {"chart": f"./charts/{TRITON_CHART_NAME}", "values": values}


def check(props: dict) -> list[str]:
    return run_resource(triton_release_require_rollout.POLICY, RELEASE, props, name="triton-vision")


def test_a_release_with_a_judged_rollout_complies():
    assert check(release(ROLLOUT)) == []


def test_a_release_without_a_rollout_is_refused_with_the_fix():
    [message] = check(release(None))
    assert "'triton-vision' has no canary rollout" in message and "tritonDeployments[].rollout" in message
    [message] = check(release({"enabled": False}))
    assert "no canary rollout" in message


def test_a_rollout_without_analysis_is_refused():
    [message] = check(release({**ROLLOUT, "analysis": {"metrics": []}}))
    assert "has no analysis metrics" in message


def test_other_releases_are_not_its_business():
    assert check({"chart": "kube-prometheus-stack", "values": {}}) == []


def test_prods_planned_releases_comply():
    from tests.serving_helpers import planned_values

    for name in ("triton-llm", "triton-vision"):
        assert check({"chart": f"./charts/{TRITON_CHART_NAME}", "values": planned_values("prod", name)}) == []
