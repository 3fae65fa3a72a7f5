"""Read the engine's config for this stack and validate it with the pure core, failing without a traceback."""

from __future__ import annotations

import pulumi
from pulumi.runtime import config as runtime_config

from tritonfleet.core.config import ConfigError, StackConfig, load_stack_config


def read_stack_config() -> StackConfig:
    """The validated StackConfig; a user's mistake becomes a RunError (message only, no traceback)."""
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    secret_keys = {k for k in raw if runtime_config.is_config_secret(k)} | set(runtime_config.get_config_secret_keys_env())
    try:
        return load_stack_config(raw, pulumi.get_stack(), secret_keys)
    except ConfigError as error:
        raise pulumi.RunError(str(error)) from None
