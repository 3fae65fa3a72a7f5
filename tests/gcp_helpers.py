"""Build variants of the GCP stacks' engine config for tests (decoded, changed, encoded back as the engine sends it)."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import engine_config

NS = "tritonfleet"


def decoded(stack: str) -> dict[str, Any]:
    """A stack's config keyed without the namespace, objects and arrays decoded."""
    out = {}
    for key, value in engine_config(stack).items():
        name = key.split(":", 1)[1]
        out[name] = json.loads(value) if isinstance(value, str) and value[:1] in "[{" else value
    return out


def encoded(data: dict[str, Any]) -> dict[str, str]:
    return {f"{NS}:{k}": (json.dumps(v) if isinstance(v, dict | list) else str(v)) for k, v in data.items()}


def mixed_l4_stack(min_nodes: int, max_nodes: int, on_demand_base: int, spot_share: float) -> dict[str, Any]:
    """gcp-dev with its one L4 pool turned into a mixed pool of the given shape."""
    data = decoded("gcp-dev")
    data["gpuPools"] = [
        {
            "name": "l4",
            "gpu": "L4",
            "instanceType": "g2-standard-8",
            "minNodes": min_nodes,
            "maxNodes": max_nodes,
            "onDemandBase": on_demand_base,
            "spotShare": spot_share,
        }
    ]
    data["gpuLimit"] = max_nodes
    return data
