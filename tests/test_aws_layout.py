"""The AWS floor's plain decisions and IAM documents, tested as data (no Pulumi)."""

from __future__ import annotations

import ipaddress
import json

from tritonfleet.clouds.aws.iam_policies import irsa_trust_policy, model_read_policy
from tritonfleet.clouds.aws.layout import (
    gpu_operator_values,
    subnet_layout,
)


def test_subnets_are_disjoint_and_inside_the_vpc():
    plans = subnet_layout(["z1", "z2", "z3", "z4", "z5", "z6"])
    networks = [ipaddress.ip_network(c) for p in plans for c in (p.private_cidr, p.public_cidr)]
    assert all(n.subnet_of(ipaddress.ip_network("10.0.0.0/16")) for n in networks)
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1 :])


def test_gpu_operator_values_per_node_image():
    assert gpu_operator_values("al2023") == {"driver": {"enabled": False}, "toolkit": {"enabled": False}}
    assert gpu_operator_values("bottlerocket")["devicePlugin"] == {"enabled": False}


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
