"""Files the CLI writes (--json, --output, --comments-dir): checked before the work that fills them, so a plan or a
load test is not run for nothing, and written with a message instead of a traceback.

A missing folder is created only inside the working folder (`--json plans/prod.json` on a fresh clone) or when it is
the folder the option names (--comments-dir DIR); elsewhere (`--json /nonexistent/x.json`) it is a mistake to report.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class OutputError(Exception):
    """An output path that cannot be written; the message says why."""


def check_output_file(path: Path) -> None:
    """Raise OutputError if `path` cannot be written as a file."""
    if path.is_dir():
        raise OutputError(f"cannot write {path}:\n  it is a folder; name a file in it, such as {path / 'out.json'}")
    _check_folder(path, path.parent, create_last=False)


def check_output_folder(path: Path) -> None:
    """Raise OutputError if files cannot be written into the folder `path` (created when missing)."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"cannot write into {path}:\n  it is a file, not a folder")
    _check_folder(path, path, create_last=True)


def _check_folder(target: Path, folder: Path, create_last: bool) -> None:
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    missing = existing != folder
    if missing and not (_inside_working_folder(folder) or (create_last and existing == folder.parent)):
        first_missing = existing / folder.relative_to(existing).parts[0]
        raise OutputError(f"cannot write {target}:\n  folder {first_missing} does not exist (create it, or name another)")
    if not existing.is_dir():
        raise OutputError(f"cannot write {target}:\n  {existing} is a file, not a folder")
    try:  # a file made and removed: what the folder's mode, its mount and its file system really allow
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".tritonfleet-"):
            pass
    except OSError as error:
        raise OutputError(f"cannot write {target}:\n  folder {existing} takes no new files ({error.strerror or error})") from None


def _inside_working_folder(folder: Path) -> bool:
    return Path(os.path.abspath(folder)).is_relative_to(Path.cwd())


def write_output(path: Path, text: str) -> None:
    """Write `text` to `path` (UTF-8), creating missing folders as check_output_file allows; OutputError if not."""
    check_output_file(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None


def make_output_folder(path: Path) -> None:
    check_output_folder(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"cannot create {path}: {error.strerror or error}") from None
