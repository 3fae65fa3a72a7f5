"""`tritonfleet preflight` on GCP against recorded Compute Engine answers: fake clients that return the
google-cloud-compute library's own message types (as its pagers and getters do), no network."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from google.api_core.exceptions import Forbidden, NotFound

from tests.conftest import ROOT, one_line
from tests.gcp_helpers import compute_v1, decoded, encoded
from tritonfleet.clouds.gcp.preflight import GcpClients, check_gcs_bucket_names, required_gpus, run_preflight
from tritonfleet.core.config import load_stack_config

PROJECT = "acme-ml-prod"
ZONE_URL = f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/"
REGION_ZONES = ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"]
# What `regions.get` / `aggregated_list` answered for us-central1 (trimmed to the fields the preflight reads).
MACHINE_ZONES = {
    "e2-standard-4": REGION_ZONES,
    "g2-standard-8": ["us-central1-a", "us-central1-b", "us-central1-c"],
    "a3-ultragpu-8g": ["us-central1-b"],
}
ACCELERATOR_ZONES = {"nvidia-l4": ["us-central1-a", "us-central1-b", "us-central1-c"], "nvidia-h200-141gb": ["us-central1-b"]}


def quotas(**limits):
    return [compute_v1.Quota(metric=metric, limit=limit, usage=usage) for metric, (limit, usage) in limits.items()]


class Getter:
    def __init__(self, answer=None, error=None, by_zone=None):
        self.answer, self.error, self.by_zone, self.calls = answer, error, by_zone, []

    def get(self, **request):
        self.calls.append(request)
        if self.error:
            raise self.error
        if self.by_zone is not None:
            found = self.by_zone.get(request["zone"])
            if found is None:
                raise NotFound(f"reservation {request['reservation']} not found")
            return found
        return self.answer


class Aggregated:
    """aggregated_list(request) -> (scope, scoped list) pairs, as the library's AggregatedListPager iterates."""

    def __init__(self, zones_by_name, scoped, item, field_name):
        self.zones_by_name, self.scoped, self.item, self.field_name, self.requests = zones_by_name, scoped, item, field_name, []

    def aggregated_list(self, request):
        self.requests.append(request)
        name = request["filter"].split('"')[1]
        for zone in self.zones_by_name.get(name, []):
            yield f"zones/{zone}", self.scoped(**{self.field_name: [self.item(name=name, zone=ZONE_URL + zone)]})
        yield "zones/us-east1-b", self.scoped()  # another region's zone: an empty scope, as the API returns


def reservation(machine="a3-ultragpu-8g", count=1, in_use=0, zone="us-central1-b"):
    return compute_v1.Reservation(
        name="h200-serving",
        zone=ZONE_URL + zone,
        specific_reservation_required=True,
        specific_reservation=compute_v1.AllocationSpecificSKUReservation(
            count=count,
            in_use_count=in_use,
            instance_properties=compute_v1.AllocationSpecificSKUAllocationReservedInstanceProperties(machine_type=machine),
        ),
    )


def clients(region_quotas=None, global_limit=(64, 0), reservations=None, machine_zones=None, project_error=None):
    region = compute_v1.Region(
        name="us-central1",
        zones=[ZONE_URL + z for z in REGION_ZONES],
        quotas=region_quotas
        if region_quotas is not None
        else quotas(
            NVIDIA_L4_GPUS=(16, 0), PREEMPTIBLE_NVIDIA_L4_GPUS=(16, 0), PREEMPTIBLE_NVIDIA_H200_GPUS=(16, 0)
        ),
    )
    project = compute_v1.Project(name=PROJECT, quotas=quotas(GPUS_ALL_REGIONS=global_limit))
    return GcpClients(
        regions=Getter(region),
        projects=Getter(project, error=project_error),
        machine_types=Aggregated(
            machine_zones or MACHINE_ZONES, compute_v1.MachineTypesScopedList, compute_v1.MachineType, "machine_types"
        ),
        accelerator_types=Aggregated(
            ACCELERATOR_ZONES, compute_v1.AcceleratorTypesScopedList, compute_v1.AcceleratorType, "accelerator_types"
        ),
        reservations=Getter(by_zone=reservations if reservations is not None else {"us-central1-b": reservation()}),
    )


def prod(**changes):
    data = decoded("gcp-prod")
    for key, value in changes.items():
        data[key] = value
    return load_stack_config(encoded(data), "gcp-prod")


@pytest.fixture
def zones_unknown_offline(monkeypatch):
    """As in a region the offline zone table does not list: only preflight can tell which zones offer a type."""
    monkeypatch.setattr("tritonfleet.clouds.gcp.config_rules.MACHINE_TYPE_ZONES", {})


