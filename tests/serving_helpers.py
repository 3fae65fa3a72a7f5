"""Shared by the serving tests: plans of the shipped stacks, our chart rendered with the real Helm engine, and the
pinned upstream chart data in tests/upstream."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import yaml

from components.k8s.triton import CHART_DIR
from tests.conftest import STACKS, UPSTREAM_CHARTS, engine_config
from tests.plan_cache import stock_plan
from tritonfleet.core.catalog import FAST_SAFE_LOADER
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.conventions import triton_release_name

KPS_CRDS = UPSTREAM_CHARTS / "kube-prometheus-stack-88.5.3" / "crds"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"


@cache
def plan(stack: str) -> dict[str, Any]:
    """The offline plan of a shipped stack, as `tritonfleet plan --json` writes it (shared: tests/plan_cache.py)."""
    return stock_plan(stack)


def releases(stack: str) -> dict[str, dict[str, Any]]:
    """Every helm.v3.Release of a stack's plan, by release name."""
    return {r["inputs"]["name"]: r for r in plan(stack)["resources"] if r["type"] == RELEASE_TYPE}


def triton_cases() -> list[tuple[str, str]]:
    """(stack, release name) of every Triton deployment of the shipped stacks (from their configs: cheap at collection)."""
    return [
        (stack, triton_release_name(d.name))
        for stack in STACKS
        for d in load_stack_config(engine_config(stack), stack).triton_deployments
    ]


def planned_values(stack: str, release: str) -> dict[str, Any]:
    """The values the stack's plan passes to our chart for that release."""
    found = releases(stack)[release]
    assert found["inputs"]["chart"] == "./charts/triton-inference-server"
    return found["inputs"]["values"]


@cache
def _chart():
    import helm_python

    return helm_python.Chart.load(str(CHART_DIR))


def render(values: dict[str, Any], name: str = "triton-test", namespace: str = "triton") -> list[dict[str, Any]]:
    """Render our chart with the Helm SDK (schema checked, as `helm install` does) into Kubernetes objects (a fresh
    copy: the same values are rendered once per test process)."""
    return copy.deepcopy(_rendered(json.dumps(values, sort_keys=True), name, namespace))


@cache
def _rendered(values_json: str, name: str, namespace: str) -> list[dict[str, Any]]:
    out = _chart().render(json.loads(values_json), name=name, namespace=namespace, is_install=True)
    return [doc for path, body in sorted(out.items()) if path.endswith(".yaml") for doc in yaml.load_all(body, Loader=FAST_SAFE_LOADER) if doc]


def by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects}


def upstream_values(chart_dir: str) -> dict[str, Any]:
    return yaml.safe_load((UPSTREAM_CHARTS / chart_dir / "values.yaml").read_text())


def missing_keys(ours: Any, upstream: Any, path: str = "") -> list[str]:
    """Paths of keys we set that the upstream default values do not have (a typo silently does nothing in Helm).

    Below an upstream value that is not a non-empty mapping (a list, a scalar, `{}` for a free-form map) any keys go.
    """
    if not isinstance(ours, dict) or not isinstance(upstream, dict) or not upstream:
        return []
    missing = []
    for key, value in ours.items():
        at = f"{path}.{key}" if path else key
        if key not in upstream:
            missing.append(at)
        else:
            missing.extend(missing_keys(value, upstream[key], at))
    return missing


def streaming_llm_config(name: str) -> str:
    """config.pbtxt of a decoupled python-backend model that streams tokens as an LLM backend does (text_input,
    max_tokens, stream in; text_output out), for the live LLM tests."""
    return f'name: "{name}"\n' + STREAMING_LLM_CONFIG_BODY


STREAMING_LLM_CONFIG_BODY = """backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [
  { name: "text_input", data_type: TYPE_STRING, dims: [ 1 ] },
  { name: "max_tokens", data_type: TYPE_INT32, dims: [ 1 ] },
  { name: "stream", data_type: TYPE_BOOL, dims: [ 1 ], optional: true }
]
output [ { name: "text_output", data_type: TYPE_STRING, dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""


def with_layout(config, layout: str | None):
    """The stack with its llm deployment's llm.layout set (None: as shipped)."""
    if layout is None:
        return config
    deployments = [d.model_copy(update={"llm": d.llm.model_copy(update={"layout": layout})}) if d.llm else d
                   for d in config.triton_deployments]  # fmt: skip
    return config.model_copy(update={"triton_deployments": deployments})
