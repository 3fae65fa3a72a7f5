"""The cloud registry and the layering: every registered cloud keeps the config-rules contract, its facts carry a
source and a date, clouds/ stays pure (no Pulumi, no components at load), and core never loads clouds at import."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import typing

import pytest
from conftest import ROOT

from tritonfleet.core.cloud import Cloud, cloud, cloud_names
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.config.rules.context import CloudConfigRules

CORE_MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for p in (ROOT / "tritonfleet" / "core").rglob("*.py")
)
CLOUD_MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for p in (ROOT / "tritonfleet" / "clouds").rglob("*.py")
)


CLOUDS = cloud_names()


def test_the_schema_offers_exactly_the_registered_clouds():
    from tritonfleet.core.config import ConfigError

    with pytest.raises(ConfigError) as refused:
        load_stack_config({"tritonfleet:environment": "dev", "tritonfleet:cloud": "azure"}, "dev")
    assert " or ".join(CLOUDS) in str(refused.value)


@pytest.mark.parametrize("name", CLOUDS)
def test_each_cloud_object_is_registered_under_its_name_in_its_own_package(name):
    found = cloud(name)
    assert isinstance(found, Cloud) and found.name == name
    assert found.package == f"tritonfleet.clouds.{name}" and type(found).__module__ == f"tritonfleet.clouds.{name}.cloud"
    assert found.adapter.startswith(f"components.{name}.")


@pytest.mark.parametrize("cloud_name", CLOUDS)
def test_each_cloud_keeps_the_config_rules_contract(cloud_name):
    rules = cloud(cloud_name).rules
    for name in typing.get_type_hints(CloudConfigRules, include_extras=False):
        assert hasattr(rules, name), f"clouds/{cloud_name}/config_rules.py lacks {name}"
    for name, member in inspect.getmembers(CloudConfigRules, inspect.isfunction):
        if name.startswith("_"):
            continue
        function = getattr(rules, name, None)
        assert callable(function), f"clouds/{cloud_name}/config_rules.py lacks {name}()"
        expected = [p for p in inspect.signature(member).parameters if p != "self"]
        assert list(inspect.signature(function).parameters) == expected, name
    assert rules.NODE_IMAGES and rules.TLS_SOURCES


def test_an_unknown_cloud_is_refused_by_the_registry():
    with pytest.raises(ValueError, match="unknown cloud 'azure'"):
        cloud("azure")


@pytest.mark.parametrize("name", CLOUDS)
def test_every_cloud_fact_names_its_source_and_date(name):
    """Each constant in a facts module has a comment right above it with a URL and a year (or says it is our choice)."""
    path = ROOT / "tritonfleet" / "clouds" / name / "facts.py"
    lines = path.read_text().splitlines()
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        node_name = (node.targets[0] if isinstance(node, ast.Assign) else node.target).id  # type: ignore[union-attr]
        comment, row = [], node.lineno - 2
        while row >= 0 and lines[row].startswith("#"):
            comment.insert(0, lines[row])
            row -= 1
        text = " ".join(comment)
        assert "tritonfleet's choice" in text or ("http" in text and re.search(r"20\d\d", text)), f"{name} {node_name}"


def test_no_second_copy_of_a_taint_spelling():
    assert cloud("gcp").facts.GKE_TAINT_EFFECT is not cloud("aws").facts.EKS_TAINT_EFFECT


def _loaded_after_import(modules: list[str]) -> set[str]:
    code = f"import sys\nfor m in {modules!r}: __import__(m)\nprint(' '.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def test_core_never_loads_clouds_or_pulumi_at_import():
    loaded = _loaded_after_import(CORE_MODULES)
    assert not {m for m in loaded if m.startswith(("tritonfleet.clouds", "pulumi", "components"))}


def test_clouds_are_pure():
    loaded = _loaded_after_import(CLOUD_MODULES)
    assert not {m for m in loaded if m.startswith(("pulumi", "components"))}


def test_region_tables_are_sourced_and_distinct():
    """AWS regions are botocore's commercial partition (the table's source); GCP's are GCP-shaped; no name is both."""
    import json
    from pathlib import Path

    import botocore

    from tritonfleet.clouds.aws.facts import AWS_REGIONS
    from tritonfleet.clouds.gcp.facts import GCP_REGIONS

    endpoints = json.loads((Path(botocore.__file__).parent / "data" / "endpoints.json").read_text())
    aws_partition = next(p for p in endpoints["partitions"] if p["partition"] == "aws")
    assert set(AWS_REGIONS) <= set(aws_partition["regions"])
    assert {"us-east-1", "us-west-2", "eu-west-1"} <= set(AWS_REGIONS)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)+\d+", r) for r in GCP_REGIONS) and "us-central1" in GCP_REGIONS
    assert not set(AWS_REGIONS) & set(GCP_REGIONS)