def by_status(report, status):
    return [(f.check, f.subject) for f in report.findings if f.status == status]


def test_gpu_demand_per_quota_metric_from_the_capacity_split():
    assert required_gpus(prod()) == {
        "NVIDIA_L4_GPUS": {"l4": 5},  # on-demand base 2..5
        "PREEMPTIBLE_NVIDIA_L4_GPUS": {"l4": 3},
        "PREEMPTIBLE_NVIDIA_H200_GPUS": {"h200-spot": 16},
    }  # the reservation pool draws on its reservation, not on quota


def test_shipped_gcp_prod_passes_against_a_healthy_project():
    report = run_preflight(prod(), clients())
    assert report.blockers == [] and by_status(report, "unknown") == [] and by_status(report, "warning") == []
    checks = {f.check for f in report.findings}
    assert checks == {"zones", "offering", "quota", "reservation"}
    assert ("quota", "global GPUS_ALL_REGIONS") in by_status(report, "ok")
    assert ("offering", "pool h200: nvidia-h200-141gb") in by_status(report, "ok")
    assert report.document()["summary"]["blocker"] == 0


class Buckets:
    """storage.Client.get_bucket: a name that exists, one taken by another project, or none."""

    def __init__(self, answers):
        self.answers = answers

    def get_bucket(self, name, timeout):
        answer = self.answers.get(name, NotFound(f"bucket {name}"))
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.mark.parametrize(
    ("answer", "status", "fragment"),
    [
        (None, "ok", "free: `pulumi up` creates it"),
        (Forbidden("no storage.buckets.get"), "blocker", "taken by someone you cannot read; name yours: pulumi config set"),
        ("a bucket", "warning", "exists and you can read it"),
    ],
    ids=["free", "taken", "ours-or-imported"],
)
def test_model_bucket_names_free_taken_or_already_there(answer, status, fragment):
    config = prod()
    name = config.physical_bucket_name(config.model_buckets[0])
    [finding] = check_gcs_bucket_names(Buckets({} if answer is None else {name: answer}), config)[:1]
    assert (finding.check, finding.subject, finding.status) == ("bucket", f"bucket models: {name}", status)
    assert fragment in finding.detail
    if status == "blocker":
        assert "modelBuckets[0].bucketName" in finding.detail


def test_a_machine_type_missing_in_a_pool_zone_is_a_blocker_naming_the_zones_that_offer_it(zones_unknown_offline):
    config = prod()
    data = decoded("gcp-prod")
    data["gpuPools"][2]["zones"] = ["us-central1-a", "us-central1-b"]  # h200-spot
    report = run_preflight(load_stack_config(encoded(data), "gcp-prod"), clients())
    blockers = [f for f in report.blockers if f.subject == "pool h200-spot: a3-ultragpu-8g"]
    assert blockers and "not offered in us-central1-a (offered in us-central1-b)" in blockers[0].detail
    assert "gpuPools[].zones" in blockers[0].detail
    assert config  # the shipped stack itself is fine (previous test)


def test_a_zone_outside_the_region_is_a_blocker(zones_unknown_offline):
    data = decoded("gcp-prod")
    data["cluster"]["zones"] = ["us-central1-b", "us-central1-z"]
    report = run_preflight(load_stack_config(encoded(data), "gcp-prod"), clients())
    assert ("zones", "us-central1-z") in by_status(report, "blocker")


def test_quota_below_the_ceiling_is_a_blocker_and_busy_quota_a_warning():
    low = quotas(NVIDIA_L4_GPUS=(4, 0), PREEMPTIBLE_NVIDIA_L4_GPUS=(16, 14), PREEMPTIBLE_NVIDIA_H200_GPUS=(16, 0))
    report = run_preflight(prod(), clients(region_quotas=low, global_limit=(8, 0)))
    blocked = {f.subject: f.detail for f in report.blockers}
    assert "limit 4 GPUs < 5 needed" in blocked["us-central1 NVIDIA_L4_GPUS"]
    assert "limit 8 GPUs < 24 needed" in blocked["global GPUS_ALL_REGIONS"]
    assert ("quota", "us-central1 PREEMPTIBLE_NVIDIA_L4_GPUS") in by_status(report, "warning")


def test_a_quota_the_region_does_not_report_is_unknown_not_passed():
    report = run_preflight(prod(), clients(region_quotas=quotas(NVIDIA_L4_GPUS=(16, 0))))
    unknown = {f.subject for f in report.findings if f.status == "unknown"}
    assert {"us-central1 PREEMPTIBLE_NVIDIA_L4_GPUS", "us-central1 PREEMPTIBLE_NVIDIA_H200_GPUS"} <= unknown


