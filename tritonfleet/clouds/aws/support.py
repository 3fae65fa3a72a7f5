"""How an EKS cluster's version is supported and what its control plane costs, by date: plain decisions on the
facts in facts.py (the adapter sets upgradePolicy.supportType from `support_type`; the plan prints `control_plane`)."""

from __future__ import annotations

from datetime import date
from typing import Any

from tritonfleet.clouds.aws.facts import (
    EKS_EXTENDED_SUPPORT_USD_PER_CLUSTER_HOUR,
    EKS_STANDARD_SUPPORT_USD_PER_CLUSTER_HOUR,
    EKS_VERSIONS,
    EKS_VERSIONS_SOURCE,
    eks_version,
)
from tritonfleet.core.conventions import HOURS_PER_MONTH

# upgradePolicy.supportType per environment: prod pays EKS extended support (facts.py) rather than let AWS upgrade its
# control plane at the end of standard support at a time AWS picks; the plan prints that date and the fee from it, so
# the upgrade is planned and the fee never starts. dev and staging take STANDARD: no fee, and AWS's automatic upgrade
# there shows what a version change breaks before prod meets it. tritonfleet's choice.
SUPPORT_TYPE = {"prod": "EXTENDED", "staging": "STANDARD", "dev": "STANDARD"}
PRICING_SOURCE = "https://aws.amazon.com/eks/pricing/ (read 2026-12-05)"


def support_type(environment: str) -> str:
    return SUPPORT_TYPE[environment]


def _monthly(usd_per_hour: float) -> float:
    return round(usd_per_hour * HOURS_PER_MONTH, 2)


def _newer(version: str, on: date) -> list[str]:
    """Versions after `version` that EKS supports on `on` (a new cluster should start on the newest)."""
    key = tuple(int(n) for n in version.split("."))
    return [v for v, row in EKS_VERSIONS.items() if tuple(int(n) for n in v.split(".")) > key and row.supported(on)]


def usd_per_cluster_hour(version: str, on: date) -> float:
    """EKS's fee for a cluster of `version` on `on`: the extended-support rate once standard support has ended (a
    version whose end is not published yet, 1.36 today, is newer than one still in standard support)."""
    row = eks_version(version)
    extended_now = row is not None and row.end_of_standard is not None and on >= row.end_of_standard
    return EKS_EXTENDED_SUPPORT_USD_PER_CLUSTER_HOUR if extended_now else EKS_STANDARD_SUPPORT_USD_PER_CLUSTER_HOUR


def control_plane(version: str, environment: str, on: date) -> dict[str, Any]:
    """The control plane's monthly cost now and from the date extended support starts: with supportType EXTENDED the
    fee applies from the end of standard support (until an upgrade); with STANDARD AWS upgrades the cluster then."""
    row = eks_version(version)
    kind = support_type(environment)
    end = row.end_of_standard if row else None
    note: dict[str, Any] = {
        "supportType": kind,
        "monthlyUsdNow": _monthly(usd_per_cluster_hour(version, on)),
        "endOfStandardSupport": end.isoformat() if end else "unknown",
        "newerVersions": _newer(version, on),
        "source": f"{PRICING_SOURCE}; {EKS_VERSIONS_SOURCE}",
    }
    if kind == "EXTENDED":
        note["monthlyUsdInExtendedSupport"] = _monthly(EKS_EXTENDED_SUPPORT_USD_PER_CLUSTER_HOUR)
    return note