# A provider type token of a registered cloud: `aws:eks/cluster:Cluster`, `pulumi:providers:gcp`.
PROVIDER_TOKEN = re.compile(rf"(?<![\w:])({'|'.join(CLOUDS)}):\w|pulumi:providers:({'|'.join(CLOUDS)})\b")
# Neutral code that reads planned resources: it asks the registered clouds (Cloud.gpu_pool, replacement_watched...).
# Policy rules named after their cloud (aws_*, s3_*, eks_*, gke_*, gcp_*, gcs_*) may import their cloud's tokens.
CLOUD_RULE_PREFIXES = ("aws_", "s3_", "eks_", "gke_", "gcp_", "gcs_")


def _spelled_tokens(source: str) -> list[str]:
    """The provider tokens among a module's string constants (docstrings and f-string parts included)."""
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and PROVIDER_TOKEN.search(node.value)
    ]


def _neutral_readers_of_planned_resources() -> list:
    found = [*(ROOT / "tritonfleet" / "plan").rglob("*.py"), *(ROOT / "tritonfleet" / "diff").rglob("*.py")]
    found += [ROOT / "tritonfleet" / "core" / "planned.py", ROOT / "tritonfleet" / "core" / "network_policy.py"]
    found += [p for p in (ROOT / "policies").rglob("*.py") if not p.name.startswith(CLOUD_RULE_PREFIXES)]
    return sorted(found)


def test_the_token_scan_finds_provider_tokens_and_only_them():
    assert _spelled_tokens('T = "aws:eks/cluster:Cluster"\nP = ("pulumi:providers:gcp",)\nf"{x}gcp:storage/b:B"') == [
        "aws:eks/cluster:Cluster", "pulumi:providers:gcp", "gcp:storage/b:B"
    ]
    assert not _spelled_tokens('A = "kubernetes:apps/v1:Deployment"\nB = "s3://bucket"\nC = "AWS: EKS"\nD = "gs://b"')


def test_neutral_readers_of_planned_resources_spell_no_provider_token():
    """policies/ (but cloud-prefixed rules), tritonfleet/plan/ and tritonfleet/diff/ ask `cloud(name)` for resource
    types: a token spelled there is cloud knowledge outside its cloud's folder."""
    modules = _neutral_readers_of_planned_resources()
    assert len(modules) > 30
    spelled = {str(p.relative_to(ROOT)): tokens for p in modules if (tokens := _spelled_tokens(p.read_text()))}
    assert spelled == {}


def test_neutral_readers_of_planned_resources_import_no_cloud_package():
    modules = [p for p in _neutral_readers_of_planned_resources() if p.parent.name != "rules"]
    imported = {
        str(p.relative_to(ROOT)): node.module
        for p in modules
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tritonfleet.clouds")
    }
    assert imported == {}


@pytest.mark.parametrize("name", CLOUDS)
def test_each_cloud_reads_only_its_own_planned_resources(name):
    """Neutral code asks every registered cloud in turn: each answers None for the others' resource types."""
    own, others = cloud(name), [cloud(n) for n in CLOUDS if n != name]
    for other in others:
        for typ in [*other.replacement_watched, *other.protected_types, other.provider_type]:
            assert typ not in own.replacement_watched and typ not in own.protected_types
            assert own.offline_outputs(typ, "x", {}) is None
            gpu_props = {"nodeConfig": {"machineType": "a3-highgpu-8g"}, "instanceTypes": ["p5.48xlarge"]}
            assert own.gpu_pool(typ, gpu_props, "u", "x") is None
            assert own.platform_line(typ, {}, "x", "u", "us-east-1") is None
            assert own.cluster_enforcement(typ, "x", {}, []) is None
            assert own.floor_nodes(typ, {"metadata": {"annotations": {"tritonfleet.io/floor-nodes": "1"}}}, "x") is None
            assert own.deletion_protection_off(typ, "x", {"deletionProtection": False}) is None
    assert all(key[0] in own.replacement_watched for key in [*own.replacement_explained, *own.prod_acknowledgements])
