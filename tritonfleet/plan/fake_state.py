"""Deterministic stand-ins for the outputs a cloud would compute (ids, ARNs, endpoints), for the offline plan.

Each value is derived from the resource's name only, so two plans of the same program are byte-identical. Each
cloud answers for its own resources and data sources (`Cloud.offline_outputs`, `offline_calls`,
`offline_absent_calls`, from tritonfleet/clouds/<cloud>/resources.py); what is left here is Kubernetes' and Pulumi's.
"""

from __future__ import annotations

from typing import Any

from tritonfleet.core.cloud import cloud, cloud_names


def absent_call(token: str) -> str | None:
    """The not-found error a data-source call gets in the offline plan's empty account, or None when it gets none."""
    return next((error for name in cloud_names() if (error := cloud(name).offline_absent_calls.get(token))), None)


def fake_call(token: str) -> dict[str, Any] | None:
    """The result of a data-source call the offline plan answers, or None when it answers no such call."""
    for name in cloud_names():
        answer = cloud(name).offline_calls.get(token)
        if answer is not None:
            return dict(answer)
    return None


def fake_outputs(typ: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Outputs for a mocked resource: its inputs plus the computed attributes our program reads."""
    for cloud_name in cloud_names():
        found = cloud(cloud_name).offline_outputs(typ, name, inputs)
        if found is not None:
            return found
    out = dict(inputs)
    if typ == "kubernetes:helm.sh/v3:Release":
        out.setdefault(
            "status", {"name": inputs.get("name", name), "namespace": inputs.get("namespace", "default"), "status": "deployed"}
        )
    elif typ == "random:index/randomPassword:RandomPassword":
        out.setdefault("result", f"offline-{name}")
    return out
