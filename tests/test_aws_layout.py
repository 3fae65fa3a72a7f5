"""The AWS floor's plain decisions and IAM documents, tested as data (no Pulumi)."""

from __future__ import annotations

import ipaddress
import json

import pytest

from components.aws.layout import (
    AMI_TYPE,
    gpu_operator_values,
    node_group_plans,
    spot_instance_types,
    subnet_layout,
)
from components.aws.policies import irsa_trust_policy, model_read_policy
from policies._pools import PURCHASE_FROM_EKS
from tests.conftest import engine_config
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import load_stack_config
from tritonfleet.core.cost import split_capacity


def aws_config(pool: dict, **cluster) -> object:
    raw = engine_config("dev")
    raw["tritonfleet:gpuPools"] = json.dumps([pool])
    raw["tritonfleet:cluster"] = json.dumps({"zones": ["us-east-1a", "us-east-1b", "us-east-1c"], **cluster})
    raw["tritonfleet:tritonDeployments"] = "[]"
    return load_stack_config(raw, "test")


MIXES = [
    pytest.param({"minNodes": 0, "maxNodes": 4, "onDemandBase": 0, "spotShare": 1}, {"spot": (0, 4)}, id="base0-all-spot"),
    pytest.param({"minNodes": 0, "maxNodes": 4, "onDemandBase": 0, "spotShare": 0}, {"on-demand": (0, 4)}, id="share0-on-demand"),
    pytest.param(
        {"minNodes": 2, "maxNodes": 8, "onDemandBase": 2, "spotShare": 0.5},
        {"on-demand": (2, 5), "spot": (0, 3)},
        id="base-plus-share",
    ),
    pytest.param(
        {"minNodes": 3, "maxNodes": 10, "onDemandBase": 1, "spotShare": 0.6},
        {"on-demand": (2, 5), "spot": (1, 5)},
        id="share-above-min",
    ),
]


@pytest.mark.parametrize(("mix", "expected"), MIXES)
def test_node_group_sizes_add_up_to_the_pool(mix, expected):
    config = aws_config({"name": "l40s", "gpu": "L40S", "instanceType": "g6e.xlarge", **mix})
    pool = config.gpu_pools[0]
    plans = node_group_plans(config, pool, "tf-aws-l40s")
    assert {p.option: (p.min_size, p.max_size) for p in plans} == expected
    assert sum(p.min_size for p in plans) == pool.min_nodes
    assert sum(p.max_size for p in plans) == pool.max_nodes
    assert {p.option for p in plans} == set(split_capacity(pool).purchase)
    for plan in plans:
        assert plan.capacity_type == {"on-demand": "ON_DEMAND", "spot": "SPOT"}[plan.option]
        # The budget policy prices a group by reading its capacityType back: both sides share one table.
        assert PURCHASE_FROM_EKS[plan.capacity_type] == plan.option
        assert plan.taint == {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
        assert plan.labels["tritonfleet.io/pool"] == "l40s"
        assert plan.labels["tritonfleet.io/capacity"] == plan.option
        assert plan.logical_name == f"tf-aws-l40s_{plan.option}"


def test_capacity_block_pool_is_one_group_in_the_reservation_zone():
    config = aws_config(
        {
            "name": "b200",
            "gpu": "B200",
            "capacity": "capacity-block",
            "reservationId": "cr-0123456789abcdef0",
            "zones": ["us-east-1c"],
            "minNodes": 0,
            "maxNodes": 2,
        }
    )
    (plan,) = node_group_plans(config, config.gpu_pools[0], "tf-aws-b200")
    assert (plan.capacity_type, plan.min_size, plan.max_size, plan.zones) == ("CAPACITY_BLOCK", 0, 2, ["us-east-1c"])
    assert plan.instance_types == ["p6-b200.48xlarge"]


def test_spot_diversity_keeps_gpu_and_count_and_never_costs_more_than_on_demand():
    config = aws_config({"name": "l40s", "gpu": "L40S", "instanceType": "g6e.xlarge", "maxNodes": 2, "spotShare": 1})
    types = spot_instance_types(config, config.gpu_pools[0])
    assert types[0] == "g6e.xlarge" and len(types) >= 2
    catalog = load_catalog()
    base = catalog.find("aws", "g6e.xlarge")
    for name in types:
        itype = catalog.find("aws", name)
        assert (itype.gpu, itype.gpu_count) == ("L40S", 1)
        assert itype.vcpu >= base.vcpu and itype.memory_gib >= base.memory_gib
        assert itype.price("spot").usd <= base.price("on-demand").usd
    assert "g6e.8xlarge" not in types  # its spot price is above g6e.xlarge on-demand


def test_spot_diversity_with_one_candidate_is_the_pool_type():
    config = aws_config({"name": "h200", "gpu": "H200", "instanceType": "p5en.48xlarge", "maxNodes": 2, "spotShare": 1})
    assert spot_instance_types(config, config.gpu_pools[0]) == ["p5en.48xlarge"]


def test_scale_from_zero_tags_carry_gpu_labels_and_taint():
    config = aws_config({"name": "l40s", "gpu": "L40S", "instanceType": "g6e.12xlarge", "maxNodes": 2, "spotShare": 1})
    (plan,) = node_group_plans(config, config.gpu_pools[0], "p")
    tags = plan.autoscaler_tags
    prefix = "k8s.io/cluster-autoscaler/node-template"
    assert tags[f"{prefix}/resources/nvidia.com/gpu"] == "4"
    assert tags[f"{prefix}/taint/nvidia.com/gpu"] == "true:NoSchedule"
    assert tags[f"{prefix}/label/tritonfleet.io/pool"] == "l40s"
    assert tags[f"{prefix}/label/k8s.amazonaws.com/accelerator"] == "nvidia-l40s"


def test_subnets_are_disjoint_and_inside_the_vpc():
    plans = subnet_layout(["z1", "z2", "z3", "z4", "z5", "z6"])
    networks = [ipaddress.ip_network(c) for p in plans for c in (p.private_cidr, p.public_cidr)]
    assert all(n.subnet_of(ipaddress.ip_network("10.0.0.0/16")) for n in networks)
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1 :])


