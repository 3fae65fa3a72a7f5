"""Small helpers shared by the values builders of the Kubernetes layer (plain data, no Pulumi)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def pinned_chart(pin: Mapping[str, str]) -> dict[str, Any]:
    """A helm.v3.Release's chart, version and repository from its pin in tritonfleet/core/pins.py (an OCI chart names
    its registry in `chart` and has no repository)."""
    source: dict[str, Any] = {"chart": pin["chart"], "version": pin["version"]}
    if "repo" in pin:
        source["repository_opts"] = {"repo": pin["repo"]}
    return source


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` on top of `base`: nested dicts merge key by key, anything else (lists too) is replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def taint_toleration(taint: dict[str, str]) -> dict[str, str]:
    """Tolerates exactly this taint (key, value and effect): for workloads that belong on the pool."""
    return {"operator": "Equal", **taint}


def key_tolerations(taints: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """Tolerates every value of each taint key and effect: for node agents (DaemonSets) that must run on every GPU node."""
    seen = sorted({(t["key"], t["effect"]) for t in taints})
    return [{"key": key, "operator": "Exists", "effect": effect} for key, effect in seen]


def tolerates(tolerations: Iterable[dict[str, Any]], taint: dict[str, str]) -> bool:
    """Kubernetes' rule: does any toleration match the taint?"""
    for t in tolerations:
        if t.get("effect") not in (None, "", taint["effect"]):
            continue
        if t.get("operator", "Equal") == "Exists":
            if t.get("key") in (None, "", taint["key"]):
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False
