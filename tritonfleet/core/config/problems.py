"""What a configuration mistake looks like to the user: a Problem per key, one ConfigError listing them all,
and the `pulumi config set` / `pulumi config rm` command that fixes each."""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tritonfleet.core.conventions import CONFIG_NAMESPACE


class _Missing:
    """The type of MISSING: one instance, which pickles as a reference to itself (a ConfigError crosses processes)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


# A Problem's value when the key is absent (rendered "(missing)"), and when the value is a credential.
MISSING: Any = _Missing()
NOT_SHOWN = "(not shown)"
# A value longer than this is shown cut, with its length: the report stays readable.
SHOWN_CHARS = 100


@dataclass(frozen=True)
class Problem:
    key: str  # path below the namespace, e.g. gpuPools[0].gpu
    value: Any
    allowed: str
    fix: str
    renamed_to: str | None = None  # for a misspelt key: the key meant, whose "missing" problem is then a knock-on

    def render(self, index: int) -> str:
        shown = "(missing)" if self.value is MISSING else printable(json.dumps(self.value, default=str, ensure_ascii=False))
        edit = file_edit(self.fix, self.renamed_to)
        return (
            f"  {index}. {CONFIG_NAMESPACE}:{_clipped(self.key)} = {_clipped(shown)}\n     allowed: {self.allowed}\n"
            f"     fix: {self.fix}" + (f"\n      or: {edit}" if edit else "")
        )


def _command_parts(command: str) -> tuple[str, str, str | None, str] | None:
    """(verb, key below the namespace, value or None, stack) of one `pulumi config set|rm` command, else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:2] != ["pulumi", "config"] or len(words) < 4 or words[2] not in ("set", "rm") or "--secret" in words:
        return None
    stack, rest, at = "", [], 3
    while at < len(words):  # flags read by position: a value may itself be spelt like the stack
        if words[at] == "--":
            rest += words[at + 1:]
            break
        if words[at] == "--stack" and at + 1 < len(words):
            stack, at = words[at + 1], at + 2
            continue
        if words[at] != "--path" or rest:
            rest.append(words[at])
        at += 1
    prefix = f"{CONFIG_NAMESPACE}:"
    if not rest or not rest[0].startswith(prefix):
        return None
    return words[2], rest[0][len(prefix):], rest[1] if len(rest) > 1 else None, stack


def file_edit(fix: str, renamed_to: str | None = None) -> str | None:
    """The fix as an edit of the stack file — file, key, value — for those without the Pulumi CLI (the offline path
    never installs it): 'in stacks/Pulumi.dev.yaml, set tritonfleet:gpuPools[0].gpu to L40S'. None when the fix is
    not a plain `pulumi config set|rm` (a secret, or words)."""
    parts = [_command_parts(c.strip()) for c in fix.split(" && ")]
    if not parts or any(p is None for p in parts):
        return None
    where = f"in stacks/Pulumi.{parts[0][3]}.yaml,"  # type: ignore[index]
    verb, key, value, _ = parts[0]  # type: ignore[misc]
    if verb == "rm" and (renamed_to or len(parts) == 2):
        new = parts[1][1] if len(parts) == 2 else renamed_to  # type: ignore[index]
        return f"{where} rename {CONFIG_NAMESPACE}:{key} to {CONFIG_NAMESPACE}:{new} (keep its value)"
    if verb == "rm":
        return f"{where} delete {CONFIG_NAMESPACE}:{key}"
    if any(p[0] != "set" or p[3] != parts[0][3] for p in parts):  # type: ignore[index]
        return None
    return f"{where} set " + " and ".join(f"{CONFIG_NAMESPACE}:{p[1]} to {p[2]}" for p in parts)  # type: ignore[index]


