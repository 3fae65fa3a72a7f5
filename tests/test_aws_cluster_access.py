"""Who gets an access entry, and which EKS support type each environment takes (plain decisions)."""

from __future__ import annotations

import pytest

from tritonfleet.clouds.aws.cluster_access import admin_entries, deployer_entry, iam_principal, support_type

ROLE = "arn:aws:iam::123456789012:role/deployer"


@pytest.mark.parametrize(
    ("caller", "principal"),
    [
        ("arn:aws:sts::123456789012:assumed-role/deployer/ci-run-42", ROLE),
        ("arn:aws-us-gov:sts::123456789012:assumed-role/deployer/s", "arn:aws-us-gov:iam::123456789012:role/deployer"),
        ("arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:user/alice"),
    ],
)
def test_an_sts_caller_becomes_the_iam_principal_its_access_entry_names(caller, principal):
    assert iam_principal(caller) == principal


def test_the_creator_and_duplicates_get_no_entry_and_the_rest_keep_their_place():
    ops, sre = "arn:aws:iam::123456789012:role/ops", "arn:aws:iam::123456789012:user/sre"
    assert admin_entries([ops, ROLE, sre, ops], ROLE) == {0: ops, 2: sre}
    assert admin_entries([ops, ROLE], None) == {0: ops, 1: ROLE}  # creator unknown (cluster older than the tag)


def test_the_creator_is_the_stacks_deployer_unless_eks_made_it_admin_itself():
    assert deployer_entry(ROLE, bootstrapped=False) == ROLE  # created by tritonfleet now: no EKS bootstrap entry
    assert deployer_entry(ROLE, bootstrapped=True) is None  # an older cluster: EKS's entry exists (a second: 409)
    assert deployer_entry(None, bootstrapped=False) is None  # creator unknown (cluster older than the tag)


def test_prod_pays_for_extended_support_others_take_standard():
    assert support_type("prod") == "EXTENDED"
    assert {support_type("dev"), support_type("staging")} == {"STANDARD"}