def test_a_denied_project_read_is_unknown_with_the_reason():
    report = run_preflight(prod(), clients(project_error=Forbidden("compute.projects.get denied")))
    [finding] = [f for f in report.findings if f.subject == "global GPUS_ALL_REGIONS"]
    assert finding.status == "unknown" and "Forbidden" in finding.detail


@pytest.mark.parametrize(
    ("reservation_args", "status", "fragment"),
    [
        (None, "blocker", "no reservation h200-serving in us-central1-b"),
        ({"machine": "a3-highgpu-8g"}, "blocker", "reserves a3-highgpu-8g"),
        ({"count": 2, "in_use": 2}, "warning", "0 of 2 a3-ultragpu-8g free"),
        ({"count": 2, "in_use": 1}, "ok", "1 of 2 a3-ultragpu-8g free in us-central1-b"),
    ],
)
def test_reservations(reservation_args, status, fragment):
    reservations = {"us-central1-b": reservation(**reservation_args)} if reservation_args is not None else {}
    report = run_preflight(prod(), clients(reservations=reservations))
    [finding] = [f for f in report.findings if f.check == "reservation"]
    assert finding.status == status and fragment in finding.detail


def test_no_google_credentials_is_a_clear_message_without_traceback(tmp_path):
    """No ADC file, no gcloud config, the metadata server check off: the user is told how to log in."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "CLOUDSDK_", "GCE_"))},
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "CLOUDSDK_CONFIG": str(tmp_path / "gcloud"),
        "NO_GCE_CHECK": "true",
        "GCE_METADATA_IP": "127.0.0.1:9",
    }
    result = subprocess.run(
        [sys.executable, "-m", "tritonfleet", "preflight", "--stack", "gcp-prod"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert "no Google Cloud credentials found" in one_line(result.stderr) and "gcloud auth application-default login" in one_line(result.stderr)
    assert "Traceback" not in result.stderr and "DefaultCredentialsError" not in result.stderr
    assert "Warning" not in result.stderr  # google.api_core's Python-version notice is not the user's business


def _pool_reservation(reservation_id: str):
    data = decoded("gcp-prod")
    data["gpuPools"][1]["reservationId"] = reservation_id
    return load_stack_config(encoded(data), "gcp-prod")


def _reservation_finding(config, found, blocks=None):
    gcp = clients(reservations={"us-central1-b": found})
    gcp = GcpClients(**{**gcp.__dict__, "reservation_blocks": blocks})
    [finding] = [f for f in run_preflight(config, gcp).findings if f.check == "reservation"]
    return finding, gcp


def test_a_shared_reservation_is_read_in_its_owner_project_and_must_be_shared_with_the_stacks():
    config = _pool_reservation("projects/acme-capacity/reservations/h200-serving")
    unshared, gcp = _reservation_finding(config, reservation())
    assert gcp.reservations.calls[0]["project"] == "acme-capacity"
    assert unshared.status == "blocker" and "--add-share-with acme-ml-prod" in unshared.detail
    shared = reservation()
    shared.share_settings = compute_v1.ShareSettings(
        share_type="SPECIFIC_PROJECTS", project_map={"acme-ml-prod": compute_v1.ShareSettingsProjectConfig(project_id="acme-ml-prod")}
    )
    finding, _ = _reservation_finding(config, shared)
    assert finding.status == "ok"


def test_a_reservation_others_may_consume_is_a_warning():
    loose = reservation()
    loose.specific_reservation_required = False
    finding, _ = _reservation_finding(prod(), loose)
    assert finding.status == "warning" and "specificReservationRequired false" in finding.detail


class _Blocks:
    def __init__(self, block=None):
        self.block = block

    def get(self, **request):
        if self.block is None:
            raise NotFound(f"block {request['reservation_block']} not found")
        return compute_v1.ReservationBlocksGetResponse(resource=self.block)


def test_a_reservation_block_is_read_for_its_own_room():
    config = _pool_reservation("h200-serving/reservationBlocks/block-1")
    roomy = compute_v1.ReservationBlock(name="block-1", count=4, in_use_count=1)
    finding, _ = _reservation_finding(config, reservation(count=10, in_use=10), _Blocks(roomy))
    assert finding.status == "ok" and finding.data["blockCount"] == 4 and "3 of 4" in finding.detail
    missing, _ = _reservation_finding(config, reservation(), _Blocks())
    assert missing.status == "blocker" and "has no block block-1" in missing.detail
    unasked, _ = _reservation_finding(config, reservation(), None)
    assert unasked.status == "unknown"
