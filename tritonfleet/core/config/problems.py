"""What a configuration mistake looks like to the user: a Problem per key, one ConfigError listing them all,
and the `pulumi config set` / `pulumi config rm` command that fixes each."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tritonfleet.core.conventions import CONFIG_NAMESPACE

# A Problem's value when the key is absent (rendered "(missing)"), and when the value is a credential.
MISSING: Any = object()
NOT_SHOWN = "(not shown)"


@dataclass(frozen=True)
class Problem:
    key: str  # path below the namespace, e.g. gpuPools[0].gpu
    value: Any
    allowed: str
    fix: str

    def render(self, index: int) -> str:
        shown = "(missing)" if self.value is MISSING else json.dumps(self.value, default=str)
        return f"  {index}. {CONFIG_NAMESPACE}:{self.key} = {shown}\n     allowed: {self.allowed}\n     fix: {self.fix}"


class ConfigError(Exception):
    """A user's configuration mistake. Its message is the whole report; never show a traceback for it."""

    def __init__(self, stack: str, problems: list[Problem]):
        self.stack = stack
        self.problems = problems
        count = f"{len(problems)} configuration problem{'s' if len(problems) != 1 else ''}"
        body = "\n".join(p.render(i) for i, p in enumerate(problems, 1))
        super().__init__(f"stack '{stack}' has {count}:\n{body}")


def _path_flag(key: str) -> str:
    return "--path " if ("." in key or "[" in key) else ""


def set_command(key: str, value: Any, stack: str) -> str:
    """The `pulumi config set` command that gives `key` the value `value` (quoted for a shell when needed)."""
    shown = value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, str) and (not value or re.search(r"[^A-Za-z0-9._:/-]", value)):
        shown = f"'{value}'"
    return f"pulumi config set {_path_flag(key)}'{CONFIG_NAMESPACE}:{key}' {shown} --stack {stack}"


def secret_set_command(key: str, stack: str) -> str:
    return f"pulumi config set --secret --path '{CONFIG_NAMESPACE}:{key}' <value> --stack {stack}"


def rm_command(key: str, stack: str) -> str:
    return f"pulumi config rm {_path_flag(key)}'{CONFIG_NAMESPACE}:{key}' --stack {stack}"


def dedupe(problems: list[Problem]) -> list[Problem]:
    """The problems in order, each (key, allowed) once: two rules that see the same mistake report it once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.key, p.allowed) not in seen:
            seen.add((p.key, p.allowed))
            out.append(p)
    return out
