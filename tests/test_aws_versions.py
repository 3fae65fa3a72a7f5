"""Every Kubernetes version EKS supports today plans (no per-version pin missing); the table's dates drive the config
rule and the plan's note."""

from __future__ import annotations

import json
from datetime import date

import pytest

from tests.conftest import ROOT, engine_config, run_program
from tritonfleet.clouds.aws.facts import (
    EKS_VERSIONS,
    KARPENTER_MIN_VERSION,
    kubernetes_support,
    standard_eks_versions,
    supported_eks_versions,
    vcpu_quota,
)
from tritonfleet.core import pins
from tritonfleet.core.catalog import load_catalog

REVIEW_DAY = date(2026, 12, 3)


def test_support_on_the_review_day():
    """1.31 left extended support on 2026-11-26, 1.34 standard support on 2026-12-02 (AWS's calendar)."""
    assert supported_eks_versions(REVIEW_DAY) == ["1.32", "1.33", "1.34", "1.35", "1.36"]
    assert standard_eks_versions(REVIEW_DAY) == ["1.35", "1.36"]
    assert pins.KUBERNETES_VERSION in standard_eks_versions(REVIEW_DAY)
    assert EKS_VERSIONS["1.33"].end_of_standard == date(2026, 7, 29)
    assert EKS_VERSIONS["1.34"].end_of_standard == date(2026, 12, 2)


def test_support_note_for_the_plan():
    note = kubernetes_support("1.34", REVIEW_DAY)
    assert (note["support"], note["endOfStandardSupport"], note["endOfExtendedSupport"]) == (
        "extended",
        "2026-12-02",
        "2027-12-02",
    )
    assert kubernetes_support("1.36", REVIEW_DAY)["endOfStandardSupport"] == "unknown (VERIFY)"
    assert kubernetes_support("1.31", REVIEW_DAY)["support"] == "unsupported"
    assert kubernetes_support("1.99", REVIEW_DAY)["support"] == "unknown"


@pytest.mark.parametrize("version", supported_eks_versions(date.today()))
def test_every_supported_version_plans(version):
    """The whole program under mocks at each version: a missing per-version pin would fail the config or crash here."""
    raw = {**engine_config("dev"), "tritonfleet:cluster": json.dumps({"kubernetesVersion": version})}
    run = run_program(ROOT, "tritonfleet", "dev", raw, [])
    (cluster,) = [r for r in run.resources if r.type == "aws:eks/cluster:Cluster"]
    assert cluster.inputs["version"] == version
    groups = [r for r in run.resources if r.type == "aws:eks/nodeGroup:NodeGroup"]
    assert groups and all(g.inputs["releaseVersion"].startswith(f"{version}.") for g in groups)


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@pytest.mark.parametrize("on", [REVIEW_DAY, date.today()])
def test_the_pinned_karpenter_supports_every_kubernetes_version_eks_supports(on):
    """Karpenter's compatibility matrix at the pinned tag covers each version a stack may choose (1.36 needs 1.13)."""
    pinned = _release(pins.KARPENTER_CHART["version"])
    for version in supported_eks_versions(on):
        assert version in KARPENTER_MIN_VERSION, version
        assert pinned >= _release(KARPENTER_MIN_VERSION[version]), version
    assert _release("1.12.0") < _release(KARPENTER_MIN_VERSION["1.36"]) <= pinned  # an older pin would fail here


# family -> (on-demand code, spot code, spot code confirmed by AWS's quota page)
EXPECTED_QUOTAS = {
    "g6": ("L-DB2E81BA", "L-3819A6DF", True),
    "g6e": ("L-DB2E81BA", "L-3819A6DF", True),  # L40S
    "p5": ("L-417A185B", "L-C4BD4855", True),  # P5 spot is its own quota, not P4/P3/P2's
    "p5e": ("L-417A185B", "L-C4BD4855", True),
    "p5en": ("L-417A185B", "L-C4BD4855", True),
    "p6-b200": ("L-417A185B", "L-C4BD4855", False),  # B200: VERIFY which spot quota P6 draws on
}


@pytest.mark.parametrize("itype", [t.name for t in load_catalog().instance_types if t.cloud == "aws"])
def test_every_aws_gpu_type_in_the_catalog_has_its_quota_codes(itype):
    on_demand, spot, confirmed = EXPECTED_QUOTAS[itype.split(".")[0]]
    assert vcpu_quota(itype, "on-demand").code == on_demand
    assert (vcpu_quota(itype, "spot").code, vcpu_quota(itype, "spot").verify) == (spot, not confirmed)


def test_quota_families_outside_the_table_are_unknown():
    assert vcpu_quota("p4d.24xlarge", "spot").code == "L-7212CCBC"  # "All P4, P3 and P2 Spot Instance Requests"
    assert vcpu_quota("m6i.xlarge", "spot") is None  # not in the table: preflight says unknown, never passes it


def test_plan_notes_version_dates_and_model_pull_pricing(stack_config):
    from tritonfleet.clouds.aws.plan_notes import plan_notes
    from tritonfleet.plan.text import cloud_note_lines

    prod = stack_config("prod")
    notes = plan_notes(prod, REVIEW_DAY)
    assert notes["kubernetes"]["endOfStandardSupport"] == "2027-03-27"
    assert notes["modelPulls"]["monthlyUsd"] == 0.0  # a created VPC has the S3 gateway endpoint
    text = " ".join(line.text.strip() for line in cloud_note_lines(notes, 120))
    assert "Kubernetes 1.35: standard support now; end of standard support 2027-03-27" in text

    subnets = {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"}
    cluster = prod.cluster.model_copy(
        update={
            "existing_vpc_id": "vpc-0123456789abcdef0",
            "existing_vpc_cidr": "10.0.0.0/16",
            "existing_private_subnets": subnets,
        }
    )
    pulls = plan_notes(prod.model_copy(update={"cluster": cluster}), REVIEW_DAY)["modelPulls"]
    assert (pulls["natUsdPerGb"], pulls["monthlyUsd"]) == (0.045, "unknown")  # priced per GB, volume not in the config
    eu = prod.model_copy(update={"cluster": cluster, "region": "eu-west-1"})
    assert plan_notes(eu, REVIEW_DAY)["modelPulls"]["natUsdPerGb"] == "unknown"  # only us-east-1's price is sourced
    text = " ".join(line.text.strip() for line in cloud_note_lines({"modelPulls": pulls}, 120))
    assert "$0.045/GB" in text and "monthly cost unknown" in text


def test_a_version_without_a_published_end_of_standard_support_pays_the_standard_fee():
    """1.36's EKS dates are not published yet: its fee is the standard one, not a crash on an unknown date."""
    from datetime import date

    from tritonfleet.clouds.aws.facts import EKS_STANDARD_SUPPORT_USD_PER_CLUSTER_HOUR
    from tritonfleet.clouds.aws.support import control_plane, usd_per_cluster_hour

    assert usd_per_cluster_hour("1.36", date(2026, 12, 5)) == EKS_STANDARD_SUPPORT_USD_PER_CLUSTER_HOUR
    assert control_plane("1.36", "prod", date(2026, 12, 5))["endOfStandardSupport"] == "unknown"
