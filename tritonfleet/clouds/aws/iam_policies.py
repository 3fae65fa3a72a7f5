"""IAM policy documents as plain JSON text: trust policies, IRSA, least-privilege S3 reads (Karpenter's: karpenter_iam.py).

Every function takes resolved strings (ARNs, the OIDC issuer) so tests can parse and check the documents.
"""

from __future__ import annotations

import json

VERSION = "2012-10-17"
STS_AUDIENCE = "sts.amazonaws.com"


def service_trust_policy(service: str) -> str:
    """Trust for an AWS service principal (eks.amazonaws.com, ec2.amazonaws.com)."""
    return json.dumps(
        {"Version": VERSION, "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]}
    )


def service_account_subject(namespace: str, service_account: str) -> str:
    return f"system:serviceaccount:{namespace}:{service_account}"


def irsa_trust_policy(oidc_provider_arn: str, issuer_url: str, namespace: str, service_account: str) -> str:
    """IRSA trust: only this one Kubernetes service account of this one cluster may assume the role."""
    issuer = issuer_url.removeprefix("https://")
    return json.dumps(
        {
            "Version": VERSION,
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": oidc_provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{issuer}:sub": service_account_subject(namespace, service_account),
                            f"{issuer}:aud": STS_AUDIENCE,
                        }
                    },
                }
            ],
        }
    )


def model_read_policy(bucket_arn: str, prefix: str, kms_key_arn: str | None = None, region: str | None = None) -> str:
    """Read-only access to one bucket prefix, shaped by what Triton's S3 client calls.

    Triton calls HeadBucket (authorised by s3:ListBucket, without a prefix), then ListObjectsV2 with the model
    folder as prefix, then HeadObject/GetObject (s3:GetObject). IAM cannot tell HeadBucket from a list without a
    prefix, so the role can list key names at the bucket root; it can read objects only under its prefix.
    """
    statements: list[dict] = []
    if prefix:
        statements += [
            {
                "Sid": "ListModelPrefix",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": bucket_arn,
                "Condition": {"StringLike": {"s3:prefix": [prefix, f"{prefix}*"]}},
            },
            {
                "Sid": "HeadBucket",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": bucket_arn,
                "Condition": {"Null": {"s3:prefix": "true"}},
            },
        ]
    else:
        statements.append({"Sid": "ListBucket", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": bucket_arn})
    statements.append({"Sid": "ReadModels", "Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{bucket_arn}/{prefix}*"})
    if kms_key_arn:
        decrypt: dict = {"Sid": "DecryptModels", "Effect": "Allow", "Action": "kms:Decrypt", "Resource": kms_key_arn}
        if region:
            decrypt["Condition"] = {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}}
        statements.append(decrypt)
    return json.dumps({"Version": VERSION, "Statement": statements})
