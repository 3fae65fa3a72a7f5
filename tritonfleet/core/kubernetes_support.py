"""Kubernetes minor versions a managed service supports, and until when: the neutral shape of each cloud's dated table.

A cloud's facts module holds its table (`KUBERNETES_SUPPORT`, one `KubernetesSupport` per minor version, with source
and date); the config rules refuse a version outside support and the plan prints the end of support. The dates are
the provider's published estimates on the day they were read: a table is data that ages and must be re-read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class KubernetesSupport:
    """One Kubernetes minor version on one managed service."""

    minor: str
    """The minor version, e.g. 1.35."""
    available_from: dt.date | None
    """When new clusters could first get it on the service's default channel (GKE: Regular); None: not stated."""
    standard_until: dt.date
    """The last day of standard support (new clusters, every release channel)."""
    extended_until: dt.date | None
    """The last day of extended support (paid, on the service's extended channel or plan only); None: none offered."""
    source: str
    """Where the dates were read, with the date they were read."""
    estimated: tuple[str, ...] = ()
    """Dates the source did not state exactly ("standard", "extended"): estimates or derived, README VERIFY list."""

    def supported_on(self, day: dt.date, extended: bool) -> bool:
        """Whether the version is supported on `day`, counting extended support only where `extended` is chosen."""
        last = self.extended_until if extended and self.extended_until else self.standard_until
        return day <= last

    def support_ends(self, extended: bool) -> dt.date:
        return self.extended_until if extended and self.extended_until else self.standard_until


@dataclass(frozen=True)
class StackKubernetes:
    """A stack's Kubernetes version and the support it gets (a cloud's `config_rules.kubernetes_version_support`)."""

    service: str  # EKS, GKE
    version: str
    channel: str | None  # the release channel, where the service has them
    extended: bool  # the stack chose extended support
    support: KubernetesSupport | None  # None: not in the cloud's table

    def plan_note(self, today: dt.date) -> dict[str, object]:
        """The plan's `cloudNotes.kubernetes` (the shape the AWS notes use): support phase today and its end dates."""
        s = self.support
        channel = f"{self.service} {self.channel} channel" if self.channel else self.service
        if s is None:
            return {"kubernetesVersion": self.version, "support": "unknown", "source": f"{channel}: not in the version table"}

        def shown(day: dt.date | None, kind: str) -> str:
            if day is None:
                return "none offered"
            return day.isoformat() + (" (estimated, VERIFY)" if kind in s.estimated else "")

        phase = (
            "standard" if today <= s.standard_until
            else "extended" if self.extended and s.extended_until and today <= s.extended_until
            else "unsupported"
        )
        return {
            "kubernetesVersion": self.version,
            "support": phase,
            "endOfStandardSupport": shown(s.standard_until, "standard"),
            "endOfExtendedSupport": shown(s.extended_until, "extended") + ("" if self.extended else " (EXTENDED channel only)"),
            "source": f"{channel}; {s.source}",
        }


def minor_key(minor: str) -> tuple[int, int]:
    major, rest = minor.split(".")[:2]
    return int(major), int(rest)


def supported_minors(table: Sequence[KubernetesSupport], day: dt.date, extended: bool) -> list[str]:
    """The table's minor versions supported on `day`, oldest first."""
    return sorted((s.minor for s in table if s.supported_on(day, extended)), key=minor_key)


def find(table: Sequence[KubernetesSupport], minor: str) -> KubernetesSupport | None:
    return next((s for s in table if s.minor == minor), None)


def today() -> dt.date:
    """The day support is judged on (one place, so tests can pin it)."""
    return dt.date.today()
