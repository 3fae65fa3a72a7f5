"""First-`up` hygiene: default bucket names that are the stack owner's (account or project, region), and the preflight
checks only an account can answer: the pinned AMI release, bucket names, capacity reservations and their windows,
quota headroom beside what already runs (AWS, botocore's Stubber with the real API shapes), enabled APIs and bucket
names (GCP, fakes shaped like the clients)."""

from __future__ import annotations

import datetime as dt
import json
from types import SimpleNamespace

import boto3
import pytest
from botocore.stub import Stubber
from conftest import engine_config
from google.api_core.exceptions import Forbidden, NotFound

from tritonfleet.clouds.aws.facts import EC2_VCPU_QUOTAS
from tritonfleet.clouds.aws.preflight import (
    check_ami_release,
    check_bucket_names,
    check_capacity_reservations,
    check_quotas,
    running_vcpus,
)
from tritonfleet.clouds.gcp.facts import SERVICE_USAGE_API, project_apis
from tritonfleet.clouds.gcp.preflight import check_apis, check_gcs_bucket_names
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.conventions import default_bucket_name
from tritonfleet.core.preflight import BLOCKER, OK, UNKNOWN, WARNING

NOW = dt.datetime(2026, 12, 5, 12, 0, tzinfo=dt.UTC)


def _client(service: str):
    return boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def _config(stack: str, edit=None):
    raw = dict(engine_config(stack))
    data = {k: json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v for k, v in raw.items()}
    if edit:
        edit(data)
    return {k: json.dumps(v) if isinstance(v, dict | list) else str(v) for k, v in data.items()}


def _with_b200(data):
    data["tritonfleet:gpuPools"][2]["enabled"] = True


# ---- default bucket names


def test_default_bucket_names_carry_the_owner_and_region(stack_config):
    assert stack_config("prod").physical_bucket_name(stack_config("prod").model_buckets[0]) == (
        "tf-prod-models-123456789012-us-east-1"
    )
    gcp = stack_config("gcp-prod")
    assert gcp.physical_bucket_name(gcp.model_buckets[0]) == "tf-gcp-prod-models-acme-ml-prod-us-central1"
    assert default_bucket_name("dev", "models", "", "") == "tf-dev-models"


def test_an_aws_stack_without_its_account_is_refused_unless_every_bucket_names_itself():
    def no_account(data):
        del data["tritonfleet:awsAccountId"]

    with pytest.raises(ConfigError) as caught:
        load_stack_config(_config("dev", no_account), "dev")
    (problem,) = caught.value.problems
    assert problem.key == "awsAccountId" and "tf-dev-models-<awsAccountId>-<region>" in problem.allowed
    assert problem.fix == "pulumi config set 'tritonfleet:awsAccountId' 123456789012 --stack dev"

    def named(data):
        no_account(data)
        data["tritonfleet:modelBuckets"][0]["bucketName"] = "acme-dev-models"

    config = load_stack_config(_config("dev", named), "dev")
    assert config.physical_bucket_name(config.model_buckets[0]) == "acme-dev-models"


def test_an_account_id_on_gcp_or_of_the_wrong_shape_is_refused():
    with pytest.raises(ConfigError) as caught:
        load_stack_config(_config("gcp-dev", lambda d: d.update({"tritonfleet:awsAccountId": "123456789012"})), "gcp-dev")
    assert [p.key for p in caught.value.problems] == ["awsAccountId"] and "rm" in caught.value.problems[0].fix
    with pytest.raises(ConfigError) as caught:
        load_stack_config(_config("dev", lambda d: d.update({"tritonfleet:awsAccountId": "12345"})), "dev")
    assert [p.key for p in caught.value.problems] == ["awsAccountId"]


def test_the_aws_provider_refuses_other_accounts(stack_config):
    from tests.serving_helpers import plan

    (provider,) = [r for r in plan("prod")["resources"] if r["type"] == "pulumi:providers:aws"]
    assert json.loads(provider["inputs"]["allowedAccountIds"]) == ["123456789012"]  # provider inputs travel as JSON


# ---- AWS: the AMI release


