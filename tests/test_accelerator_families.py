"""Every accelerator the stack can start is seen: the families that carry accelerators on each cloud, and the config
rule that keeps them out of the system node pool (where no GPU pool, budget or GPU limit would count them)."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from tritonfleet.core.cloud import cloud as cloud_named
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.plan.project import engine_string

AWS_ACCELERATED = [
    "p3.2xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
    "p6-b200.48xlarge", "p6-b300.48xlarge", "p6e-gb200.36xlarge", "g4dn.xlarge", "g4ad.xlarge", "g5.xlarge",
    "g5g.xlarge", "g6.xlarge", "g6e.xlarge", "g6f.large", "gr6.8xlarge", "gr6f.4xlarge", "g7e.2xlarge",
    "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "inf1.xlarge", "inf2.48xlarge", "dl1.24xlarge",
    "dl2q.24xlarge", "vt1.3xlarge", "f1.2xlarge", "f2.12xlarge",
    "p7.48xlarge", "g8e.xlarge", "trn3.48xlarge", "inf3.xlarge",  # later generations, same naming
]
AWS_CPU = ["m6i.xlarge", "c7g.large", "r8g.2xlarge", "t3.medium", "i4i.large", "d3en.xlarge", "x2idn.16xlarge",
           "hpc7g.16xlarge", "m7i-flex.large", "im4gn.large", "u-6tb1.metal", "mac2.metal", "z1d.large", "a1.large"]
GCP_ACCELERATED = [
    "a2-highgpu-1g", "a2-ultragpu-8g", "a3-highgpu-8g", "a3-megagpu-8g", "a3-edgegpu-8g", "a3-ultragpu-8g",
    "a4-highgpu-8g", "a4x-highgpu-4g", "g2-standard-8", "g4-standard-48", "ct4p-hightpu-4t", "ct5lp-hightpu-4t",
    "ct5p-hightpu-4t", "ct6e-standard-4t", "tpu7x-standard-4t", "a5-highgpu-8g", "ct7-standard-4t",
]
GCP_CPU = ["e2-standard-4", "n1-standard-8", "n2-standard-8", "n2d-standard-8", "c3-standard-8", "c4a-standard-8",
           "t2d-standard-4", "m3-ultramem-32", "h3-standard-88", "z3-highmem-88", "g1-small", "f1-micro"]


@pytest.mark.parametrize(("cloud", "name"), [("aws", t) for t in AWS_ACCELERATED] + [("gcp", t) for t in GCP_ACCELERATED])
def test_accelerated_types_are_recognised(cloud, name):
    assert cloud_named(cloud).accelerator(name)


@pytest.mark.parametrize(("cloud", "name"), [("aws", t) for t in AWS_CPU] + [("gcp", t) for t in GCP_CPU])
def test_cpu_types_are_not(cloud, name):
    assert cloud_named(cloud).accelerator(name) is None


def test_every_listed_family_follows_the_naming_that_catches_later_ones():
    """The pattern is what catches a generation the list lacks: it must cover the whole list it stands for."""
    aws, gcp = cloud_named("aws").module("accelerators"), cloud_named("gcp").module("accelerators")
    assert all(aws.FAMILY_PATTERN.match(f) for f in aws.ACCELERATED_FAMILIES)
    assert all(gcp.SERIES_PATTERN.match(s) for s in gcp.ACCELERATED_SERIES)
    assert aws.SOURCE.startswith("https://") and "2026-12-05" in aws.SOURCE
    assert gcp.SOURCE.startswith("https://") and "2026-12-05" in gcp.SOURCE


def test_tpu_series_are_told_from_gpu_ones():
    tpu = cloud_named("gcp").module("accelerators").tpu
    assert tpu("ct5lp-hightpu-4t") and tpu("tpu7x-standard-4t") and tpu("ct6e-standard-4t")
    assert not tpu("a3-ultragpu-8g") and not tpu("g2-standard-8") and not tpu("n1-standard-8")


def test_every_catalogued_gpu_type_is_an_accelerated_one():
    from tritonfleet.core.catalog import load_catalog

    for entry in load_catalog().instance_types:
        assert cloud_named(entry.cloud).accelerator(entry.name), entry.name


def _stack(name: str) -> dict:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text())


def _load(doc: dict, stack: str):
    return load_stack_config({k: engine_string(v) for k, v in doc["config"].items()}, stack)


def _with_system_type(stack: str, instance_type: str) -> dict:
    doc = _stack(stack)
    cluster = doc["config"].setdefault("tritonfleet:cluster", {})
    cluster["systemNodes"] = {**cluster.get("systemNodes", {}), "instanceType": instance_type}
    return doc


@pytest.mark.parametrize(
    ("stack", "instance_type", "carries"),
    [
        ("prod", "gr6.8xlarge", "NVIDIA L4"),
        ("prod", "trn2.48xlarge", "AWS Trainium2"),
        ("prod", "p6-b200.48xlarge", "NVIDIA B200"),
        ("dev", "inf2.xlarge", "AWS Inferentia2"),
        ("gcp-prod", "a3-ultragpu-8g", "NVIDIA H100 or H200"),
        ("gcp-prod", "ct6e-standard-4t", "Cloud TPU v6e"),
    ],
)
def test_system_nodes_refuse_accelerated_types(stack, instance_type, carries):
    with pytest.raises(ConfigError) as error:
        _load(_with_system_type(stack, instance_type), stack)
    [problem] = [p for p in error.value.problems if p.key == "cluster.systemNodes.instanceType"]
    assert problem.value == instance_type and carries in problem.allowed and "not counted" in problem.allowed
    assert problem.fix == f"pulumi config rm --path 'tritonfleet:cluster.systemNodes.instanceType' --stack {stack}"


@pytest.mark.parametrize(("stack", "instance_type"), [("prod", "m7i.2xlarge"), ("gcp-prod", "n2-standard-8")])
def test_system_nodes_take_cpu_types(stack, instance_type):
    config = _load(_with_system_type(stack, instance_type), stack)
    assert config.cluster.system_nodes.instance_type == instance_type
