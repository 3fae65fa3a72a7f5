"""Read the engine's config for this stack and validate it with the pure core, failing without a traceback."""

from __future__ import annotations

from pathlib import Path

import pulumi
from pulumi.runtime import config as runtime_config

from tritonfleet.core.config import ConfigError, StackConfig, load_stack_config
from tritonfleet.plan.sizing import with_measured_capacities


def read_stack_config() -> StackConfig:
    """The validated StackConfig, with each deployment's measured capacity read from its loadtestResult (the program
    runs in the project's folder, which those paths are relative to); a user's mistake becomes a RunError (message
    only, no traceback)."""
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    secret_keys = {k for k in raw if runtime_config.is_config_secret(k)} | set(runtime_config.get_config_secret_keys_env())
    try:
        return with_measured_capacities(load_stack_config(raw, pulumi.get_stack(), secret_keys), Path.cwd())
    except ConfigError as error:
        raise pulumi.RunError(str(error)) from None
