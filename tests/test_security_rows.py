"""The security and hygiene rows of the cloud review (2026-12-05): break-glass admins in prod, the S3 gateway
endpoint's policy, every Container Insights log group with a retention, and the GCP rows (Workload Identity
principals, shared and block reservations, CMEK key location, configurable GKE ranges)."""

from __future__ import annotations

import json

import pytest
from conftest import config_problems, engine_config

from tritonfleet.core.config import load_stack_config


def _config(stack: str, edit) -> dict[str, str]:
    data = {k: json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v for k, v in engine_config(stack).items()}
    edit(data)
    return {k: json.dumps(v) if isinstance(v, dict | list) else str(v) for k, v in data.items()}


def _problems(stack: str, edit) -> dict[str, tuple]:
    return config_problems(_config(stack, edit), stack)


# ---- break-glass access to prod EKS


def test_prod_on_eks_needs_an_admin_principal_besides_the_deployer():
    found = _problems("prod", lambda d: d["tritonfleet:cluster"].pop("adminPrincipals"))
    _, allowed, fix = found["cluster.adminPrincipals[0]"]
    assert "break-glass" in allowed
    assert fix == (
        "pulumi config set --path 'tritonfleet:cluster.adminPrincipals[0]' "
        "arn:aws:iam::123456789012:role/platform-admin --stack prod"
    )
    load_stack_config(engine_config("dev"), "dev")  # dev and staging may rely on the creator alone


# ---- the S3 gateway endpoint's policy


def test_the_s3_endpoint_serves_the_model_buckets_and_the_nodes_own_buckets_only():
    from components.aws.network import s3_endpoint_policy
    from tests.serving_helpers import plan

    endpoints = [r for r in plan("prod")["resources"] if r["type"] == "aws:ec2/vpcEndpoint:VpcEndpoint"]
    (endpoint,) = [r for r in endpoints if r["inputs"]["serviceName"].endswith(".s3")]  # beside STS's interface endpoint
    policy = json.loads(endpoint["inputs"]["policy"])
    assert policy == json.loads(s3_endpoint_policy("us-east-1", ["tf-prod-models-123456789012-us-east-1"]))
    models, nodes = policy["Statement"]
    assert models["Resource"] == [
        "arn:aws:s3:::tf-prod-models-123456789012-us-east-1",
        "arn:aws:s3:::tf-prod-models-123456789012-us-east-1/*",
    ]
    assert set(models["Action"]) == {"s3:GetObject", "s3:ListBucket", "s3:GetBucketLocation"}  # no write
    assert nodes["Action"] == "s3:GetObject" and nodes["Resource"] == [
        "arn:aws:s3:::prod-us-east-1-starport-layer-bucket/*",  # ECR image layers (the add-ons' images)
        "arn:aws:s3:::al2023-repos-us-east-1-*/*",
    ]
    assert all(s["Effect"] == "Allow" for s in policy["Statement"])


def test_every_container_insights_log_group_expires():
    from components.aws.cluster import CONTAINER_INSIGHTS_LOG_KINDS
    from tests.serving_helpers import plan

    groups = {
        r["inputs"]["name"]: r["inputs"]["retentionInDays"]
        for r in plan("prod")["resources"]
        if r["type"] == "aws:cloudwatch/logGroup:LogGroup"
    }
    for kind in CONTAINER_INSIGHTS_LOG_KINDS:
        assert groups[f"/aws/containerinsights/tf-prod/{kind}"] > 0


# ---- GCP: shared and block reservations


@pytest.mark.parametrize(
    ("reservation_id", "project", "name", "block", "shared"),
    [
        ("h200-serving", "acme-ml-prod", "h200-serving", None, False),
        ("projects/acme-capacity/reservations/h200-serving", "acme-capacity", "h200-serving", None, True),
        ("h200-serving/reservationBlocks/block-1", "acme-ml-prod", "h200-serving", "block-1", False),
        ("projects/acme-capacity/reservations/h200-serving/reservationBlocks/b1", "acme-capacity", "h200-serving", "b1", True),
    ],
)
def test_a_gcp_reservation_may_be_shared_or_a_block_and_reaches_the_node_pool(reservation_id, project, name, block, shared):
    from tritonfleet.clouds.gcp.node_pools import gpu_node_pool_specs
    from tritonfleet.clouds.gcp.reservations import parse_reservation

    def edit(data):
        data["tritonfleet:gpuPools"][1]["reservationId"] = reservation_id

    config = load_stack_config(_config("gcp-prod", edit), "gcp-prod")
    ref = parse_reservation(config.pool("h200").reservation_id, "acme-ml-prod")
    assert (ref.project, ref.name, ref.block, ref.shared) == (project, name, block, shared)
    (spec,) = gpu_node_pool_specs(config, config.pool("h200"))  # GKE takes every form as the affinity's value
    assert spec.reservation_affinity == "SPECIFIC_RESERVATION" and spec.reservation == reservation_id


