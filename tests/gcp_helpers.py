"""Build variants of the GCP stacks' engine config for tests (decoded, changed, encoded back as the engine sends it)."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from tests.conftest import engine_config
from tritonfleet.core.config import ConfigError, StackConfig, load_stack_config
from tritonfleet.core.config.problems import Problem


class _ImportedOnFirstUse:
    """Stands for a module that is imported when one of its attributes is first read: google.cloud.compute_v1 takes
    seconds to import, and every test process collects the modules that name it. A plain object, not importlib's
    LazyLoader: pytest's fixture scan asks each module-level name `isinstance(obj, ...)`, which reads a lazy module's
    __class__ and so imports it at collection. Private names (pytest's scan also reads `_mock_name`) import nothing:
    the module's API has none."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self._name), attribute)


compute_v1 = _ImportedOnFirstUse("google.cloud.compute_v1")

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


def load(data: dict[str, Any], stack: str = "gcp-dev") -> StackConfig:
    """The stack config of decoded data, as the engine hands it over."""
    return load_stack_config(encoded(data), stack)


def problems(data: dict[str, Any], stack: str = "gcp-dev") -> tuple[list[Problem], str]:
    """The problems of decoded data that must fail to load, and the whole message."""
    with pytest.raises(ConfigError) as caught:
        load(data, stack)
    return caught.value.problems, str(caught.value)


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
