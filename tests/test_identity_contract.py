"""The keyless-access contract across floors: the ServiceAccount our chart renders for a Triton release is exactly the
one the cloud identity trusts (IRSA trust subject on AWS, Workload Identity member on GCP), with the annotation."""

from __future__ import annotations

import json

import pytest

from tests.serving_helpers import by_kind, plan, planned_values, render
from tritonfleet.core.conventions import triton_release_name


@pytest.mark.parametrize("stack", ["prod", "gcp-prod"])
def test_rendered_service_account_is_the_one_the_cloud_identity_trusts(stack):
    document = plan(stack)
    checked = 0
    for release in [r for r in document["resources"] if r["type"] == "kubernetes:helm.sh/v3:Release"]:
        if release["inputs"]["chart"] != "./charts/triton-inference-server":
            continue
        name, namespace = release["inputs"]["name"], release["inputs"]["namespace"]
        deployment = name.removeprefix(triton_release_name(""))
        account = by_kind(render(planned_values(stack, name), name=name, namespace=namespace))["ServiceAccount"]
        subject = f"{namespace}:{account['metadata']['name']}"
        if document["cloud"] == "aws":
            role = next(
                r
                for r in document["resources"]
                if r["type"] == "aws:iam/role:Role" and r["name"] == f"tf-aws-triton-{deployment}"
            )
            (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
            assert any(v == f"system:serviceaccount:{subject}" for v in statement["Condition"]["StringEquals"].values())
            assert "eks.amazonaws.com/role-arn" in account["metadata"]["annotations"]
        else:
            members = {
                r["inputs"]["member"]
                for r in document["resources"]
                if r["type"] == "gcp:storage/bucketIAMMember:BucketIAMMember" and f"-triton-{deployment}-" in r["name"]
            }
            principal = f"acme-ml-prod.svc.id.goog/subject/ns/{namespace}/sa/{account['metadata']['name']}"
            assert len(members) == 1 and next(iter(members)).endswith(principal)
            assert account["metadata"]["annotations"]["tritonfleet.io/workload-identity-principal"].endswith(principal)
        checked += 1
    assert checked == 2  # llm and vision


# The grants that let a Triton identity read its models: attached read policy (AWS); the principal's bucket roles
# (GCP). A Triton pod that starts before them cannot load its repository.
GRANT_TYPES = {
    "aws": ("aws:iam/rolePolicy:RolePolicy",),
    "gcp": ("gcp:storage/bucketIAMMember:BucketIAMMember",),
}


@pytest.mark.parametrize("stack", ["prod", "gcp-prod"])
def test_triton_release_waits_for_its_identity_grants(stack):
    document = plan(stack)
    grants = [r for r in document["resources"] if r["type"] in GRANT_TYPES[document["cloud"]]]
    checked = 0
    for release in [r for r in document["resources"] if r["type"] == "kubernetes:helm.sh/v3:Release"]:
        if release["inputs"]["chart"] != "./charts/triton-inference-server":
            continue
        deployment = release["inputs"]["name"].removeprefix(triton_release_name(""))
        own = {g["urn"] for g in grants if f"-triton-{deployment}-" in g["name"]}
        assert len(own) == (1 if document["cloud"] == "aws" else 2)  # GCP: the two bucket roles
        assert own <= set(release["dependsOn"]), f"{deployment}: {sorted(own - set(release['dependsOn']))}"
        checked += 1
    assert checked == 2  # llm and vision
