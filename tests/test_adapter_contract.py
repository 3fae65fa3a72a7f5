"""The cloud-adapter contract (components/contract.py): the registry, the shared bucket and identity requests, and the
component conventions every adapter follows (type token = class name, one-line docstring, documented args)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from components.contract import BucketRequest, IdentityRequest, bucket_requests, identity_requests
from tests.conftest import ROOT, engine_config
from tritonfleet.core.config import StackConfig, load_stack_config

COMPONENTS = ROOT / "components"


def config_with(stack: str, **overrides) -> StackConfig:
    raw = engine_config(stack)
    raw.update({f"tritonfleet:{key}": json.dumps(value) for key, value in overrides.items()})
    return load_stack_config(raw, stack)


# --- the registry ---------------------------------------------------------------------------------------------------


def test_every_registered_cloud_names_its_adapter_in_its_own_package():
    """One registry (tritonfleet/core/cloud.py): each Cloud names its Pulumi adapter, components/<cloud>/cloud.py."""
    from tritonfleet.core.cloud import cloud, cloud_names

    assert {name: cloud(name).adapter for name in cloud_names()} == {
        "aws": "components.aws.cloud:AwsCloud",
        "gcp": "components.gcp.cloud:GcpCloud",
    }


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_a_registered_adapter_implements_the_contract_for_its_cloud(cloud):
    from components.contract import CloudAdapter
    from components.platform import adapter_class

    adapter = adapter_class(cloud)
    assert issubclass(adapter, CloudAdapter) and not getattr(adapter, "__abstractmethods__", None)
    assert adapter.cloud == cloud
    assert adapter.__module__ == f"components.{cloud}.cloud", "an adapter lives in its cloud's package"


def test_an_unknown_cloud_has_no_adapter():
    from components.platform import adapter_class

    with pytest.raises(ValueError, match="unknown cloud 'azure'; known: aws, gcp"):
        adapter_class("azure")


# --- what every cloud builds the same way ----------------------------------------------------------------------------


def test_bucket_requests_carry_each_buckets_physical_name_key_and_protection():
    config = config_with(
        "prod",
        modelBuckets=[
            {"name": "models", "noncurrentVersionDays": 90},
            {"name": "vision", "bucketName": "acme-vision-models", "kmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/abcd"},
        ],
    )
    assert bucket_requests(config) == [
        BucketRequest("models", "tf-prod-models-123456789012-us-east-1", 90, None, True, config.tags),
        BucketRequest("vision", "acme-vision-models", 30, "arn:aws:kms:us-east-1:123456789012:key/abcd", True, config.tags),
    ]


def test_identity_requests_name_the_bucket_prefix_key_and_service_account_of_each_deployment():
    deployments = json.loads(engine_config("prod")["tritonfleet:tritonDeployments"])
    deployments[1]["bucket"] = "vision"
    deployments[1]["namespace"] = "cv"
    config = config_with(
        "prod",
        modelBuckets=[
            {"name": "models"},
            {"name": "vision", "kmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/abcd"},
        ],
        tritonDeployments=deployments,
    )
    assert identity_requests(config) == [
        IdentityRequest("llm", "triton", "triton-llm", "models", "llm/", None),
        IdentityRequest("vision", "cv", "triton-vision", "vision", "vision/", "arn:aws:kms:us-east-1:123456789012:key/abcd"),
    ]


def test_a_stack_without_deployments_asks_for_no_identities(stack_config):
    config = stack_config("gcp-dev").model_copy(update={"triton_deployments": []})
    assert identity_requests(config) == []
    assert [r.name for r in bucket_requests(config)] == ["models"]


# --- component conventions, read from the source --------------------------------------------------------------------


def component_classes() -> list[tuple[Path, ast.ClassDef]]:
    """Every class under components/ that is a ComponentResource or a CloudAdapter."""
    found = []
    for path in sorted(COMPONENTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                "ComponentResource" in ast.unparse(base) or ast.unparse(base).startswith("CloudAdapter[") for base in node.bases
            ):
                found.append((path, node))
    return found


def area_of(path: Path) -> str:
    """aws, gcp, k8s for components/<area>/x.py; the module name (platform) for components/x.py."""
    relative = path.relative_to(COMPONENTS)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def type_token(node: ast.ClassDef) -> str | None:
    """The literal token a class passes to super().__init__, if it passes one."""
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "__init__"
            and isinstance(call.func.value, ast.Call)
            and ast.unparse(call.func.value.func) == "super"
            and call.args
            and isinstance(call.args[0], ast.Constant)
        ):
            return call.args[0].value
    return None


def test_the_source_has_the_components_we_expect():
    names = {node.name for _, node in component_classes()}
    assert {"Platform", "AwsCloud", "GcpCloud", "EksCluster", "Network", "GpuNodePools", "TritonRelease"} <= names


@pytest.mark.parametrize("path, node", component_classes(), ids=lambda v: getattr(v, "name", ""))
def test_a_component_has_a_docstring_a_matching_type_token_and_registers_outputs(path, node):
    area = area_of(path)
    assert ast.get_docstring(node), f"{node.name} needs a one-line docstring"
    if node.name == "CloudAdapter":
        return
    if any(ast.unparse(base).startswith("CloudAdapter[") for base in node.bases):
        # The contract's constructor builds the token from `cloud` and the class name, and registers the outputs.
        cloud = next(
            stmt.value.value
            for stmt in node.body
            if isinstance(stmt, ast.Assign) and [ast.unparse(t) for t in stmt.targets] == ["cloud"]
        )
        assert cloud == area, f"{node.name} serves cloud {cloud!r} but lives in components/{area}/"
        return
    assert type_token(node) == f"tritonfleet:{area}:{node.name}"
    assert "register_outputs" in ast.unparse(node), f"{node.name} must register its outputs"


def args_classes() -> list[tuple[Path, ast.ClassDef]]:
    return [
        (path, node)
        for path in sorted(COMPONENTS.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef) and node.name.endswith("Args")
    ]


@pytest.mark.parametrize("path, node", args_classes(), ids=lambda v: getattr(v, "name", ""))
def test_every_component_argument_is_documented(path, node):
    assert ast.get_docstring(node), f"{node.name} needs a docstring"
    body = node.body
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.AnnAssign):
            following = body[i + 1] if i + 1 < len(body) else None
            documented = isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
            assert documented, f"{node.name}.{ast.unparse(stmt.target)} needs a docstring line after it"


def test_no_component_outside_an_adapter_branches_on_the_cloud():
    for path in COMPONENTS.rglob("*.py"):
        if area_of(path) in ("aws", "gcp"):
            continue
        source = path.read_text()
        assert "cloud ==" not in source and 'cloud != "' not in source, f"{path} branches on the cloud"


def test_the_architecture_doc_names_only_files_that_exist():
    """docs/architecture.md is written from the code: every repository path it names in backticks exists."""
    import re

    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:components|tritonfleet|tests|policies|stacks|docs)/[A-Za-z0-9_./<>-]+)`", text))
    missing = sorted(path for path in named if "<" not in path and "azure" not in path and not (ROOT / path.rstrip("/")).exists())
    assert named and not missing, missing
