"""EC2 instance families that carry accelerators (GPUs, Trainium, Inferentia, Gaudi, media and FPGA cards): a node
of any of them spends accelerator money, so the policies count it as a GPU pool and the config refuses it for
system nodes.

Source: Amazon EC2 instance types, "Accelerated computing" (https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html)
and the EKS accelerated-AMI instance table (https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html),
families compiled 2026-12-05. A family AWS adds later is caught by FAMILY_PATTERN when it follows the same naming
(p7, g8e, trn3, inf3); a new naming needs a row here (README VERIFY list).
"""

from __future__ import annotations

import re

SOURCE = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html (families compiled 2026-12-05)"

# family -> what its instances carry
ACCELERATED_FAMILIES: dict[str, str] = {
    "p3": "NVIDIA V100",
    "p3dn": "NVIDIA V100",
    "p4d": "NVIDIA A100",
    "p4de": "NVIDIA A100 80GB",
    "p5": "NVIDIA H100",
    "p5e": "NVIDIA H200",
    "p5en": "NVIDIA H200",
    "p6-b200": "NVIDIA B200",
    "p6-b300": "NVIDIA B300",
    "p6e-gb200": "NVIDIA GB200",
    "g4dn": "NVIDIA T4",
    "g4ad": "AMD Radeon Pro V520",
    "g5": "NVIDIA A10G",
    "g5g": "NVIDIA T4G",
    "g6": "NVIDIA L4",
    "g6e": "NVIDIA L40S",
    "g6f": "NVIDIA L4 (fractional)",
    "gr6": "NVIDIA L4",
    "gr6f": "NVIDIA L4 (fractional)",
    "g7e": "NVIDIA RTX PRO 6000 Blackwell",
    "trn1": "AWS Trainium",
    "trn1n": "AWS Trainium",
    "trn2": "AWS Trainium2",
    "inf1": "AWS Inferentia",
    "inf2": "AWS Inferentia2",
    "dl1": "Habana Gaudi",
    "dl2q": "Qualcomm AI 100",
    "vt1": "Xilinx U30 media accelerator",
    "f1": "Xilinx FPGA",
    "f2": "AMD FPGA",
}
# The naming the families above follow, so a later generation is caught too (no CPU family starts this way).
FAMILY_PATTERN = re.compile(r"^(p\d+[a-z]*(-[a-z0-9]+)?|gr?\d+[a-z]*|trn\d+[a-z]*|inf\d+[a-z]*|dl\d+[a-z]*|vt\d+|f\d+)$")


def family(instance_type: str) -> str:
    """The family of an instance type: the part before the size (p6-b200.48xlarge -> p6-b200)."""
    return instance_type.split(".", 1)[0].lower()


def accelerator(instance_type: str) -> str | None:
    """What an instance type's nodes carry ('an accelerated family' for a family not listed), or None for a CPU type."""
    name = family(instance_type)
    if name in ACCELERATED_FAMILIES:
        return ACCELERATED_FAMILIES[name]
    return "an accelerated instance family" if FAMILY_PATTERN.match(name) else None