def _first_party_imports(folder) -> dict[str, set[str]]:
    """file -> the tritonfleet/components/policies modules it imports (at load or inside a function), read from the
    source, so nothing is imported to find out."""
    found: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[path.relative_to(ROOT).as_posix()] = {n for n in names if n.split(".")[0] in ("tritonfleet", "components", "policies")}
    return found


def _outside(imports: dict[str, set[str]], allowed: tuple[str, ...]) -> list[str]:
    return [f"{path}: {name}" for path, names in imports.items() for name in sorted(names)
            if not any(name == a or name.startswith(f"{a}.") for a in allowed)]


# The bounded-call helper the preflights share with the CLI (stdlib only).
SHARED_WITH_CLOUDS = ("tritonfleet.deadline",)


@pytest.mark.parametrize("name", CLOUDS)
def test_a_cloud_package_imports_only_the_core_and_itself(name):
    """All of a cloud's pure knowledge is in one package: it never reaches into components/ (the Pulumi side imports
    it, never the reverse) nor into another cloud."""
    imports = _first_party_imports(ROOT / "tritonfleet" / "clouds" / name)
    assert not _outside(imports, ("tritonfleet.core", f"tritonfleet.clouds.{name}", *SHARED_WITH_CLOUDS))


@pytest.mark.parametrize("name", CLOUDS)
def test_a_cloud_adapter_imports_no_other_cloud(name):
    others = tuple(p for other in CLOUDS if other != name for p in (f"tritonfleet.clouds.{other}", f"components.{other}"))
    imports = _first_party_imports(ROOT / "components" / name)
    assert [f"{path}: {n}" for path, names in imports.items() for n in names if n.startswith(others)] == []


def test_the_kubernetes_layer_imports_no_cloud_package():
    """components/k8s/ learns about a cloud from ClusterFacts or from the registry (core/cloud.py), never by name."""
    clouds = ("tritonfleet.clouds", *(f"components.{name}" for name in CLOUDS))
    imports = _first_party_imports(ROOT / "components" / "k8s")
    assert [f"{path}: {n}" for path, names in imports.items() for n in names if n.startswith(clouds)] == []


@pytest.mark.parametrize("name", CLOUDS)
def test_a_clouds_exposure_answers_agree_with_its_facts(name):
    """The access matrix's answers: the object store's planned addresses and the default load balancer subnets are
    egress the cloud's exposure facts allow."""
    found = cloud(name)
    allowed = {rule.cidr for rule in found.exposure_facts().egress}
    assert found.object_store_cidrs() and set(found.object_store_cidrs()) <= allowed
    assert set(found.load_balancer_cidrs()) <= allowed


def test_the_aws_planned_addresses_are_the_layouts_and_the_offline_plans():
    from tritonfleet.clouds.aws.layout import subnet_layout
    from tritonfleet.clouds.aws.resources import OFFLINE_CALLS

    aws = cloud("aws")
    assert aws.load_balancer_cidrs() == tuple(plan.public_cidr for plan in subnet_layout(["a", "b"]))
    assert aws.object_store_cidrs() == tuple(OFFLINE_CALLS["aws:ec2/getPrefixList:getPrefixList"]["cidrBlocks"])
    assert aws.exposure_facts(("10.9.0.0/24",)).load_balancer_sources["public"] == ("10.9.0.0/24",)


def test_a_repository_uri_names_the_scheme_of_a_registered_cloud():
    from tritonfleet.core.object_store import RepositoryUri, StoreError

    for name in CLOUDS:
        scheme = cloud(name).uri_scheme
        assert str(RepositoryUri.parse(f"{scheme}://models-bucket/llm")) == f"{scheme}://models-bucket/llm/"
    with pytest.raises(StoreError, match=r"is not a bucket URI: use s3://BUCKET\[/PREFIX\] or gs://BUCKET\[/PREFIX\]$"):
        RepositoryUri.parse("az://models-bucket")


@pytest.mark.parametrize("name", CLOUDS)
def test_open_store_opens_the_store_of_the_cloud_whose_scheme_the_uri_has(name, monkeypatch):
    """Each cloud's store lives in its own package (storage.py); the SDK is not asked here (a stand-in class)."""
    from tritonfleet.core.object_store import RepositoryUri, open_store

    store_class = {"aws": "S3Store", "gcp": "GcsStore"}[name]
    monkeypatch.setattr(f"tritonfleet.clouds.{name}.storage.{store_class}", lambda uri: ("opened", uri))
    uri = RepositoryUri(cloud(name).uri_scheme, "models-bucket", "llm/")
    assert open_store(uri) == ("opened", uri)
