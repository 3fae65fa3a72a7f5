"""The plan `policy check --stack S` checks: the saved plans/S.json (what `make plan STACK=S` writes) while the inputs
it was made from are unchanged and its content is what `tritonfleet plan` wrote, else a fresh plan. A fresh plan takes
seconds (the program under the SDK's mocks); reading a saved one takes milliseconds.

The content is bound by a seal: when `tritonfleet plan --json` writes a document it records the document's SHA-256 in
the user's cache (TRITONFLEET_CACHE_DIR, else $XDG_CACHE_HOME/tritonfleet, else ~/.cache/tritonfleet), keyed by the
file's absolute path, never in the project. A document edited after it was written, or one that arrived with a
checkout (a PR can commit plans/prod.json with a matching input fingerprint and its resources edited), has no
matching seal and is planned afresh: a digest stored in the document itself could be recomputed by whoever edits it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLANS_DIR = "plans"
CACHE_ENV = "TRITONFLEET_CACHE_DIR"


@dataclass(frozen=True)
class CheckedPlan:
    document: dict[str, Any]
    note: str  # which plan was used, and why: shown to the user


# What the pack reads of each resource of a plan document (policycheck/wire.py): required, and optional when present.
REQUIRED_RESOURCE_FIELDS = {"urn": str, "type": str, "name": str}
OPTIONAL_RESOURCE_FIELDS = {"inputs": dict, "ignoreChanges": list, "dependsOn": list, "parent": str, "provider": str}


def plan_from_file(path: Path, stack: str) -> dict[str, Any]:
    """The plan document the user named with --plan, with what the pack reads of it checked (DiffInputError if not)."""
    from tritonfleet.diff.documents import DiffInputError, read_document

    document = read_document(path)
    problem = _unfit_for_pack(document, stack)
    if problem:
        raise DiffInputError(f"{path} {problem}")
    return document


def _unfit_for_pack(document: Any, stack: str) -> str | None:
    if not isinstance(document, dict):
        return f"is not a tritonfleet plan document: expected a JSON object, got {type(document).__name__}"
    if document.get("stack") != stack:
        return f"is a plan of stack '{document.get('stack')}', not '{stack}'"
    if not isinstance(document.get("project"), str):
        return "is not a tritonfleet plan document: 'project' (the Pulumi project's name) must be a string"
    if not isinstance(document.get("resources"), list) or not all(isinstance(r, dict) for r in document["resources"]):
        return "is not a tritonfleet plan document: 'resources' must be a list of objects"
    for i, resource in enumerate(document["resources"]):
        for key, kind in REQUIRED_RESOURCE_FIELDS.items():
            if not isinstance(resource.get(key), kind):
                return f"is not a tritonfleet plan document: resources[{i}].{key} must be a {kind.__name__}"
        for key, kind in OPTIONAL_RESOURCE_FIELDS.items():
            if resource.get(key) is not None and not isinstance(resource[key], kind):
                return f"is not a tritonfleet plan document: resources[{i}].{key} must be a {kind.__name__} when given"
    return None


def saved_plan_path(project_dir: Path, stack: str) -> Path:
    return project_dir / PLANS_DIR / f"{stack}.json"


def _seals_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]) / "plan-seals"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tritonfleet" / "plan-seals"


def _seal_file(path: Path) -> Path:
    return _seals_dir() / hashlib.sha256(str(path.resolve()).encode()).hexdigest()


def seal_plan(path: Path) -> None:
    """Record the digest of the plan document just written to `path`, so `policy check` may reuse it while it is
    unchanged. A cache that cannot be written only means no reuse (the check then plans afresh)."""
    seal = _seal_file(path)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        seal.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=seal.parent, delete=False) as handle:
            handle.write(digest)
        os.replace(handle.name, seal)
    except OSError:
        return


def _sealed(path: Path, content: bytes) -> bool:
    """Whether `content` is what `tritonfleet plan` last wrote to `path` on this machine."""
    try:
        recorded = _seal_file(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return False
    return recorded == hashlib.sha256(content).hexdigest()


def _why_stale(document: Any, stack: str, current: dict[str, str]) -> str | None:
    """Why a saved document cannot stand for a plan made now (None: it can)."""
    from tritonfleet.plan.document import PLAN_FORMAT
    from tritonfleet.plan.fingerprint import changed_parts

    if not isinstance(document, dict) or not isinstance(document.get("resources"), list):
        return "is not a plan document"
    if document.get("stack") != stack:
        return f"is a plan of stack '{document.get('stack')}'"
    if document.get("format") != PLAN_FORMAT:
        return f"has plan format {document.get('format')}, not {PLAN_FORMAT}"
    if not isinstance(document.get("fingerprint"), dict):
        return "records no input fingerprint (made by an older tritonfleet)"
    changed = changed_parts(document["fingerprint"], current)
    if changed:
        return f"is stale: {', '.join(changed)} changed since it was made"
    return None


def plan_for_check(project_dir: Path, stack: str) -> CheckedPlan:
    """The saved plan of `stack` if its inputs are unchanged, else a fresh one (raises what build_plan raises)."""
    from tritonfleet.plan.document import build_plan
    from tritonfleet.plan.fingerprint import input_digests
    from tritonfleet.plan.project import load_project

    path = saved_plan_path(project_dir, stack)
    shown = f"{PLANS_DIR}/{stack}.json"
    if not path.is_file():
        reason = f"no {shown} (`tritonfleet plan --stack {stack} --json {shown}` or `make plan STACK={stack}` saves one)"
    else:
        try:
            content = path.read_bytes()
            document = json.loads(content)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            reason = f"{shown} cannot be read ({error})"
        else:
            problem = _why_stale(document, stack, input_digests(load_project(project_dir), stack))
            if problem is None and not _sealed(path, content):
                problem = (
                    "is not the document `tritonfleet plan` wrote there on this machine (edited since, or it came "
                    "with the checkout): its content has no matching seal"
                )
            if problem is None:
                return CheckedPlan(document, f"reusing {shown} (inputs and content unchanged)")
            reason = f"{shown} {problem}"
    return CheckedPlan(build_plan(project_dir, stack), f"planning afresh: {reason}")
