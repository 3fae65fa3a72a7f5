"""Who administers the cluster, and how its version is supported: plain decisions, no Pulumi.

The identity that creates an EKS cluster gets cluster-admin from `bootstrapClusterCreatorAdminPermissions`, as an
access entry EKS makes itself (outside Pulumi's state). A second access entry for the same principal fails with 409
(ResourceInUseException), so the creator is left out of `cluster.adminPrincipals`' entries. The creator is known only
at deploy time: the program asks STS for the caller when the cluster does not exist yet, records it in the cluster's
CREATOR_TAG, and reads that tag back on every later run, so a different deployer later never changes the answer.
"""

from __future__ import annotations

import re

from tritonfleet.clouds.aws.support import SUPPORT_TYPE, support_type  # noqa: F401 - the plan prices it too

CREATOR_TAG = "tritonfleet.io/created-by"


def iam_principal(caller_arn: str) -> str:
    """The IAM ARN an access entry names for an STS caller: an assumed role becomes its role's ARN.

    arn:aws:sts::123456789012:assumed-role/deployer/session -> arn:aws:iam::123456789012:role/deployer. A role with a
    path loses it here (STS does not report it); EKS matches the bootstrap entry to the role ARN (VERIFY for pathed roles).
    """
    assumed = re.fullmatch(r"arn:(aws[a-z-]*):sts::(\d{12}):assumed-role/([^/]+)/.+", caller_arn)
    if assumed:
        partition, account, role = assumed.groups()
        return f"arn:{partition}:iam::{account}:role/{role}"
    return caller_arn


def admin_entries(admin_principals: list[str], creator: str | None) -> dict[int, str]:
    """Position in `cluster.adminPrincipals` -> principal, for those that get an access entry: each listed principal
    once, except the creator (EKS made its entry). Keyed by the position as listed, so resource names stay what they
    were before the creator was known (a renamed entry would be replaced, and its create would collide too)."""
    entries: dict[int, str] = {}
    for i, principal in enumerate(admin_principals):
        if principal != creator and principal not in entries.values():
            entries[i] = principal
    return entries