def test_a_published_ami_release_is_ok_and_a_missing_one_a_blocker_with_the_fix(stack_config):
    config = stack_config("prod")
    ssm = _client("ssm")
    name = "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/nvidia/amazon-eks-node-al2023-x86_64-nvidia-1.35-v20260903/image_id"
    with Stubber(ssm) as stub:
        stub.add_response("get_parameter", {"Parameter": {"Name": name, "Value": "ami-0123456789abcdef0"}}, {"Name": name})
        (found,) = check_ami_release(ssm, config)
        stub.add_client_error("get_parameter", "ParameterNotFound", expected_params={"Name": name})
        (missing,) = check_ami_release(ssm, config)
        stub.add_client_error("get_parameter", "AccessDeniedException", expected_params={"Name": name})
        (denied,) = check_ami_release(ssm, config)
    assert found.status == OK and "ami-0123456789abcdef0" in found.detail
    assert missing.status == BLOCKER and "recommended/release_version" in missing.detail
    assert "cluster.amiReleaseVersion" in missing.detail
    assert denied.status == UNKNOWN


# ---- AWS: bucket names


@pytest.mark.parametrize(
    ("code", "status", "fragment"),
    [("404", OK, "free"), ("403", BLOCKER, "another account"), ("301", BLOCKER, "another region"), ("500", UNKNOWN, "")],
)
def test_bucket_names_are_asked_with_head_bucket(stack_config, code, status, fragment):
    s3 = _client("s3")
    with Stubber(s3) as stub:
        stub.add_client_error("head_bucket", code, expected_params={"Bucket": "tf-prod-models-123456789012-us-east-1"})
        (finding,) = check_bucket_names(s3, stack_config("prod"))
    assert finding.status == status and fragment in finding.detail
    if status == BLOCKER:
        assert "modelBuckets[0].bucketName" in finding.detail


def test_a_bucket_we_can_read_is_a_warning(stack_config):
    s3 = _client("s3")
    with Stubber(s3) as stub:
        stub.add_response("head_bucket", {}, {"Bucket": "tf-prod-models-123456789012-us-east-1"})
        (finding,) = check_bucket_names(s3, stack_config("prod"))
    assert finding.status == WARNING and "BucketAlreadyOwnedByYou" in finding.detail


# ---- AWS: capacity blocks


def _reservation(state="active", itype="p6-b200.48xlarge", zone="us-east-1c", start=NOW - dt.timedelta(days=1), days=14):
    return {
        "CapacityReservations": [
            {
                "CapacityReservationId": "cr-0b200example0000",
                "InstanceType": itype,
                "AvailabilityZone": zone,
                "State": state,
                "TotalInstanceCount": 1,
                "StartDate": start,
                "EndDate": start + dt.timedelta(days=days),
            }
        ]
    }


@pytest.mark.parametrize(
    ("response", "status", "fragment"),
    [
        (_reservation(), OK, "active"),
        (_reservation(state="scheduled", start=NOW + dt.timedelta(days=2)), WARNING, "no node launches before 2026-12-07"),
        (_reservation(start=NOW - dt.timedelta(days=13, hours=12)), WARNING, "ends 2026-12-06"),
        (_reservation(state="expired", start=NOW - dt.timedelta(days=30)), BLOCKER, "is expired"),
        (_reservation(itype="p5en.48xlarge"), BLOCKER, "reserves p5en.48xlarge"),
        (_reservation(zone="us-east-1a"), BLOCKER, "is in us-east-1a"),
    ],
)
def test_a_capacity_block_is_checked_for_state_window_type_and_zone(response, status, fragment):
    config = load_stack_config(_config("prod", _with_b200), "prod")
    ec2 = _client("ec2")
    with Stubber(ec2) as stub:
        stub.add_response("describe_capacity_reservations", response, {"CapacityReservationIds": ["cr-0b200example0000"]})
        (finding,) = check_capacity_reservations(ec2, config, NOW)
    assert finding.status == status and fragment in finding.detail, finding.detail


def test_a_capacity_block_that_does_not_exist_is_a_blocker():
    config = load_stack_config(_config("prod", _with_b200), "prod")
    ec2 = _client("ec2")
    with Stubber(ec2) as stub:
        stub.add_client_error("describe_capacity_reservations", "InvalidCapacityReservationId.NotFound")
        (finding,) = check_capacity_reservations(ec2, config, NOW)
    assert finding.status == BLOCKER and "reservationId" in finding.detail