def test_gpu_operator_values_per_node_image():
    assert gpu_operator_values("al2023") == {"driver": {"enabled": False}, "toolkit": {"enabled": False}}
    assert gpu_operator_values("bottlerocket")["devicePlugin"] == {"enabled": False}
    assert AMI_TYPE == {"al2023": "AL2023_x86_64_NVIDIA", "bottlerocket": "BOTTLEROCKET_x86_64_NVIDIA"}


ISSUER = "https://oidc.eks.us-east-1.amazonaws.com/id/ABC"
PROVIDER = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"


def test_irsa_trust_names_one_service_account():
    doc = json.loads(irsa_trust_policy(PROVIDER, ISSUER, "triton", "llm"))
    (statement,) = doc["Statement"]
    assert statement["Principal"] == {"Federated": PROVIDER}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {
        "StringEquals": {
            "oidc.eks.us-east-1.amazonaws.com/id/ABC:sub": "system:serviceaccount:triton:llm",
            "oidc.eks.us-east-1.amazonaws.com/id/ABC:aud": "sts.amazonaws.com",
        }
    }


def test_model_read_policy_is_read_only_on_one_prefix():
    doc = json.loads(model_read_policy("arn:aws:s3:::tf-prod-models", "llm/"))
    actions = {s["Action"] for s in doc["Statement"]}
    assert actions == {"s3:ListBucket", "s3:GetObject"}
    for statement in doc["Statement"]:
        assert statement["Effect"] == "Allow"
        assert "*" not in statement["Action"]
        assert statement["Resource"].startswith("arn:aws:s3:::tf-prod-models")
    get = next(s for s in doc["Statement"] if s["Action"] == "s3:GetObject")
    assert get["Resource"] == "arn:aws:s3:::tf-prod-models/llm/*"
    lists = [s for s in doc["Statement"] if s["Action"] == "s3:ListBucket"]
    assert all(s["Resource"] == "arn:aws:s3:::tf-prod-models" for s in lists)
    assert {json.dumps(s["Condition"], sort_keys=True) for s in lists} == {
        json.dumps({"StringLike": {"s3:prefix": ["llm/", "llm/*"]}}, sort_keys=True),
        json.dumps({"Null": {"s3:prefix": "true"}}, sort_keys=True),  # HeadBucket, which Triton calls first
    }


def test_model_read_policy_with_a_kms_key_may_decrypt_through_s3_only():
    key = "arn:aws:kms:us-east-1:123456789012:key/abc"
    doc = json.loads(model_read_policy("arn:aws:s3:::b", "", key, "us-east-1"))
    decrypt = next(s for s in doc["Statement"] if s["Action"] == "kms:Decrypt")
    assert decrypt["Resource"] == key
    assert decrypt["Condition"] == {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}
    get = next(s for s in doc["Statement"] if s["Action"] == "s3:GetObject")
    assert get["Resource"] == "arn:aws:s3:::b/*"
