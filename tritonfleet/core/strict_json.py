"""JSON files the tool reads (plan documents, policy configs, load test results), read strictly: UTF-8 text only, no
NaN or Infinity and no number that overflows to one (JSON has none), no key given twice in one object (readers
disagree on which counts; Python's keeps the last silently), and nesting within a bound (parsers and the code that
walks a document recurse once per level). Each refusal is a StrictJsonError saying where."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from tritonfleet.core.conventions import nesting

# A plan document nests about 14 levels (Helm values inside a resource's inputs).
MAX_JSON_NESTING = 100


class StrictJsonError(ValueError):
    """A JSON file or text that the tool refuses; the message names the source and where."""


def read_json(path: Path) -> Any:
    """The JSON document in `path` (StrictJsonError if it is unreadable, not UTF-8 or not strict JSON)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise StrictJsonError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise StrictJsonError(f"{path}, line {line}:\n  not UTF-8 text (byte 0x{data[error.start]:02x}); JSON is UTF-8") from None
    return loads_json(text, str(path))


def loads_json(text: str, source: str) -> Any:
    """`text` as strict JSON (see the module's docstring); `source` names it in errors."""
    duplicates: list[str] = []

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        document = dict(pairs)
        if len(document) != len(pairs):
            duplicates.extend(sorted(key for key, count in Counter(key for key, _ in pairs).items() if count > 1))
        return document

    try:
        document = json.loads(
            text, parse_constant=_not_a_json_number, parse_float=_finite, parse_int=_integer, object_pairs_hook=no_duplicates
        )
        too_deep = nesting(document, MAX_JSON_NESTING) > MAX_JSON_NESTING
    except RecursionError:  # nested deeper than the JSON parser recurses
        too_deep = True
    except json.JSONDecodeError as error:
        raise StrictJsonError(f"{source} is not JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    except _TooLong as error:
        raise StrictJsonError(
            f"{source}, line {_line_of(text, str(error))}:\n  a number of {len(str(error)):,} digits; none this long is a value"
        ) from None
    except _NotFinite as error:
        raise StrictJsonError(
            f"{source}, line {_line_of(text, str(error))}:\n  the number {error}, which JSON does not have (finite numbers only)"
        ) from None
    if too_deep:
        raise StrictJsonError(f"{source}:\n  nested more than {MAX_JSON_NESTING} levels deep")
    if duplicates:
        shown = ", ".join(f'"{key}" (lines {_lines_of(text, key)})' for key in dict.fromkeys(duplicates))
        raise StrictJsonError(f"{source}:\n  a key given twice in one object (JSON readers disagree on which counts):\n  {shown}")
    return document


class _NotFinite(ValueError):
    """A number that is not finite (its text is the message)."""


def _not_a_json_number(text: str) -> float:
    raise _NotFinite(text)


class _TooLong(ValueError):
    """An integer too long for Python to read (over 4,300 digits; its text is the message)."""


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _TooLong(text) from None


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text)
    return value


def _line_of(text: str, token: str) -> int:
    at = text.find(token)
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def _lines_of(text: str, key: str) -> str:
    """The lines where `"key":` appears (a duplicate key's occurrences, maybe with the same key of other objects)."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
