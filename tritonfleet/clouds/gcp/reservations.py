"""How a GCP pool names its reservation (gpuPools[].reservationId): a reservation of the stack's project by name, a
shared one by its path in the owner project, and a block of either (how A3 Ultra and A4 capacity is sold).

GKE takes these forms as the node pool's reservation affinity values. Source:
https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations ("Consume a shared reservation":
projects/OWNER_PROJECT/reservations/NAME; "Consume specific reservation blocks": NAME/reservationBlocks/BLOCK), read
2026-12-05. Plain data: config rules and preflight share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
RESERVATION_PATTERN = re.compile(
    rf"^(?:projects/(?P<project>[a-z][a-z0-9-]{{4,28}}[a-z0-9])/reservations/)?(?P<name>{_NAME})"
    rf"(?:/reservationBlocks/(?P<block>{_NAME}))?$"
)
RESERVATION_FORMS = (
    "NAME (a reservation of the stack's project), projects/OWNER/reservations/NAME (a reservation shared with it), "
    "either followed by /reservationBlocks/BLOCK (one block of it)"
)


@dataclass(frozen=True)
class ReservationRef:
    project: str  # the owner project: the stack's unless shared
    name: str
    block: str | None = None
    shared: bool = False  # named by its path in an owner project


def parse_reservation(reservation_id: str, stack_project: str) -> ReservationRef | None:
    """The reservation a pool names, or None when reservationId has none of RESERVATION_FORMS."""
    match = RESERVATION_PATTERN.fullmatch(reservation_id)
    if match is None:
        return None
    project = match["project"]
    return ReservationRef(project or stack_project, match["name"], match["block"], shared=project is not None)


def reservation_fix(reservation_id: str) -> str:
    """The likeliest meant form of a malformed reservationId: a block without its reservation gets a placeholder."""
    if reservation_id.startswith("reservationBlocks/") or reservation_id.startswith("/reservationBlocks/"):
        return f"<reservation>/{reservation_id.lstrip('/')}"
    return "my-reservation"
