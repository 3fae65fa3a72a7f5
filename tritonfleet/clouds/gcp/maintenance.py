"""When GKE may upgrade a prod cluster (plain data, no Pulumi; components/gcp/cluster.py applies it).
docs/gcp.md "Maintenance".

Prod gets, by default and without a config key:
* a recurring maintenance window, Saturday and Sunday 00:00-08:00 UTC: automatic upgrades and node recreation happen
  then (GKE needs at least 48 h of window in any 32 days, each window at least 4 h: these give about 70 h);
* a maintenance exclusion of scope NO_MINOR_UPGRADES until the minor version's end of support: GKE still applies
  patches and node updates inside the window, but a minor upgrade happens when the stack's kubernetesVersion changes
  (reviewed in `tritonfleet diff`), or when the version leaves support.
Other environments take GKE's defaults (any time), so they meet new versions first.

Sources: https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions (window
availability rule, exclusion scopes, "until end of support"), read 2026-12-03; VERIFY on a real project that an
exclusion whose start time lies in the past is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

# Any Saturday: the window's dates only anchor its time of day and its length; the recurrence repeats it.
WINDOW_START = "2026-01-03T00:00:00Z"
WINDOW_END = "2026-01-03T08:00:00Z"
WINDOW_RECURRENCE = "FREQ=WEEKLY;BYDAY=SA,SU"
EXCLUSION_NAME = "tritonfleet-minor-upgrades-by-config"
EXCLUSION_START = "2026-12-01T00:00:00Z"
EXCLUSION_SCOPE = "NO_MINOR_UPGRADES"
EXCLUSION_END = "UNTIL_END_OF_SUPPORT"


@dataclass(frozen=True)
class Maintenance:
    window_start: str
    window_end: str
    recurrence: str
    exclusion_name: str
    exclusion_start: str
    exclusion_scope: str
    exclusion_end_behavior: str


def maintenance_for(environment: str) -> Maintenance | None:
    """The prod window and exclusion; None (GKE's defaults) elsewhere."""
    if environment != "prod":
        return None
    return Maintenance(
        WINDOW_START, WINDOW_END, WINDOW_RECURRENCE, EXCLUSION_NAME, EXCLUSION_START, EXCLUSION_SCOPE, EXCLUSION_END
    )
