"""Per-cloud knowledge, pure (no Pulumi): each cloud's facts, its config rules and its preflight.

Layering, bottom to top:
  tritonfleet/core         cloud-neutral: config schema and rules, GPU catalog, cost model, shared conventions
  tritonfleet/clouds/<c>   one cloud's facts (with source and date), config rules, preflight; imports core only
  components/<c>           the Pulumi adapter of that cloud; imports clouds and core
core never imports clouds at module load: the config loader (and the neutral helpers that need one cloud's fact)
reach a cloud's modules at call time through this registry, by cloud name.

Adding a cloud: a package tritonfleet/clouds/<name>/ with `facts.py` and `config_rules.py` (which fulfils
`tritonfleet.core.config.rules.context.CloudConfigRules`), its name in CLOUDS and in the schema's `cloud` key;
tests/test_clouds.py checks every registered cloud keeps the contract.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tritonfleet.core.config.rules.context import CloudConfigRules

CLOUDS: tuple[str, ...] = ("aws", "gcp")


def _module(cloud: str, name: str) -> ModuleType:
    if cloud not in CLOUDS:
        raise ValueError(f"unknown cloud {cloud!r}; known: {', '.join(CLOUDS)}")
    return importlib.import_module(f"tritonfleet.clouds.{cloud}.{name}")


def cloud_facts(cloud: str) -> ModuleType:
    """tritonfleet/clouds/<cloud>/facts.py: the cloud's sourced facts."""
    return _module(cloud, "facts")


def cloud_accelerators(cloud: str) -> ModuleType:
    """tritonfleet/clouds/<cloud>/accelerators.py (`accelerator(type)`, `SOURCE`): the instance/machine families that
    carry accelerators, so system nodes refuse them and the policies count them."""
    return _module(cloud, "accelerators")


def cloud_plan_notes(cloud: str) -> ModuleType | None:
    """tritonfleet/clouds/<cloud>/plan_notes.py (`plan_notes(config, today)`), for clouds that add notes to the plan."""
    _module(cloud, "facts")  # an unknown cloud fails here, as for the other modules
    if importlib.util.find_spec(f"tritonfleet.clouds.{cloud}.plan_notes") is None:
        return None
    return _module(cloud, "plan_notes")


def cloud_bill(cloud: str) -> ModuleType:
    """tritonfleet/clouds/<cloud>/bill.py: what the cloud bills besides GPU nodes and how (tritonfleet/core/bill.py)."""
    return _module(cloud, "bill")


def cloud_rules(cloud: str) -> CloudConfigRules:
    """tritonfleet/clouds/<cloud>/config_rules.py: the cloud's config rules."""
    return _module(cloud, "config_rules")  # type: ignore[return-value]
