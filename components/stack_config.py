"""Read the engine's config for this stack and validate it with the pure core, failing without a traceback."""

from __future__ import annotations

import pulumi
from pulumi.runtime import config as runtime_config

from tritonfleet.core.config import ConfigError, StackConfig, load_stack_config


def read_stack_config() -> StackConfig:
    """The validated StackConfig; a user's mistake becomes a RunError (message only, no traceback)."""
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    try:
        return load_stack_config(raw, pulumi.get_stack())
    except ConfigError as error:
        raise pulumi.RunError(str(error)) from None
