"""GKE-specific config rules: GPU driver modes, node labels, zones, and GPUs GCP does not offer."""

from __future__ import annotations

import pytest

from tests.gcp_helpers import decoded, load, problems
from tritonfleet.core.config import load_stack_config


def test_gcp_stacks_load_with_their_driver_modes():
    assert load(decoded("gcp-dev")).cluster.gke_gpu_driver == "operator"
    prod = load(decoded("gcp-prod"), "gcp-prod")
    assert (prod.cluster.gke_gpu_driver, prod.cluster.gke_gpu_node_image) == ("gke-managed", "COS_CONTAINERD")


def test_operator_defaults_to_ubuntu():
    data = decoded("gcp-dev")
    data["cluster"].pop("gpuNodeImage")
    assert load(data).cluster.gke_gpu_node_image == "UBUNTU_CONTAINERD"


def test_operator_drivers_on_cos_are_nvidias_google_installer_path():
    data = decoded("gcp-dev")
    data["cluster"]["gpuNodeImage"] = "COS_CONTAINERD"
    assert load(data).cluster.gke_gpu_node_image == "COS_CONTAINERD"


def test_device_plugin_label_while_gke_installs_the_driver_is_rejected():
    data = decoded("gcp-prod")
    data["gpuPools"][0]["nodeLabels"] = {"gke-no-default-nvidia-gpu-device-plugin": "true"}
    found, message = problems(data, "gcp-prod")
    assert [p.key for p in found] == ["gpuPools[0].nodeLabels"]
    assert "device plugin" in found[0].allowed and "gpuDriver operator (COS with Google's driver installer" in found[0].allowed
    assert "pulumi config rm --path 'tritonfleet:gpuPools[0].nodeLabels.gke-no-default-nvidia-gpu-device-plugin'" in message


def test_device_plugin_label_is_fine_in_operator_mode():
    data = decoded("gcp-dev")
    data["gpuPools"][0]["nodeLabels"] = {"gke-no-default-nvidia-gpu-device-plugin": "true", "team": "vision"}
    assert load(data).gpu_pools[0].node_labels["team"] == "vision"


@pytest.mark.parametrize("key", ["kubernetes.io/role", "node.k8s.io/x", "tritonfleet.io/pool"])
def test_reserved_label_keys_are_rejected(key):
    data = decoded("gcp-dev")
    data["gpuPools"][0]["nodeLabels"] = {key: "x"}
    found, _ = problems(data)
    assert found[0].key == "gpuPools[0].nodeLabels" and key in found[0].allowed


@pytest.mark.parametrize(
    ("key", "value"),
    [("gpuDriver", "nvidia"), ("gpuNodeImage", "UBUNTU"), ("releaseChannel", "LTS")],
)
def test_bad_gke_values_name_the_allowed_ones(key, value):
    data = decoded("gcp-dev")
    data["cluster"][key] = value
    found, message = problems(data)
    assert found[0].key == f"cluster.{key}" and found[0].value == value
    assert "GCP:" in found[0].allowed
    assert "pulumi config set --path" in message


@pytest.mark.parametrize(
    ("key", "value"), [("gpuDriver", "operator"), ("releaseChannel", "STABLE"), ("proxyOnlySubnetCidr", "10.10.16.0/23")]
)
def test_gke_only_keys_are_rejected_on_aws(key, value):
    aws = decoded("dev")
    aws["cluster"][key] = value
    found, message = problems(aws, "dev")
    assert [p.key for p in found] == [f"cluster.{key}"]
    assert "GKE only" in found[0].allowed and "pulumi config rm --path 'tritonfleet:cluster." in message


def test_a_proxy_only_range_of_the_users_choice_loads():
    data = decoded("gcp-dev")
    data["cluster"]["proxyOnlySubnetCidr"] = "10.30.0.0/23"
    assert load(data).cluster.proxy_only_subnet_cidr == "10.30.0.0/23"


@pytest.mark.parametrize(
    ("value", "text", "suggested"),
    [
        ("10.30.0.0/28", "/26 or larger", "10.30.0.0/23"),
        ("10.17.0.0/23", "outside the stack's pod range", "10.10.16.0/23"),
        ("10.10.8.0/23", "outside the stack's node range", "10.10.16.0/23"),
        ("10.30.0.1/23", "an IPv4 CIDR such as 10.10.16.0/23", "10.10.16.0/23"),
        ("proxies", "an IPv4 CIDR such as 10.10.16.0/23", "10.10.16.0/23"),
    ],
)
def test_a_bad_proxy_only_range_names_the_rule_and_a_fix(value, text, suggested):
    data = decoded("gcp-dev")
    data["cluster"]["proxyOnlySubnetCidr"] = value
    found, message = problems(data)
    (problem,) = [p for p in found if p.key == "cluster.proxyOnlySubnetCidr"]
    assert problem.value == value and text in problem.allowed
    assert f"pulumi config set --path 'tritonfleet:cluster.proxyOnlySubnetCidr' {suggested} --stack gcp-dev" in message


