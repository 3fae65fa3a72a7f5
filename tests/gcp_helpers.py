"""Build variants of the GCP stacks' engine config for tests (decoded, changed, encoded back as the engine sends it)."""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType
from typing import Any

from tests.conftest import engine_config


def _imported_on_first_use(name: str) -> ModuleType:
    """The module, loaded when an attribute is first read (importlib's LazyLoader): google.cloud.compute_v1 takes
    seconds to import, and every test process collects the modules that use it."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


compute_v1 = _imported_on_first_use("google.cloud.compute_v1")

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
