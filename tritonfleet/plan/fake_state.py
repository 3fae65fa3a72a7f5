"""Deterministic stand-ins for the outputs a cloud would compute (ids, ARNs, endpoints), for the offline plan.

Each value is derived from the resource's name only, so two plans of the same program are byte-identical.
"""

from __future__ import annotations

from typing import Any

ACCOUNT = "123456789012"
FAKE_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm9mZmxpbmUtcGxhbgotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="


def _aws_arn(typ: str, name: str) -> str:
    service = typ.split(":")[1].split("/")[0]
    return f"arn:aws:{service}::{ACCOUNT}:{name}"


GCP_PROJECT_NUMBER = "123456789012"
# Answers to the data-source calls (invokes) the program makes, by token.
_CALLS: dict[str, dict[str, Any]] = {
    "gcp:storage/getProjectServiceAccount:getProjectServiceAccount": {
        "emailAddress": f"service-{GCP_PROJECT_NUMBER}@gs-project-accounts.iam.gserviceaccount.com",
        "member": f"serviceAccount:service-{GCP_PROJECT_NUMBER}@gs-project-accounts.iam.gserviceaccount.com",
        "id": GCP_PROJECT_NUMBER,
    },
}


# The GCP provider's own configuration: its identity's short-lived OAuth access token (the Kubernetes provider's).
_CALLS["gcp:organizations/getClientConfig:getClientConfig"] = {
    "accessToken": "offline-plan-access-token",
    "id": "offline-plan",
    "project": "offline-plan",
    "region": "us-central1",
    "zone": "",
    "defaultLabels": {},
}
_CALLS["gcp:organizations/getProject:getProject"] = {
    "number": GCP_PROJECT_NUMBER,
    "projectId": "offline-plan",
    "name": "offline-plan",
    "id": "projects/offline-plan",
}
# The identity the offline plan deploys as (an assumed role, as CI runs usually are).
_CALLS["aws:index/getCallerIdentity:getCallerIdentity"] = {
    "accountId": ACCOUNT,
    "arn": f"arn:aws:sts::{ACCOUNT}:assumed-role/deployer/tritonfleet-plan",
    "userId": "AROAEXAMPLEDEPLOYER:tritonfleet-plan",
    "id": ACCOUNT,
}
# The region's S3 managed prefix list (components/aws/cloud.py s3_cidrs): a stand-in of one range, 52.216.0.0/15,
# which us-east-1's list holds; a real preview reads the region's own list.
_CALLS["aws:ec2/getPrefixList:getPrefixList"] = {
    "cidrBlocks": ["52.216.0.0/15"],
    "id": "pl-0offline0s3",
    "name": "com.amazonaws.us-east-1.s3",
    "filters": [],
    "tags": {},
}
# Data sources for things the offline plan's empty account does not have: the provider's not-found error.
ABSENT_CALLS: dict[str, str] = {
    "aws:eks/getCluster:getCluster": "ResourceNotFoundException: No cluster found (offline plan: an empty account)",
}


def fake_call(token: str) -> dict[str, Any] | None:
    """The result of a data-source call the offline plan answers, or None when it answers no such call."""
    answer = _CALLS.get(token)
    return dict(answer) if answer is not None else None


def fake_outputs(typ: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Outputs for a mocked resource: its inputs plus the computed attributes our program reads."""
    out = dict(inputs)
    if typ.startswith("aws:"):
        out.setdefault("arn", _aws_arn(typ, name))
        out.setdefault("name", name)
    if typ == "aws:s3/bucket:Bucket":
        out.setdefault("bucket", name)
        out["arn"] = f"arn:aws:s3:::{out['bucket']}"
    elif typ == "aws:eks/cluster:Cluster":
        out["arn"] = f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/{inputs.get('name', name)}"
        out.setdefault("endpoint", f"https://{name}.gr7.us-east-1.eks.amazonaws.com")
        out.setdefault("certificateAuthority", {"data": FAKE_CA})
        out.setdefault("identities", [{"oidcs": [{"issuer": f"https://oidc.eks.us-east-1.amazonaws.com/id/{name.upper()}"}]}])
    elif typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
        out["arn"] = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{inputs.get('url', name).removeprefix('https://')}"
    elif typ == "aws:kms/key:Key":
        out.setdefault("keyId", f"{name}-key")
        out["arn"] = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/{name}"
    elif typ == "aws:eks/nodeGroup:NodeGroup":
        group = inputs.get("nodeGroupName", f"{name}-0000000")
        out.setdefault("nodeGroupName", group)
        out.setdefault("resources", [{"autoscalingGroups": [{"name": f"eks-{group}-00000000-0000-0000-0000-000000000000"}]}])
    elif typ == "aws:ec2/launchTemplate:LaunchTemplate":
        out.setdefault("latestVersion", 1)
    elif typ == "aws:iam/role:Role":
        out["arn"] = f"arn:aws:iam::{ACCOUNT}:role/{name}"
    elif typ.startswith("gcp:"):
        out.setdefault("name", name)
        out.setdefault("selfLink", f"https://www.googleapis.com/{typ.split(':')[1].split('/')[0]}/v1/{name}")
    if typ == "gcp:container/cluster:Cluster":
        out.setdefault("endpoint", "203.0.113.10")
        out.setdefault("masterAuth", {"clusterCaCertificate": FAKE_CA})
        dns = (out.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig")
        if dns is not None:
            dns.setdefault("endpoint", f"gke-{name}-0000.{inputs.get('location', 'us-central1')}.gke.goog")
    elif typ == "gcp:serviceaccount/account:Account":
        project = inputs.get("project", "project")
        out.setdefault("email", f"{inputs.get('accountId', name)}@{project}.iam.gserviceaccount.com")
        out["name"] = f"projects/{project}/serviceAccounts/{out['email']}"
        out.setdefault("member", f"serviceAccount:{out['email']}")
    elif typ == "kubernetes:helm.sh/v3:Release":
        out.setdefault(
            "status", {"name": inputs.get("name", name), "namespace": inputs.get("namespace", "default"), "status": "deployed"}
        )
    elif typ == "random:index/randomPassword:RandomPassword":
        out.setdefault("result", f"offline-{name}")
    return out
