"""Check a plan document against the policy pack: over gRPC like the CLI, and directly, and compare the two."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonfleet.policycheck import pack_config
from tritonfleet.policycheck.direct import load_policies, policy_meta, run_direct
from tritonfleet.policycheck.engine import run_pack
from tritonfleet.policycheck.verdicts import Verdict

PACK_DIR_NAME = "policies"


def pack_dir(project_dir: Path) -> Path:
    return project_dir / PACK_DIR_NAME


def config_path(project_dir: Path, stack: str) -> Path:
    """Where a stack's policy config lives: policies/config/<stack>.json (pass it as --policy-pack-config)."""
    return pack_dir(project_dir) / "config" / f"{stack}.json"


@dataclass(frozen=True)
class PolicyReport:
    verdicts: list[Verdict]  # from the pack process over gRPC (the engine's view) or, on the fast path, direct calls
    direct: list[Verdict] | None  # from calling the policies in this process, when both ran
    config_file: str
    policies_run: int  # the pack's policies not disabled by the config

    @property
    def agree(self) -> bool | None:
        """Whether the pack over gRPC and direct calls gave the same verdicts (None: only direct calls ran)."""
        return None if self.direct is None else self.verdicts == self.direct

    @property
    def blocking(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.blocking]

    def section(self) -> dict[str, Any]:
        """The plan document's `policy` section: deterministic, so plan diffs show policy deltas."""
        return {
            "pack": PACK_DIR_NAME,
            "config": self.config_file,
            "policiesRun": self.policies_run,
            "mandatory": len(self.blocking),
            "advisory": len(self.verdicts) - len(self.blocking),
            "evaluatedBy": "direct calls" if self.direct is None else "the pack over gRPC, checked against direct calls",
            "directCallsAgree": self.agree,
            "verdicts": [v.document() for v in self.verdicts],
        }


def check(project_dir: Path, plan: dict[str, Any], config_file: Path | None = None, through_pack: bool = True) -> PolicyReport:
    """Evaluate the pack on a plan document: through the pack process over gRPC, as the Pulumi CLI runs it, and by
    direct calls, which must agree; or (through_pack=False, the plan's fast path) by direct calls alone.

    Raises PackConfigError for a config that does not fit the pack, engine.PackError if the pack cannot start."""
    project_dir = project_dir.resolve()
    path = (config_file or config_path(project_dir, plan["stack"])).resolve()
    config = pack_config.load(path)
    shown = str(path.relative_to(project_dir)) if path.is_relative_to(project_dir) else str(path)
    pack = pack_dir(project_dir)
    direct = run_direct(pack, plan, config, shown)
    configured = pack_config.reconcile(policy_meta(load_policies(pack)), config, shown)
    ran = sum(1 for c in configured.values() if c.enforcement != "disabled")
    if not through_pack:
        return PolicyReport(verdicts=direct, direct=None, config_file=shown, policies_run=ran)
    return PolicyReport(verdicts=run_pack(pack, plan, config, shown), direct=direct, config_file=shown, policies_run=ran)