def printable(text: str) -> str:
    """`text` with characters that would not show (zero-width, control) written as \\uXXXX escapes."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def _clipped(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text)} characters)"


class ConfigError(Exception):
    """A user's configuration mistake. Its message is the whole report; never show a traceback for it."""

    def __init__(self, stack: str, problems: list[Problem]):
        self.stack = stack
        self.problems = problems
        count = f"{len(problems)} configuration problem{'s' if len(problems) != 1 else ''}"
        body = "\n".join(p.render(i) for i, p in enumerate(problems, 1))
        super().__init__(f"stack '{stack}' has {count}:\n{body}")

    def __reduce__(self):  # pickled as what it was made from (Exception's default would pass the message back)
        return type(self), (self.stack, self.problems)


def nearest(value: Any, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice `value` most likely meant: the same name in another case, else the closest by spelling, else None."""
    if not isinstance(value, str) or len(value) > SHOWN_CHARS:
        return None
    by_folded = {choice.casefold(): choice for choice in choices}
    if value.casefold() in by_folded:
        return by_folded[value.casefold()]
    close = difflib.get_close_matches(value.casefold(), list(by_folded), n=1, cutoff=cutoff)
    return by_folded[close[0]] if close else None


def choose_from(choices: Iterable[str]) -> str:
    """A fix placeholder naming the values to choose from, for when no single one is known to be right."""
    choices = list(choices)
    return "<" + "|".join(choices) + ">" if len(choices) <= 6 else "<one of the values allowed above>"


def did_you_mean(value: Any, choices: Iterable[str]) -> str:
    """ " (did you mean X?)" when `value` looks like a misspelt choice, else ""."""
    match = nearest(value, choices)
    return f" (did you mean {match}?)" if match is not None and match != value else ""


def _path_flag(key: str) -> str:
    return "--path " if ("." in key or "[" in key) else ""


def _shell_key(key: str) -> str:
    """The full config key as one shell word."""
    full = f"{CONFIG_NAMESPACE}:{key}"
    return f"'{full}'" if "'" not in full else shlex.quote(full)


def set_command(key: str, value: Any, stack: str) -> str:
    """The `pulumi config set` command that gives `key` the value `value`, one shell word per argument: a string,
    list or object (JSON) that a shell would split or expand is quoted."""
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if not shown or re.search(r"[^A-Za-z0-9._:/-]", shown):
        shown = shlex.quote(shown) if "'" in shown else f"'{shown}'"
    if shown.lstrip("'").startswith("-"):  # -1 or --x would be read as flags: the value goes after "--"
        return f"pulumi config set {_path_flag(key)}{_shell_key(key)} --stack {stack} -- {shown}"
    return f"pulumi config set {_path_flag(key)}{_shell_key(key)} {shown} --stack {stack}"


def both_ways(command: str) -> str:
    """A fix command and, where it is a plain config change, the same change as the stack file's edit:
    "pulumi config set … --stack dev, or in stacks/Pulumi.dev.yaml, set …"."""
    edit = file_edit(command)
    return f"{command}, or {edit}" if edit else command


def yaml_edit(key: str, value: Any) -> str:
    """The same change as `set_command`, as an edit of the stack file: `tritonfleet:gpuPools[1].maxNodes: 10`
    (the path below `config:`; JSON for the value, which YAML reads the same)."""
    return f"{CONFIG_NAMESPACE}:{key}: {json.dumps(value, ensure_ascii=False)}"


def secret_set_command(key: str, stack: str) -> str:
    return f"pulumi config set --secret --path {_shell_key(key)} <value> --stack {stack}"


def rm_command(key: str, stack: str) -> str:
    return f"pulumi config rm {_path_flag(key)}{_shell_key(key)} --stack {stack}"


def rename_command(key: str, new_key: str, value: Any, stack: str) -> str:
    """The commands that move a value from a misspelt key to the right one (only a removal for an object or list)."""
    if value is MISSING or isinstance(value, (dict, list)) or len(str(value)) > SHOWN_CHARS:
        return rm_command(key, stack)
    return f"{rm_command(key, stack)} && {set_command(new_key, value, stack)}"


def dedupe(problems: list[Problem]) -> list[Problem]:
    """The problems in order, each (key, allowed) once: two rules that see the same mistake report it once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.key, p.allowed) not in seen:
            seen.add((p.key, p.allowed))
            out.append(p)
    return out
