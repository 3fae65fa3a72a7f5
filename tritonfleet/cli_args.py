"""Options given twice: Click keeps the last value of an option that takes one, silently (`--stack dev --stack prod`
plans prod). The CLI refuses that as a usage error instead, naming the option and both values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def repeated_options(build_command: Callable[[], Any], args: list[str]) -> list[str]:
    """For each option that takes one value and is given more than once in `args`: 'NAME given N times (v1, v2)'.

    `build_command` gives the Click command (built only when some option could be a repeat: it takes ~30 ms)."""
    tokens = _before_separator(args)
    if not _might_repeat(tokens):
        return []
    chain = [build_command()]
    for token in tokens:  # the subcommands named, in order (the first token naming one at each level)
        current = chain[-1]
        if token in getattr(current, "commands", {}):  # a group (Typer's Click, which may be its own copy)
            chain.append(current.commands[token])
    options = {}  # by its longest name: a group's option and its command's of the same name are counted once
    for cmd in chain:
        for param in cmd.params:
            if param.param_type_name == "option" and not (param.multiple or param.is_flag or param.count):
                options[max(param.opts, key=len)] = param.opts + param.secondary_opts
    found = []
    for name, opts in options.items():
        values = _values(tokens, opts)
        if len(values) > 1:
            shown = ", ".join(repr(v[:40]) for v in values)
            found.append(f"{name} given {len(values)} times ({shown})")
    return found


def _might_repeat(tokens: list[str]) -> bool:
    """Whether an option name comes twice, or long and short forms are mixed (-s and --stack could be one option)."""
    long = [t.split("=", 1)[0] for t in tokens if t.startswith("--")]
    short = [t[:2] for t in tokens if t.startswith("-") and not t.startswith("--") and len(t) > 1]
    return len(set(long)) < len(long) or len(set(short)) < len(short) or bool(long and short)


def _before_separator(args: list[str]) -> list[str]:
    return args[: args.index("--")] if "--" in args else list(args)


def _values(tokens: list[str], opts: list[str]) -> list[str]:
    values = []
    for i, token in enumerate(tokens):
        for opt in opts:
            if token == opt:
                values.append(tokens[i + 1] if i + 1 < len(tokens) else "")
            elif opt.startswith("--") and token.startswith(opt + "="):
                values.append(token[len(opt) + 1 :])
            elif not opt.startswith("--") and token.startswith(opt) and len(token) > len(opt):
                values.append(token[len(opt) :])  # -sdev
    return values
