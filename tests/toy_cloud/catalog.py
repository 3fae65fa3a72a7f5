"""The toy cloud's catalog rows (what a real cloud adds to tritonfleet/core/catalog.yaml), added to the packaged
catalog for a block: the loader's parse is wrapped and its cache refilled, so every `load_catalog()` caller sees them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from tritonfleet.core import catalog

REGION = "toy-east-1"
GPU_TYPE = "toy.l40s.1"  # one L40S, sold on-demand and spot
SYSTEM_TYPE = "toy.cpu.4"
ON_DEMAND_USD, SPOT_USD = 2.0, 0.5  # per node-hour
SOURCE = "TOYPRICES"

SOURCES = {SOURCE: {"title": "the toy cloud's made-up price list (a test fixture, no real cloud's)", "asOf": "2026-12-05"}}
INSTANCE_TYPES = [
    {
        "cloud": "toy", "name": GPU_TYPE, "gpu": "L40S", "gpuCount": 1, "vcpu": 8, "memoryGib": 64, "default": True,
        "host": {"arch": "x86_64", "localSsd": None, "source": SOURCE},
        "purchaseOptions": ["on-demand", "spot"],
        "prices": {
            "on-demand": {"usd": ON_DEMAND_USD, "source": SOURCE, "regions": [REGION]},
            "spot": {"usd": SPOT_USD, "source": SOURCE, "regions": [REGION]},
        },
    },
]
# USD per unit in REGION of everything the bill prices besides GPU nodes (tritonfleet/core/bill.py's items).
SERVICE_PRICES = {
    ("control-plane", "hour"): 0.10,
    (f"instance:{SYSTEM_TYPE}", "node-hour"): 0.20,
    ("nat-gateway", "hour"): 0.05,
    ("nat-processing", "GB"): 0.05,
    ("volume:toy-disk", "GB-month"): 0.10,
    ("object-storage", "GB-month"): 0.02,
    ("log-ingestion", "GB"): 0.50,
    ("cross-zone", "GB"): 0.01,
    ("internet-egress", "GB"): 0.09,
}
SERVICE_ROWS = [
    {"cloud": "toy", "item": item, "unit": unit, "usd": usd, "source": SOURCE, "regions": [REGION]}
    for (item, unit), usd in SERVICE_PRICES.items()
]


def with_toy_rows(data: dict[str, Any]) -> dict[str, Any]:
    """The catalog's decoded YAML with the toy's rows added."""
    return {
        **data,
        "sources": {**data["sources"], **SOURCES},
        "instanceTypes": [*data["instanceTypes"], *INSTANCE_TYPES],
        "servicePrices": [*data.get("servicePrices", []), *SERVICE_ROWS],
    }


@contextmanager
def toy_rows() -> Iterator[None]:
    """The packaged catalog plus the toy's rows, for the block (the toy cloud must be registered: rows of an unknown
    cloud are refused)."""
    parse = catalog.parse_catalog

    def parse_with_toy(text: str) -> catalog.Catalog:
        return catalog.Catalog.model_validate(with_toy_rows(yaml.load(text, Loader=catalog.FAST_SAFE_LOADER)))  # noqa: S506

    catalog.load_catalog.cache_clear()
    catalog.parse_catalog = parse_with_toy
    try:
        catalog.load_catalog()  # cached with the toy's rows: callers holding `load_catalog` by name see them too
    finally:
        catalog.parse_catalog = parse
    try:
        yield
    finally:
        catalog.load_catalog.cache_clear()
