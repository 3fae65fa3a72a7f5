"""Messages that fit the terminal: every line within its width (80 where no terminal says otherwise), broken
between words, never inside one (a path or a command word stays whole), continuations indented under their line."""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.text import Text


def wrap_text(text: str, width: int) -> str:
    """Each line of `text` within `width` columns; a continuation is indented two more than the line it continues."""
    lines = []
    for line in text.splitlines() or [""]:
        lead = line[: len(line) - len(line.lstrip())]
        lines += textwrap.wrap(
            line, max(width, 20), subsequent_indent=lead + "  ", break_long_words=False, break_on_hyphens=False
        ) or [line]
    return "\n".join(lines)


def print_labelled(console: Console, label: str, style: str, message: object) -> None:
    """'LABEL MESSAGE' (label styled), wrapped to the console's width; the message as it is (never markup)."""
    text = Text(wrap_text(f"{label} {message}", console.width))
    text.stylize(style, 0, len(label))
    console.print(text, soft_wrap=True)