# ---- AWS: quota headroom beside running instances


def test_quota_headroom_counts_what_already_runs(stack_config):
    config = stack_config("prod")
    ec2, quotas = _client("ec2"), _client("service-quotas")
    running = {
        "Reservations": [
            {
                "Instances": [
                    {"InstanceType": "p5en.48xlarge", "CpuOptions": {"CoreCount": 96, "ThreadsPerCore": 2}},
                    {"InstanceType": "g6e.xlarge", "InstanceLifecycle": "spot", "CpuOptions": {"CoreCount": 2, "ThreadsPerCore": 2}},
                    {"InstanceType": "m6i.large", "CpuOptions": {"CoreCount": 1, "ThreadsPerCore": 2}},
                    {  # the stack's own node: its ceiling counts it already
                        "InstanceType": "p5en.48xlarge",
                        "CpuOptions": {"CoreCount": 96, "ThreadsPerCore": 2},
                        "Tags": [{"Key": "kubernetes.io/cluster/tf-prod", "Value": "owned"}],
                    },
                ]
            }
        ]
    }
    with Stubber(ec2) as stub:
        stub.add_response("describe_instances", running)
        used = running_vcpus(ec2, "tf-prod")
    p_on_demand, g_spot = EC2_VCPU_QUOTAS["p5en"]["on-demand"], EC2_VCPU_QUOTAS["g6e"]["spot"]
    assert used[p_on_demand] == 192 and used[g_spot] == 4
    with Stubber(quotas) as stub:
        for code in ("L-3819A6DF", "L-417A185B", "L-C4BD4855", "L-DB2E81BA"):
            stub.add_response("get_service_quota", {"Quota": {"QuotaCode": code, "Value": 700.0}})
        findings = {f.data["quotaCode"]: f for f in check_quotas(quotas, config, used)}
    on_demand = findings[p_on_demand.code]
    assert on_demand.status == WARNING and "already run" in on_demand.detail and on_demand.data["runningVcpus"] == 192
    assert findings[g_spot.code].status == OK and findings[g_spot.code].data["runningVcpus"] == 4


# ---- GCP: APIs and bucket names


class _Services:
    def __init__(self, enabled):
        self.enabled_apis = enabled

    def enabled(self, project):
        if isinstance(self.enabled_apis, Exception):
            raise self.enabled_apis
        return set(self.enabled_apis)


def test_gcp_apis_the_stack_needs_are_reported_and_serviceusage_off_blocks(stack_config):
    config = stack_config("gcp-prod")
    needed = project_apis(uses_kms=False)
    findings = {f.subject: f for f in check_apis(_Services(needed), config)}
    assert set(findings) == set(needed) and all(f.status == OK for f in findings.values())
    findings = {f.subject: f for f in check_apis(_Services({"container.googleapis.com"}), config)}
    assert findings[SERVICE_USAGE_API].status == BLOCKER
    assert "gcloud services enable serviceusage.googleapis.com --project acme-ml-prod" in findings[SERVICE_USAGE_API].detail
    assert findings["compute.googleapis.com"].status == WARNING and "enables it" in findings["compute.googleapis.com"].detail
    (unknown,) = check_apis(_Services(Forbidden("serviceusage.services.list denied")), config)
    assert unknown.status == UNKNOWN and "not checked" in unknown.detail


class _Storage:
    def __init__(self, error=None):
        self.error = error

    def get_bucket(self, name, timeout=None):
        assert timeout is not None  # every preflight call is bounded
        if self.error:
            raise self.error
        return object()


@pytest.mark.parametrize(
    ("error", "status"), [(NotFound("no"), OK), (Forbidden("theirs"), BLOCKER), (None, WARNING)]
)
def test_gcs_bucket_names_are_asked(stack_config, error, status):
    (finding,) = check_gcs_bucket_names(_Storage(error), stack_config("gcp-prod"))
    assert finding.status == status and finding.subject == "bucket models: tf-gcp-prod-models-acme-ml-prod-us-central1"


class _Response:
    def __init__(self, status: int, body: dict, method: str, url: str):
        self.status_code, self.body = status, body
        self.headers, self.text = {}, json.dumps(body)
        self.request = SimpleNamespace(method=method, url=url)  # what from_http_response names in its message

    def json(self):
        return self.body


