"""GKE's dated version table, the default version, the config rule that refuses unsupported versions, and the plan line."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.gcp_helpers import decoded, load, problems
from tritonfleet.clouds.gcp import config_rules
from tritonfleet.clouds.gcp.facts import KUBERNETES_SUPPORT
from tritonfleet.clouds.gcp.plan_notes import plan_notes
from tritonfleet.core import kubernetes_support, pins
from tritonfleet.core.kubernetes_support import minor_key
from tritonfleet.plan.text import cloud_note_lines

REVIEWED_ON = dt.date(2026, 12, 3)


@pytest.fixture
def on_review_day(monkeypatch):
    monkeypatch.setattr(kubernetes_support, "today", lambda: REVIEWED_ON)


def test_the_table_is_ordered_dated_and_sourced():
    minors = [s.minor for s in KUBERNETES_SUPPORT]
    assert minors == sorted(minors, key=minor_key) and len(set(minors)) == len(minors)
    for s in KUBERNETES_SUPPORT:
        assert s.source and set(s.estimated) <= {"standard", "extended"}
        assert s.extended_until is not None and s.standard_until < s.extended_until
        if s.available_from is not None:
            # About 14 months of standard support after Regular (1.34's transcribed end is 12 and marked estimated).
            months = (s.standard_until - s.available_from).days / 30.4
            assert 11.5 <= months <= 15.5, s.minor
            assert "standard" in s.estimated or 13 <= months <= 15.5, s.minor


def test_default_is_in_standard_support_on_the_review_day_and_133_is_not():
    default = kubernetes_support.find(KUBERNETES_SUPPORT, pins.KUBERNETES_VERSION)
    assert default is not None and default.supported_on(REVIEWED_ON, extended=False)
    assert "standard" not in default.estimated
    old = kubernetes_support.find(KUBERNETES_SUPPORT, "1.33")
    assert old is not None and not old.supported_on(REVIEWED_ON, extended=False)
    assert old.supported_on(REVIEWED_ON, extended=True)


def test_shipped_gcp_stacks_get_a_supported_version(on_review_day):
    for stack in ("gcp-dev", "gcp-prod"):
        config = load(decoded(stack), stack)
        choice = config_rules.kubernetes_version_support(config.cluster)
        assert choice.support is not None and choice.support.supported_on(REVIEWED_ON, choice.extended)


def test_the_shared_default_is_in_gke_standard_support():
    data = decoded("gcp-prod")
    data["cluster"].pop("kubernetesVersion")
    assert load(data, "gcp-prod").cluster.kubernetes_version == pins.KUBERNETES_VERSION == "1.35"


def test_a_version_past_standard_support_is_refused_with_the_supported_list_and_the_extended_way(on_review_day):
    data = decoded("gcp-prod")
    data["cluster"]["kubernetesVersion"] = "1.33"
    data["cluster"].pop("gkeVersion", None)  # gcp-prod\'s build belongs to 1.35
    found, message = problems(data, "gcp-prod")
    assert [p.key for p in found] == ["cluster.kubernetesVersion"]
    allowed = found[0].allowed
    assert "standard support on 2026-12-03: 1.35, 1.36" in allowed
    assert "ended 2026-08-03" in allowed and "needs releaseChannel EXTENDED" in allowed
    assert f"pulumi config set --path 'tritonfleet:cluster.kubernetesVersion' {pins.KUBERNETES_VERSION} --stack gcp-prod" in message
    assert "Traceback" not in message


def test_extended_channel_keeps_a_version_in_extended_support(on_review_day):
    data = decoded("gcp-prod")
    data["cluster"].update(kubernetesVersion="1.33", releaseChannel="EXTENDED")
    data["cluster"].pop("gkeVersion")  # gcp-prod's build belongs to 1.35
    note = plan_notes(load(data, "gcp-prod"), REVIEWED_ON)["kubernetes"]
    assert (note["support"], note["endOfStandardSupport"]) == ("extended", "2026-08-03")
    assert note["endOfExtendedSupport"] == "2027-06-03 (estimated, VERIFY)"  # derived, not stated
    assert note["source"].startswith("GKE EXTENDED channel; ")


@pytest.mark.parametrize(("version", "channel", "why"), [
    ("1.29", "EXTENDED", "not in tritonfleet's GKE version table"),
    ("1.31", "EXTENDED", "extended support ended 2026-10-25"),
    ("1.40", None, "not in tritonfleet's GKE version table"),
])
def test_unknown_or_ended_versions_are_refused(on_review_day, version, channel, why):
    data = decoded("gcp-prod")
    data["cluster"]["kubernetesVersion"] = version
    data["cluster"].pop("gkeVersion", None)  # gcp-prod\'s build belongs to 1.35
    if channel:
        data["cluster"]["releaseChannel"] = channel
    found, _ = problems(data, "gcp-prod")
    assert {p.key for p in found} == {"cluster.kubernetesVersion"}  # 1.29 is also below the compute-class minimum
    assert any(why in p.allowed for p in found)


def test_a_version_is_refused_once_the_table_says_its_support_ended(monkeypatch):
    monkeypatch.setattr(kubernetes_support, "today", lambda: dt.date(2027, 4, 12))
    found, _ = problems(decoded("gcp-prod"), "gcp-prod")
    assert found[0].key == "cluster.kubernetesVersion" and "ended 2027-04-11" in found[0].allowed


def test_the_plan_prints_the_end_of_standard_support():
    note = plan_notes(load(decoded("gcp-prod"), "gcp-prod"), REVIEWED_ON)["kubernetes"]
    assert note["kubernetesVersion"] == "1.35" and note["support"] == "standard"
    assert note["endOfStandardSupport"] == "2027-04-11"
    assert note["endOfExtendedSupport"] == "2028-02-11 (estimated, VERIFY) (EXTENDED channel only)"
    [heading, line, *_] = [ln.text for ln in cloud_note_lines({"kubernetes": note}, 200)]
    assert heading == "Cluster" and "Kubernetes 1.35: standard support now; end of standard support 2027-04-11" in line
    assert "GKE REGULAR channel" in line


# ---- machine types in zones that do not offer them (tritonfleet/clouds/gcp/facts.py MACHINE_TYPE_ZONES) ----


def test_a_machine_type_in_a_zone_that_does_not_offer_it_is_refused_with_the_zones_that_do():
    data = decoded("gcp-prod")
    data["gpuPools"][2]["zones"] = ["us-central1-a", "us-central1-b"]  # h200-spot: a3-ultragpu-8g is in -b only
    found, message = problems(data, "gcp-prod")
    assert [p.key for p in found] == ["gpuPools[2].zones[0]"]
    assert "zones that offer a3-ultragpu-8g in us-central1: us-central1-b (us-central1-a does not" in found[0].allowed
    assert "pulumi config rm --path 'tritonfleet:gpuPools[2].zones[0]' --stack gcp-prod" in message


def test_a_pool_spanning_the_cluster_zones_is_checked_too():
    data = decoded("gcp-prod")
    data["gpuPools"][1].pop("zones")  # the h200 reservation pool would span us-central1-a and -b
    found, message = problems(data, "gcp-prod")
    assert [p.key for p in found] == ["gpuPools[1].zones[0]"]
    assert "pulumi config set --path 'tritonfleet:gpuPools[1].zones[0]' us-central1-b --stack gcp-prod" in message


def test_unknown_regions_are_left_to_preflight():
    data = decoded("gcp-prod")
    data.update(region="europe-west4")
    data["cluster"]["zones"] = ["europe-west4-a", "europe-west4-b"]
    for pool in data["gpuPools"]:
        pool.pop("zones", None)
    assert load(data, "gcp-prod").region == "europe-west4"