@pytest.mark.parametrize(
    ("reservation_id", "fragment", "fix"),
    [
        ("reservationBlocks/block-1", "a reservation block without its reservation", "'<reservation>/reservationBlocks/block-1'"),
        ("/reservationBlocks/block-1", "a reservation block without its reservation", "'<reservation>/reservationBlocks/block-1'"),
        ("projects/acme-capacity/h200-serving", "projects/OWNER/reservations/NAME", "my-reservation"),
        ("H200_Serving", "NAME (a reservation of the stack's project)", "my-reservation"),
    ],
)
def test_a_malformed_gcp_reservation_names_the_forms_and_the_fix(reservation_id, fragment, fix):
    def edit(data):
        data["tritonfleet:gpuPools"][1]["reservationId"] = reservation_id

    found = _problems("gcp-prod", edit)
    value, allowed, command = found["gpuPools[1].reservationId"]
    assert value == reservation_id and fragment in allowed
    assert command.endswith(f"reservationId' {fix} --stack gcp-prod")


# ---- GCP: CMEK key location


def test_a_cmek_key_outside_the_buckets_region_is_refused_with_the_same_key_in_the_region():
    key = "projects/acme-ml-prod/locations/{}/keyRings/models/cryptoKeys/models"

    def edit(location):
        return lambda data: data["tritonfleet:modelBuckets"][0].update(kmsKeyId=key.format(location))

    value, allowed, fix = _problems("gcp-prod", edit("us"))["modelBuckets[0].kmsKeyId"]
    assert "in us-central1" in allowed and "the key is in us" in allowed
    assert fix.endswith(f"{key.format('us-central1')} --stack gcp-prod")
    assert _problems("gcp-prod", edit("global"))
    config = load_stack_config(_config("gcp-prod", edit("us-central1")), "gcp-prod")
    assert config.model_buckets[0].kms_key_id == key.format("us-central1")


# ---- GCP: configurable ranges


def test_gke_ranges_replace_the_defaults_in_the_subnet_the_cluster_and_the_webhook_rule():
    from tritonfleet.clouds.gcp.layout import PLANNED_RANGES, planned_ranges

    ranges = {"nodes": "10.60.0.0/20", "pods": "10.64.0.0/14", "services": "10.68.0.0/20", "controlPlane": "10.255.255.0/28"}
    config = load_stack_config(_config("gcp-prod", lambda d: d["tritonfleet:cluster"].update(gkeRanges=ranges)), "gcp-prod")
    assert planned_ranges(config.cluster.gke_ranges) == {
        "node": "10.60.0.0/20", "pod": "10.64.0.0/14", "service": "10.68.0.0/20", "control-plane": "10.255.255.0/28",
    }  # fmt: skip
    partial = load_stack_config(
        _config("gcp-prod", lambda d: d["tritonfleet:cluster"].update(gkeRanges={"controlPlane": "10.255.255.0/28"})), "gcp-prod"
    )
    assert planned_ranges(partial.cluster.gke_ranges) == {**PLANNED_RANGES, "control-plane": "10.255.255.0/28"}
    assert planned_ranges(None) == PLANNED_RANGES


@pytest.mark.parametrize(
    ("ranges", "key", "fragment"),
    [
        ({"controlPlane": "10.255.255.0/27"}, "cluster.gkeRanges.controlPlane", "a /28 of a private"),
        ({"controlPlane": "8.8.8.0/28"}, "cluster.gkeRanges.controlPlane", "a /28 of a private"),
        ({"pods": "10.8.0.0/14"}, "cluster.gkeRanges.pods", "apart from the node range"),
        ({"services": "10.20.0.1/20"}, "cluster.gkeRanges.services", "an IPv4 CIDR"),
    ],
)
def test_bad_gke_ranges_name_the_key_and_the_fix(ranges, key, fragment):
    found = _problems("gcp-prod", lambda d: d["tritonfleet:cluster"].update(gkeRanges=ranges))
    assert fragment in found[key][1] and found[key][2].startswith("pulumi config set --path")


def test_gke_ranges_are_refused_on_aws():
    found = _problems("dev", lambda d: d["tritonfleet:cluster"].update(gkeRanges={"nodes": "10.60.0.0/20"}))
    assert "applies to GKE only" in found["cluster.gkeRanges"][1]


def test_the_proxy_only_subnet_is_checked_against_the_configured_ranges():
    def edit(data):
        data["tritonfleet:cluster"].update(gkeRanges={"nodes": "10.30.0.0/20"}, proxyOnlySubnetCidr="10.30.0.0/23")

    found = _problems("gcp-prod", edit)
    assert "node 10.30.0.0/20" in found["cluster.proxyOnlySubnetCidr"][1]


def test_gke_runs_no_idle_managed_prometheus_collectors_beside_the_stacks_prometheus():
    from tests.serving_helpers import plan

    for stack in ("gcp-dev", "gcp-prod"):
        (cluster,) = [r for r in plan(stack)["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
        assert cluster["inputs"]["monitoringConfig"] == {
            "enableComponents": ["SYSTEM_COMPONENTS"],
            "managedPrometheus": {"enabled": False},
        }
