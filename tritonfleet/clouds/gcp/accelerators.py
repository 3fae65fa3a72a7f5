"""Compute Engine machine series that carry accelerators (GPUs attached to the machine type, or Cloud TPUs): a node
of any of them spends accelerator money, so the policies count it as a GPU pool and the config refuses it for
system nodes. N1 machines take GPUs as guestAccelerators instead: the policies count a node pool that declares any.

Sources: "GPU machine types" (https://cloud.google.com/compute/docs/gpus), "Accelerator-optimized machine family"
(https://cloud.google.com/compute/docs/accelerator-optimized-machines) and "Plan TPUs in GKE"
(https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus), series compiled 2026-12-05. A later series that
follows the same naming (a5, g5, ct7, tpu8) is caught by SERIES_PATTERN; a new naming needs a row here (README VERIFY).
"""

from __future__ import annotations

import re

SOURCE = "https://cloud.google.com/compute/docs/gpus (series compiled 2026-12-05)"

# machine series (the part of a machine type before its first '-') -> what its machines carry
ACCELERATED_SERIES: dict[str, str] = {
    "a2": "NVIDIA A100",
    "a3": "NVIDIA H100 or H200",
    "a4": "NVIDIA B200",
    "a4x": "NVIDIA GB200",
    "g2": "NVIDIA L4",
    "g4": "NVIDIA RTX PRO 6000 Blackwell",
    "ct3": "Cloud TPU v3",
    "ct3p": "Cloud TPU v3",
    "ct4p": "Cloud TPU v4",
    "ct5l": "Cloud TPU v5e",
    "ct5lp": "Cloud TPU v5e",
    "ct5p": "Cloud TPU v5p",
    "ct6e": "Cloud TPU v6e (Trillium)",
    "tpu7x": "Cloud TPU Ironwood",
}
# The naming of the series above (g1-small is a shared-core N1 type without a GPU: G series GPUs start at g2).
SERIES_PATTERN = re.compile(r"^(a\d+[a-z]*|g([2-9]|\d{2,})[a-z]*|ct\d+[a-z]*|tpu\d+[a-z]*)$")


def series(machine_type: str) -> str:
    """The series of a machine type (a3-ultragpu-8g -> a3, ct5lp-hightpu-4t -> ct5lp)."""
    return machine_type.split("-", 1)[0].lower()


def accelerator(machine_type: str) -> str | None:
    """What a machine type's nodes carry ('an accelerated machine series' for a series not listed), or None."""
    name = series(machine_type)
    if name in ACCELERATED_SERIES:
        return ACCELERATED_SERIES[name]
    return "an accelerated machine series" if SERIES_PATTERN.match(name) else None


def tpu(machine_type: str) -> bool:
    """Whether a machine type's accelerators are Cloud TPUs (no NVIDIA driver or device plugin applies)."""
    return re.match(r"^(ct|tpu)\d", series(machine_type)) is not None
