"""Triton model names and version numbers as tritonfleet accepts them: the one place their patterns live.

The stack config (requiredModels, loadModels), `models validate`/`sync` (folder names, version folders, object keys)
and `models load/unload` (a name put into a control URL) all check with these, so a name one part accepts is never
refused, or mangled, by another.
"""

from __future__ import annotations

import re

# A repository folder name that needs no escaping in a URL, an object key, a probe or a terminal.
MODEL_NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"
MODEL_NAME_RULE = "1 to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'"
# Triton reads version folders as int64 (model_config.proto: `int64 versions`) and serves version 0 (checked on the
# real tritonserver: tests/test_models_validate_corpus.py); leading zeros and anything that is not ASCII digits are
# folders Triton ignores.
VERSION_PATTERN = r"^(0|[1-9][0-9]*)$"
MAX_VERSION = 2**63 - 1
VERSION_RULE = f"a whole number (0, 1, 2, ...) without leading zeros, at most {MAX_VERSION} (int64)"


def is_model_name(name: str) -> bool:
    # fullmatch: `$` alone would also accept a name followed by a newline.
    return re.fullmatch(MODEL_NAME_PATTERN, name) is not None


def version_number(name: str) -> int | None:
    """The version a folder name stands for, or None when it is not one (too large for Triton included)."""
    if re.fullmatch(VERSION_PATTERN, name) is None:
        return None
    number = int(name)
    return number if number <= MAX_VERSION else None