def test_a_gke_node_image_is_rejected_on_aws():
    aws = decoded("dev")
    aws["cluster"]["gpuNodeImage"] = "COS_CONTAINERD"
    found, message = problems(aws, "dev")
    assert [(p.key, p.allowed) for p in found] == [("cluster.gpuNodeImage", "on aws: al2023 or bottlerocket")]
    assert "pulumi config set --path 'tritonfleet:cluster.gpuNodeImage' al2023" in message


def test_pool_zones_must_be_in_the_region():
    data = decoded("gcp-prod")
    data["gpuPools"][1]["zones"] = ["europe-west4-b"]
    data["cluster"]["zones"] = ["us-central1-a", "us-east1-b"]
    found, _ = problems(data, "gcp-prod")
    # h200-spot's us-central1-b is a zone of the region but no longer one of the cluster's
    assert {p.key for p in found} == {"gpuPools[1].zones[0]", "gpuPools[2].zones[0]", "cluster.zones[1]"}


def test_l40s_on_gcp_names_the_alternatives():
    data = decoded("gcp-dev")
    data["gpuPools"][0] = {"name": "l40s", "gpu": "L40S", "maxNodes": 1}
    found, message = problems(data)
    gpu = next(p for p in found if p.key == "gpuPools[0].gpu")
    assert "not offered on gcp" in gpu.allowed and "L4, H100" in gpu.allowed
    assert "pulumi config set --path 'tritonfleet:gpuPools[0].gpu' L4 --stack gcp-dev" in message


def test_admin_principals_are_an_aws_setting():
    data = decoded("gcp-dev")
    data["cluster"]["adminPrincipals"] = ["user:alice@example.com"]
    found, message = problems(data)
    assert [(p.key, p.allowed) for p in found] == [("cluster.adminPrincipals", "unset: it applies to AWS only")]
    assert "pulumi config rm --path 'tritonfleet:cluster.adminPrincipals'" in message


def test_tags_that_gcp_rejects_as_labels_are_problems_with_a_fix():
    """GKE clusters, node pools and buckets take the tags as labels: AWS-style tags would fail at `pulumi up`."""
    data = decoded("gcp-prod")
    data["tags"] = {"team": "ml-platform", "CostCenter": "ml", "owner": "ML Platform", "größe": "straße"}
    found, message = problems(data, "gcp-prod")
    by_key = {p.key: p for p in found}
    assert set(by_key) == {"tags.CostCenter", "tags.owner"}
    assert by_key["tags.CostCenter"].fix == "pulumi config rm --path 'tritonfleet:tags.CostCenter' --stack gcp-prod"
    assert by_key["tags.owner"].fix == "pulumi config set --path 'tritonfleet:tags.owner' ml-platform --stack gcp-prod"
    assert "lower-case" in by_key["tags.owner"].allowed


def test_aws_keeps_its_own_tag_rules():
    import json

    from tests.conftest import engine_config

    raw = engine_config("prod")
    raw["tritonfleet:tags"] = json.dumps({"team": "ml-platform", "cost-center": "ml-prod", "Owner": "ML Platform"})
    assert load_stack_config(raw, "prod").tags["Owner"] == "ML Platform"


def test_on_gcp_the_model_copy_must_fit_the_node_disk():
    """GKE nodes keep the model copy on the boot disk (diskGi), so the neutral node-disk rule applies there."""
    data = decoded("gcp-dev")
    data["tritonDeployments"][0]["repositoryGi"] = 500
    found, _ = problems(data)
    [problem] = [p for p in found if p.key == "tritonDeployments[0].repositoryGi"]
    assert problem.allowed.startswith("at most 59: the repository copy must fit on a 100 GiB node disk")


def test_on_demand_fallback_is_not_a_gcp_key():
    data = decoded("gcp-dev")
    data["gpuPools"][0]["onDemandFallback"] = False
    found, _ = problems(data)
    assert [p.key for p in found] == ["gpuPools[0].onDemandFallback"]
