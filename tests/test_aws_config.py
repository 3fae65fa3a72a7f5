"""Bad AWS input fails with a Problem naming the key, the value, what is allowed and the fix (never a traceback)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import engine_config
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.config.problems import Problem


def _refused(stack: str, **overrides) -> list[Problem]:
    """The problems of a stack's config with `overrides` (top-level keys), which must fail to load."""
    raw = engine_config(stack)
    for key, value in overrides.items():
        raw[f"tritonfleet:{key}"] = value if isinstance(value, str) else json.dumps(value)
    with pytest.raises(ConfigError) as info:
        load_stack_config(raw, stack)
    return info.value.problems


def problems(stack: str, **overrides) -> dict[str, str]:
    return {p.key: p.allowed for p in _refused(stack, **overrides)}


def prod_pools(**changes_by_pool) -> list[dict]:
    pools = json.loads(engine_config("prod")["tritonfleet:gpuPools"])
    for pool in pools:
        pool.update(changes_by_pool.get(pool["name"], {}))
        for key in [k for k, v in pool.items() if v is None]:
            del pool[key]
    return pools


def test_spot_for_a_capacity_block_only_type():
    found = problems(
        "prod", gpuPools=prod_pools(b200={"capacity": "mixed", "spotShare": 1, "reservationId": None, "zones": None})
    )
    assert "p6-b200.48xlarge is sold only as capacity-block" in found["gpuPools[2].spotShare"]


def test_capacity_block_without_reservation_id_or_zone():
    found = problems("prod", gpuPools=prod_pools(b200={"reservationId": None, "zones": None}))
    assert "the id of the capacity-block" in found["gpuPools[2].reservationId"]
    assert "exactly one zone" in found["gpuPools[2].zones"]


def test_instance_type_without_the_pools_gpu():
    found = problems("prod", gpuPools=prod_pools(h200={"instanceType": "g6e.xlarge"}))
    assert "carries H200 (it carries L40S)" in found["gpuPools[0].instanceType"]


def test_more_zones_than_the_region_has():
    found = problems("dev", region="us-west-1", cluster={"zones": ["us-west-1a", "us-west-1b", "us-west-1c"]})
    assert "us-west-1 has 2 availability zones" in found["cluster.zones"]


def test_zone_of_another_region_and_duplicates():
    found = problems("dev", cluster={"zones": ["us-east-1a", "us-west-2a", "us-east-1a"]})
    assert "a zone of us-east-1" in found["cluster.zones[1]"]
    assert "not listed twice" in found["cluster.zones[2]"]


def test_pool_zone_outside_the_cluster():
    found = problems("prod", gpuPools=prod_pools(h200={"zones": ["us-east-1d"]}))
    assert "one of the cluster's zones: us-east-1a, us-east-1b, us-east-1c" in found["gpuPools[0].zones[0]"]


def test_existing_vpc_needs_its_private_subnets():
    found = problems("dev", cluster={"existingVpcId": "vpc-0123456789abcdef0"})
    assert "at least two zones to private subnet ids" in found["cluster.existingPrivateSubnets"]
    found = problems("dev", cluster={"existingPrivateSubnets": {"us-east-1a": "sub-1", "us-east-1b": "subnet-0123456789abcdef0"}})
    assert "the VPC id" in found["cluster.existingVpcId"]
    assert "a subnet id such as" in found["cluster.existingPrivateSubnets.us-east-1a"]
    found = problems("dev", cluster={"existingVpcId": "my-vpc"})
    assert "vpc-" in found["cluster.existingVpcId"]