class _Session:
    """An AuthorizedSession's get/post, answering from a list of (status, body), recording what was asked."""

    def __init__(self, *answers):
        self.answers, self.asked = list(answers), []

    def get(self, url, params=None, timeout=None):
        self.asked.append((url, dict(params or {})))
        return _Response(*self.answers.pop(0), "GET", url)

    def post(self, url, json=None, timeout=None):
        self.asked.append((url, json))
        return _Response(*self.answers.pop(0), "POST", url)


def test_service_usage_pages_through_the_enabled_apis_and_maps_errors():
    from tritonfleet.clouds.gcp.preflight import ServiceUsage

    session = _Session(
        (200, {"services": [{"config": {"name": "compute.googleapis.com"}}], "nextPageToken": "t1"}),
        (200, {"services": [{"config": {"name": "container.googleapis.com"}}]}),
    )
    assert ServiceUsage(session).enabled("acme-ml-prod") == {"compute.googleapis.com", "container.googleapis.com"}
    assert session.asked[0][0] == "https://serviceusage.googleapis.com/v1/projects/acme-ml-prod/services"
    assert session.asked[0][1]["filter"] == "state:ENABLED" and session.asked[1][1]["pageToken"] == "t1"
    with pytest.raises(Forbidden):
        ServiceUsage(_Session((403, {"error": {"message": "denied"}}))).enabled("acme-ml-prod")


def test_the_deployers_missing_permissions_are_a_warning(stack_config):
    from tritonfleet.clouds.gcp.facts import DEPLOYER_PERMISSIONS
    from tritonfleet.clouds.gcp.preflight import ProjectPermissions, check_deployer_permissions

    config = stack_config("gcp-prod")
    everything = _Session((200, {"permissions": list(DEPLOYER_PERMISSIONS)}))
    (ok,) = check_deployer_permissions(ProjectPermissions(everything), config)
    assert ok.status == OK and everything.asked[0] == (
        "https://cloudresourcemanager.googleapis.com/v1/projects/acme-ml-prod:testIamPermissions",
        {"permissions": list(DEPLOYER_PERMISSIONS)},
    )
    some = _Session((200, {"permissions": ["container.clusters.create"]}))
    (warning,) = check_deployer_permissions(ProjectPermissions(some), config)
    assert warning.status == WARNING and "serviceusage.services.enable" in warning.data["missing"]
    assert "container.clusters.create" not in warning.data["missing"]
    (unknown,) = check_deployer_permissions(ProjectPermissions(_Session((403, {}))), config)
    assert unknown.status == UNKNOWN


# ---- AWS: an in-VPC deployer


def test_an_in_vpc_deployer_is_checked_against_the_vpcs_cidrs():
    from tritonfleet.clouds.aws.preflight import check_deployer_network

    def in_vpc(cidrs):
        def edit(data):
            data["tritonfleet:cluster"].update(
                deployFrom="private-network",
                deployerCidrs=cidrs,
                controlPlaneCidrs=[],
                existingVpcId="vpc-0123456789abcdef0",
                existingPrivateSubnets={"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
                existingLoadBalancerCidrs=["10.0.224.0/24"],
                zones=["us-east-1a", "us-east-1b"],
            )

        return load_stack_config(_config("dev", edit), "dev")

    vpc = {"Vpcs": [{"VpcId": "vpc-0123456789abcdef0", "CidrBlock": "10.0.0.0/16"}]}
    for cidrs, status in ((["10.0.8.0/24"], OK), (["192.168.1.0/24"], UNKNOWN)):
        ec2 = _client("ec2")
        with Stubber(ec2) as stub:
            stub.add_response("describe_vpcs", vpc, {"VpcIds": ["vpc-0123456789abcdef0"]})
            (finding,) = check_deployer_network(ec2, in_vpc(cidrs))
        assert finding.status == status, finding.detail
    assert "routes to the VPC" in finding.detail and finding.data["outside"] == ["192.168.1.0/24"]
    assert check_deployer_network(_client("ec2"), load_stack_config(engine_config("dev"), "dev")) == []  # hosted-ci
