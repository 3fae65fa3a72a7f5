"""Who administers the cluster, and how its version is supported: plain decisions, no Pulumi.

No cluster-admin outside the stack: clusters are created with `bootstrapClusterCreatorAdminPermissions` false, so EKS
makes no access entry of its own, and the identity that creates the cluster (the deployer) gets the stack's own
admin entry (`deployer_entry`), shown and managed like every other. The creator is known only at deploy time: the
program asks STS for the caller when the cluster does not exist yet, records it in the cluster's CREATOR_TAG, and
reads that tag back on every later run, so a different deployer later never changes the answer.
A cluster created before this (with the flag true) keeps EKS's bootstrap entry for its creator: the flag cannot
change without replacing the cluster, and a second entry for the same principal fails with 409
(ResourceInUseException), so there the creator is left out of the stack's entries and exported as the bootstrap
admin (docs/aws.md says how to hand it to the stack).
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


def deployer_entry(creator: str | None, bootstrapped: bool) -> str | None:
    """The principal of the stack's own `deployer` admin entry: the creator of a cluster made without EKS's bootstrap
    admin. None where EKS made the creator's entry (a second one fails with 409) or the creator is unknown."""
    return None if bootstrapped else creator