def test_existing_vpc_needs_its_load_balancer_subnets():
    subnets = {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"}
    found = problems("dev", cluster={"existingVpcId": "vpc-0123456789abcdef0", "existingPrivateSubnets": subnets})
    assert "load-balancer subnets" in found["cluster.existingLoadBalancerCidrs"] and "not the VPC CIDR" in found["cluster.existingLoadBalancerCidrs"]
    cluster = {"existingVpcId": "vpc-0123456789abcdef0", "existingPrivateSubnets": subnets, "existingLoadBalancerCidrs": ["10.20.0.0/33"]}
    assert "a CIDR such as" in problems("dev", cluster=cluster)["cluster.existingLoadBalancerCidrs[0]"]


def test_node_image_and_release():
    found = problems("dev", cluster={"gpuNodeImage": "ubuntu"})
    assert "al2023" in found["cluster.gpuNodeImage"] and "bottlerocket" in found["cluster.gpuNodeImage"]
    found = problems("dev", cluster={"gpuNodeImage": "bottlerocket"})
    assert "none is pinned" in found["cluster.amiReleaseVersion"]
    found = problems("dev", cluster={"amiReleaseVersion": "1.32.1-20250101"})
    assert "for Kubernetes 1.35" in found["cluster.amiReleaseVersion"]


@pytest.mark.parametrize("version", ["1.31", "1.20", "1.99"])
def test_unsupported_kubernetes_version_is_refused_with_the_supported_list(version):
    """1.31 left EKS extended support on 2026-11-26; 1.20 and 1.99 are not in the table: none can be created."""
    raw = engine_config("dev")
    raw["tritonfleet:cluster"] = json.dumps({"kubernetesVersion": version})
    with pytest.raises(ConfigError) as info:
        load_stack_config(raw, "dev")
    (problem,) = info.value.problems  # one problem: no AMI-pin complaint about a version EKS refuses anyway
    assert problem.value == version
    assert "a version EKS supports on" in problem.allowed
    assert "1.35" in problem.allowed and "1.36" in problem.allowed
    assert ("ended on 2026-11-26" if version == "1.31" else "not in tritonfleet's EKS version table") in problem.allowed
    assert problem.fix == "pulumi config set --path 'tritonfleet:cluster.kubernetesVersion' 1.35 --stack dev"


def test_admin_principals_are_iam_arns():
    found = problems("dev", cluster={"adminPrincipals": ["alice@example.com"]})
    assert "IAM role or user ARN" in found["cluster.adminPrincipals[0]"]


def test_aws_only_cluster_keys_on_gcp():
    cluster = {
        "zones": ["us-central1-a", "us-central1-b"],
        "gpuNodeImage": "bottlerocket",
        "amiReleaseVersion": "1.33.5-20251120",
    }
    found = problems("gcp-prod", cluster=cluster)
    assert found["cluster.gpuNodeImage"] == "on gcp: COS_CONTAINERD or UBUNTU_CONTAINERD"
    assert "AWS only" in found["cluster.amiReleaseVersion"]


def test_problem_message_has_the_fix_command():
    raw = engine_config("dev")
    raw["tritonfleet:region"] = "us-west-1"
    raw["tritonfleet:cluster"] = json.dumps({"zones": ["us-west-1a", "us-west-1b", "us-west-1c"]})
    with pytest.raises(ConfigError) as info:
        load_stack_config(raw, "dev")
    assert "pulumi config set --path 'tritonfleet:cluster.zones'" in str(info.value)


def fixes(stack: str, **overrides) -> dict[str, str]:
    return {p.key: p.fix for p in _refused(stack, **overrides)}


def test_an_odcr_id_must_be_a_capacity_reservation_id():
    odcr = {"capacity": "reservation", "reservationId": "odcr-h200", "onDemandBase": None, "spotShare": None}
    found = problems("prod", gpuPools=prod_pools(h200=odcr))
    assert list(found) == ["gpuPools[0].reservationId"]
    assert "On-Demand Capacity Reservation: cr- followed by" in found["gpuPools[0].reservationId"]
    assert "pulumi config set --path 'tritonfleet:gpuPools[0].reservationId' cr-0123456789abcdef0" in fixes(
        "prod", gpuPools=prod_pools(h200=odcr)
    )["gpuPools[0].reservationId"]


def test_an_odcr_pool_loads_as_a_reserved_pool():
    raw = engine_config("prod")
    raw["tritonfleet:gpuPools"] = json.dumps(
        prod_pools(h200={"capacity": "reservation", "reservationId": "cr-0abc123", "onDemandBase": None, "spotShare": None})
    )
    config = load_stack_config(raw, "prod")
    assert config.pool("h200").capacity == "reservation"


def test_a_reservation_on_a_spot_only_pool():
    found = problems("dev", gpuPools=[{"name": "l40s", "gpu": "L40S", "maxNodes": 2, "spotShare": 1, "reservationId": "cr-0abc123"}])
    assert list(found) == ["gpuPools[0].reservationId"]
    assert "a spot-only pool cannot draw from a reservation" in found["gpuPools[0].reservationId"]


def test_a_node_pool_limit_below_the_on_demand_base():
    found = problems("prod", gpuPools=prod_pools(h200={"maxNodes": 1, "minNodes": 1, "onDemandBase": 2}))
    assert list(found) == ["gpuPools[0].maxNodes"]
    assert ">= onDemandBase (2): maxNodes is the pool's node limit (on AWS its NodePools' limits)" in found["gpuPools[0].maxNodes"]
    assert "'tritonfleet:gpuPools[0].maxNodes' 2" in fixes(
        "prod", gpuPools=prod_pools(h200={"maxNodes": 1, "minNodes": 1, "onDemandBase": 2})
    )["gpuPools[0].maxNodes"]


def test_an_instance_type_of_another_gpu_names_the_types_that_carry_it():
    found = problems("dev", gpuPools=[{"name": "l40s", "gpu": "L40S", "instanceType": "p5en.48xlarge", "maxNodes": 1}])
    assert list(found) == ["gpuPools[0].instanceType"]
    assert "an instance type on aws that carries L40S (it carries H200): g6e.xlarge" in found["gpuPools[0].instanceType"]


def test_no_fallback_means_spot_only():
    pool = {"name": "l40s", "gpu": "L40S", "maxNodes": 4, "spotShare": 0.5, "onDemandFallback": False}
    found = problems("dev", gpuPools=[pool])
    assert list(found) == ["gpuPools[0].spotShare"]
    assert "spot only" in found["gpuPools[0].spotShare"]


def test_on_demand_fallback_is_refused_on_gcp():
    pools = json.loads(engine_config("gcp-dev")["tritonfleet:gpuPools"])
    pools[0]["onDemandFallback"] = True
    found = problems("gcp-dev", gpuPools=pools)
    assert "spot never falls back to on-demand" in found["gpuPools[0].onDemandFallback"]


def test_model_copies_must_fit_the_instance_store_nvme():
    deployments = json.loads(engine_config("dev")["tritonfleet:tritonDeployments"])
    deployments[0]["repositoryGi"] = 190
    pools = json.loads(engine_config("dev")["tritonfleet:gpuPools"])
    pools[0]["diskGi"] = 400  # the root disk no longer bounds it on AWS: the RAID0 array of g6e.xlarge does
    found = problems("dev", tritonDeployments=deployments, gpuPools=pools)
    assert list(found) == ["tritonDeployments[0].repositoryGi"]
    # 250 GB of NVMe = 232.8 GiB, less the 10 % eviction threshold and 30 GiB of images
    assert found["tritonDeployments[0].repositoryGi"] == (
        "at most 178: 1 replicas per g6e.xlarge node each copy the repository to the node's 179 GiB of local SSD"
    )


@pytest.mark.parametrize(
    ("tags", "key", "said", "fix"),
    [
        ({"k" * 5000: "x"}, "tags." + "k" * 5000, "key of 5000 characters", "pulumi config rm"),
        ({"aws:owner": "me"}, "tags.aws:owner", "not starting with aws:", "pulumi config rm"),
        ({"team": "v" * 300}, "tags.team", "value of 300 characters", "v" * 256),
        ({"team": "ml{platform}"}, "tags.team", "letters, digits, spaces", "ml-platform-"),
    ],
    ids=["key-too-long", "reserved-prefix", "value-too-long", "value-characters"],
)
def test_tags_past_aws_limits_are_refused_before_any_resource(tags, key, said, fix):
    """Every AWS resource carries the stack's tags, and the API rejects a tag past its limits (facts: TAG_LIMITS)."""
    raw = engine_config("dev")
    raw["tritonfleet:tags"] = json.dumps(tags)
    with pytest.raises(ConfigError) as info:
        load_stack_config(raw, "dev")
    (problem,) = [p for p in info.value.problems if p.key == key]
    assert said in problem.allowed and fix in problem.fix


def test_tags_within_aws_limits_pass():
    raw = engine_config("dev")
    raw["tritonfleet:tags"] = json.dumps({"team": "ML platform", "cost-center": "gpu/42", "k" * 128: "v" * 256})
    load_stack_config(raw, "dev")
