"""Per-type GPU facts live in one place: the catalog's columns (host: CPU architecture and local SSDs) and one table
per cloud that every catalog row must have a row in (Cloud.type_facts_missing). A new instance type that lacks one
fails here, never reads as 0 GB of NVMe or an unknown quota in a plan. (AWS host facts are checked against EC2's own
figures with the network ones, tests/test_catalog_cost.py.)"""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources

import pytest
import yaml
from pydantic import ValidationError

from tritonfleet.core.catalog import FAST_SAFE_LOADER, Catalog, load_catalog
from tritonfleet.core.cloud import cloud, cloud_names

ROWS = load_catalog().instance_types


@cache
def _shipped_data() -> dict:
    return yaml.load(resources.files("tritonfleet.core").joinpath("catalog.yaml").read_text(), Loader=FAST_SAFE_LOADER)  # noqa: S506


def _catalog_data() -> dict:
    """The shipped catalog's data, a copy each test may change."""
    return copy.deepcopy(_shipped_data())


def _row(data: dict, name: str) -> dict:
    return next(row for row in data["instanceTypes"] if row["name"] == name)


@pytest.mark.parametrize("itype", ROWS, ids=[f"{t.cloud}/{t.name}" for t in ROWS])
def test_every_catalog_row_has_its_clouds_per_type_facts(itype):
    assert cloud(itype.cloud).type_facts_missing(itype) == []


def test_every_catalog_row_is_of_a_registered_cloud_and_names_a_host_source():
    catalog = load_catalog()
    assert {t.cloud for t in catalog.instance_types} == set(cloud_names())
    assert all(t.host.source in catalog.sources for t in catalog.instance_types)
    assert all(t.host.arch in cloud(t.cloud).gpu_node_architectures for t in catalog.instance_types)


@pytest.mark.parametrize("drop", ["host", "host.arch", "host.localSsd", "host.source"])
def test_a_row_without_its_host_facts_is_refused(drop):
    """No default: a new row that forgets its architecture or local SSDs fails to load (localSsd: null says none)."""
    data = _catalog_data()
    row = _row(data, "g6e.xlarge")
    section, _, key = drop.partition(".")
    del (row[section] if key else row)[key or section]
    with pytest.raises(ValidationError, match=r"host"):
        Catalog.model_validate(data)


@pytest.mark.parametrize(
    ("local_ssd", "error"),
    [
        ({"disks": 1}, "either gb or gib"),
        ({"disks": 1, "gb": 250, "gib": 232}, "either gb or gib"),
        ({"disks": 0, "gb": 250}, "greater than 0"),
    ],
)
def test_a_local_ssd_has_one_size_in_its_sources_unit(local_ssd, error):
    data = _catalog_data()
    _row(data, "g6e.xlarge")["host"]["localSsd"] = local_ssd
    with pytest.raises(ValidationError, match=error):
        Catalog.model_validate(data)


def test_an_unknown_architecture_cloud_or_host_source_is_refused():
    for change, error in (
        (lambda row: row["host"].update(arch="aarch64"), "x86_64"),
        (lambda row: row["host"].update(source="NOPE"), "unknown source NOPE"),
        (lambda row: row.update(cloud="azure"), "unknown cloud 'azure'"),
    ):
        data = _catalog_data()
        change(_row(data, "g6e.xlarge"))
        with pytest.raises(ValidationError, match=error):
            Catalog.model_validate(data)


def test_whether_a_row_names_its_accelerator_is_the_clouds_answer():
    assert cloud("gcp").machine_types_name_their_accelerator and not cloud("aws").machine_types_name_their_accelerator
    data = _catalog_data()
    del _row(data, "g2-standard-8")["accelerator"]
    with pytest.raises(ValidationError, match="g2-standard-8: gcp machine types need their accelerator type"):
        Catalog.model_validate(data)


def test_gcp_local_ssds_are_whole_375_gib_disks():
    for itype in (t for t in ROWS if t.cloud == "gcp" and t.host.local_ssd):
        assert itype.host.local_ssd.gib == itype.host.local_ssd.disks * 375, itype.name


def test_a_missing_aws_quota_row_is_named():
    p5 = load_catalog().find("aws", "p5.48xlarge")
    new = p5.model_copy(update={"name": "p7.48xlarge"})
    assert cloud("aws").type_facts_missing(new) == [
        "EC2_VCPU_QUOTAS: no on-demand vCPU quota for p7.48xlarge's family",
        "EC2_VCPU_QUOTAS: no spot vCPU quota for p7.48xlarge's family",
    ]
    sold_as_blocks = new.model_copy(update={"purchase_options": ("capacity-block",)})
    assert cloud("aws").type_facts_missing(sold_as_blocks) == []  # reserved capacity draws on no vCPU quota


def test_missing_gcp_rows_are_named():
    a4 = load_catalog().find("gcp", "a4-highgpu-8g")
    new = a4.model_copy(update={"name": "a5-highgpu-8g", "gpu": "B300"})
    assert cloud("gcp").type_facts_missing(new) == [
        "BOOT_DISK_TYPES: no row for a5-highgpu-8g",
        "MACHINE_TYPE_ZONES['us-central1']: no row for a5-highgpu-8g",
        "GPU_QUOTA_METRICS: no preemptible metric for B300",
    ]
