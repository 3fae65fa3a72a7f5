"""`tritonfleet diff --base-ref REF`: plan every stack at REF (a temporary git worktree) and in the working tree.

The one module of tritonfleet.diff that touches git and processes. Each side is planned by its own checkout
(`python -m tritonfleet plan` run in that checkout's project folder, which comes first on PYTHONPATH), one subprocess per stack and side, so the
base is planned exactly as it was (its program, its catalog prices, its config schema) and no module state of
one run leaks into another.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonfleet.diff.documents import DiffInputError, check_plan, parse_document, relative_to_checkout
from tritonfleet.plan.project import ProjectError, load_project

PLAN_TIMEOUT_S = 600
WROTE_PLAN = (0, 2)  # `tritonfleet plan` exit statuses that still write the document (2: a policy violation)
GIT_TIMEOUT_S = 120


@dataclass(frozen=True)
class SidePlans:
    plans: dict[str, dict[str, Any]]  # stack -> plan document
    errors: dict[str, str]  # stack -> why it could not be planned


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except FileNotFoundError:
        raise DiffInputError("--base-ref needs git on PATH") from None
    if done.returncode != 0:
        raise DiffInputError(f"git {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def plan_in_subprocess(project_dir: Path, stack: str, out_file: Path) -> dict[str, Any] | str:
    """Plan one stack with the tritonfleet code next to `project_dir`; the plan document, or the error text."""
    env = {**os.environ, "PYTHONPATH": str(project_dir)}
    command = [sys.executable, "-m", "tritonfleet", "plan", "--stack", stack, "--json", str(out_file)]
    try:
        done = subprocess.run(command, cwd=project_dir, env=env, capture_output=True, text=True, timeout=PLAN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"`tritonfleet plan --stack {stack}` did not finish within {PLAN_TIMEOUT_S} s"
    if done.returncode not in WROTE_PLAN or not out_file.is_file():
        return (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}")[-4000:]
    try:
        document = check_plan(parse_document(out_file.read_text(), f"plan of {stack}"), f"plan of {stack}")
    except (ValueError, DiffInputError) as exc:
        return str(exc)
    return relative_to_checkout(document, str(project_dir))


Progress = Callable[[str], None]


class _Counter:
    """Counts finished plans across both sides and reports each one (the threads of a side report concurrently)."""

    def __init__(self, total: int, progress: Progress | None):
        self.total, self.done, self.progress = total, 0, progress
        self.lock = threading.Lock()

    def finished(self, stack: str, side: str, result: dict[str, Any] | str, seconds: float) -> None:
        if self.progress is None:
            return
        with self.lock:
            self.done += 1
            outcome = "planned" if isinstance(result, dict) else "could not be planned"
            self.progress(f"[{self.done}/{self.total}] {stack} {side}: {outcome} in {seconds:.0f} s")


def plan_side(
    project_dir: Path, stacks: list[str], scratch: Path, jobs: int, side: str = "", counter: _Counter | None = None
) -> SidePlans:
    scratch.mkdir(parents=True, exist_ok=True)

    def plan_one(stack: str) -> dict[str, Any] | str:
        started = time.monotonic()
        result = plan_in_subprocess(project_dir, stack, scratch / f"{stack}.json")
        if counter is not None:
            counter.finished(stack, side, result, time.monotonic() - started)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = dict(zip(stacks, pool.map(plan_one, stacks), strict=True))
    return SidePlans(
        plans={s: r for s, r in results.items() if isinstance(r, dict)},
        errors={s: r for s, r in results.items() if isinstance(r, str)},
    )


def _stacks(project_dir: Path) -> list[str]:
    try:
        return load_project(project_dir).stacks() if (project_dir / "Pulumi.yaml").is_file() else []
    except ProjectError:
        return []


def plan_base_and_head(
    project_dir: Path, ref: str, only: list[str] | None, jobs: int = 2, progress: Progress | None = None
) -> tuple[SidePlans, SidePlans]:
    """Plan the stacks at `ref` and in the working tree. Stacks on one side only come back on that side only.

    `progress` is told what is about to happen and, as each plan finishes, which stack and side it was."""
    project_dir = project_dir.resolve()
    top = Path(_git(project_dir, "rev-parse", "--show-toplevel")).resolve()
    try:
        commit = _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffInputError:
        raise DiffInputError(f"'{ref}' is not a commit in {top} (in CI, fetch it first: fetch-depth 2 gives HEAD^1)") from None
    relative = project_dir.relative_to(top)
    with tempfile.TemporaryDirectory(prefix="tritonfleet-diff-") as tmp:
        base_tree = Path(tmp) / "base"
        _git(top, "worktree", "add", "--detach", "--quiet", str(base_tree), commit)
        try:
            base_project = base_tree / relative
            head_stacks, base_stacks = _stacks(project_dir), _stacks(base_project)
            if only:
                unknown = sorted(set(only) - set(head_stacks) - set(base_stacks))
                if unknown:
                    raise DiffInputError(
                        f"no stack {', '.join(unknown)} at {ref} or in the working tree "
                        f"(stacks: {', '.join(sorted(set(head_stacks) | set(base_stacks))) or 'none'})"
                    )
                head_stacks = [s for s in head_stacks if s in only]
                base_stacks = [s for s in base_stacks if s in only]
            counter = _Counter(len(base_stacks) + len(head_stacks), progress)
            if progress is not None:
                progress(
                    f"planning {len(base_stacks)} stack(s) at {ref} and {len(head_stacks)} in the working tree, "
                    f"{max(1, jobs)} at a time (each plan takes several seconds)"
                )
            base = plan_side(base_project, base_stacks, Path(tmp) / "plans-base", jobs, f"at {ref}", counter)
            head = plan_side(project_dir, head_stacks, Path(tmp) / "plans-head", jobs, "in the working tree", counter)
        finally:
            subprocess.run(["git", "-C", str(top), "worktree", "remove", "--force", str(base_tree)], capture_output=True, timeout=GIT_TIMEOUT_S)
            subprocess.run(["git", "-C", str(top), "worktree", "prune"], capture_output=True, timeout=GIT_TIMEOUT_S)
    return base, head


def plans_at_ref(
    project_dir: Path, ref: str, only: list[str] | None, jobs: int = 2, progress: Progress | None = None
) -> tuple[dict, dict, dict[str, str]]:
    """Base plans, head plans, and why a stack could not be planned on either side (stack -> message)."""
    base, head = plan_base_and_head(project_dir, ref, only, jobs, progress)
    errors = {s: f"at {ref}: {e}" for s, e in base.errors.items()}
    errors.update({s: f"in the working tree: {e}" for s, e in head.errors.items()})
    return base.plans, head.plans, errors
