"""An instance type whose CPU architecture the cloud's GPU node images are not built for (an arm64 GB200 host: AWS
p6e-gb200, GCP a4x) is refused by config validation, with the usual one-message form, never planned with x86_64
images. The shipped catalog has no arm64 row yet, so these tests add one to a copy of it."""

from __future__ import annotations

import pytest
from test_catalog_facts import _catalog_data
from test_config import _dev, _load, _pool

from tritonfleet.core.catalog import Catalog
from tritonfleet.core.config import ConfigError

# Hypothetical rows, shaped as the catalog would hold them (facts not sourced: test data only).
GB200_GPU = {"memoryGb": 186, "vendorName": "NVIDIA GB200"}
ARM64_HOST = {"arch": "arm64", "localSsd": None, "source": "MOTOHOST"}
GB200_ROW = {
    "cloud": "aws", "name": "p6e-gb200.36xlarge", "gpu": "GB200", "gpuCount": 4, "vcpu": 144, "memoryGib": 960,
    "host": ARM64_HOST, "default": True, "purchaseOptions": ["capacity-block"], "prices": {},
}
# An arm64 type of a GPU that also has x86_64 types: the fix is one of those.
ARM64_L40S_ROW = {
    "cloud": "aws", "name": "g6eg.xlarge", "gpu": "L40S", "gpuCount": 1, "vcpu": 4, "memoryGib": 32,
    "host": ARM64_HOST, "purchaseOptions": ["on-demand", "spot"],
    "prices": {"on-demand": {"usd": 1.9, "source": "SKY7", "regions": ["us-east-1"]},
               "spot": {"usd": 0.9, "source": "SKY7", "regions": ["us-east-1"]}},
}


@pytest.fixture
def arm64_catalog(monkeypatch):
    """The shipped catalog with the rows above, as every module's load_catalog() answers during the test."""
    from tritonfleet.core import catalog as catalog_module

    data = _catalog_data()
    data["gpus"]["GB200"] = GB200_GPU
    data["instanceTypes"] += [GB200_ROW, ARM64_L40S_ROW]
    catalog = Catalog.model_validate(data)
    catalog_module.load_catalog.cache_clear()
    monkeypatch.setattr(catalog_module, "parse_catalog", lambda text: catalog)
    yield catalog
    monkeypatch.undo()
    catalog_module.load_catalog.cache_clear()


def _problem(doc: dict, key: str):
    """The problem reported for `key`, and the error it came in."""
    with pytest.raises(ConfigError) as caught:
        _load(doc)
    return next(p for p in caught.value.problems if p.key == key), caught.value


def test_an_arm64_type_of_a_gpu_with_x86_types_is_refused_for_one_of_them(arm64_catalog):
    doc = _dev()
    _pool(doc, instanceType="g6eg.xlarge")
    problem, message = _problem(doc, "gpuPools[0].instanceType")
    assert problem.value == "g6eg.xlarge"
    assert "g6eg.xlarge is arm64; tritonfleet's GPU nodes on aws are x86_64" in problem.allowed
    assert "g6e.xlarge" in problem.allowed and "g6eg" not in problem.allowed.split(": ", 1)[1]
    assert problem.fix == "pulumi config set --path 'tritonfleet:gpuPools[0].instanceType' g6e.xlarge --stack dev"
    assert problem.fix in str(message)


def test_a_gpu_sold_only_on_arm64_hosts_is_refused_for_another_gpu(arm64_catalog):
    doc = _dev()
    _pool(doc, gpu="GB200", instanceType=None, spotShare=0, onDemandFallback=None)
    problem, error = _problem(doc, "gpuPools[0].gpu")
    assert problem.value == "GB200"
    assert problem.allowed.startswith("a GPU with a x86_64 instance type on aws (p6e-gb200.36xlarge is arm64")
    assert "B200" in problem.allowed and "GB200" not in problem.allowed.split(": ", 1)[1]
    assert "pulumi config set --path 'tritonfleet:gpuPools[0].gpu'" in problem.fix and problem.fix in str(error)
    # Nothing else is said about the pool's capacity: its type is refused first.
    assert not [p for p in error.problems if p.key.startswith("gpuPools[0].capacity")]


def test_an_arm64_type_is_never_a_spot_diversity_type(arm64_catalog, monkeypatch):
    """Karpenter's burst NodePool takes other types of the pool's GPU: never one of another architecture."""
    from tritonfleet.clouds.aws.node_pools import diversified_types

    g6e = arm64_catalog.find("aws", "g6e.xlarge")
    assert "g6eg.xlarge" not in diversified_types(g6e, "us-east-1")
    # ... which it would be on price and size alone
    x86 = arm64_catalog.find("aws", "g6eg.xlarge").model_copy(update={"host": g6e.host})
    rows = tuple(x86 if t.name == x86.name else t for t in arm64_catalog.instance_types)
    monkeypatch.setattr("tritonfleet.clouds.aws.node_pools.load_catalog", lambda: arm64_catalog.model_copy(update={"instance_types": rows}))
    assert "g6eg.xlarge" in diversified_types(g6e, "us-east-1")


def test_an_arm64_type_is_never_a_size_option(arm64_catalog, stack_config):
    from tritonfleet.core.size_options import rank_options

    prod = stack_config("prod")
    vision = next(d for d in prod.triton_deployments if d.name == "vision")
    ranking = rank_options(prod, vision, None)
    assert not [o for o in ranking.ranked if o.instance_type == "g6eg.xlarge"]
    excluded = [o for o in ranking.excluded if o.instance_type == "g6eg.xlarge"]
    assert excluded and all("g6eg.xlarge is arm64; GPU nodes on aws are x86_64" in o.excluded for o in excluded)
