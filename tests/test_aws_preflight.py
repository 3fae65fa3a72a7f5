"""`tritonfleet preflight` against a local moto server (EC2 zones, offerings, spot prices), and Service Quotas
through botocore's Stubber with the real API's response shape (moto serves quotas only for the vpc service)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import boto3
import pytest
import yaml
from botocore.stub import Stubber

from tests.conftest import ROOT, engine_config, one_line, run_cli
from tests.local_servers import free_port
from tritonfleet.clouds.aws.facts import EC2_VCPU_QUOTAS
from tritonfleet.clouds.aws.preflight import check_s3_endpoint, check_spot_prices, run_preflight
from tritonfleet.core.config import load_stack_config

QUOTA_NAMES = {q.code: q.name for markets in EC2_VCPU_QUOTAS.values() for q in markets.values()}

MOTO_SERVER = Path(sys.executable).with_name("moto_server")


@pytest.fixture(scope="module")
def moto_endpoint(tmp_path_factory):
    if not MOTO_SERVER.exists():
        pytest.skip("moto_server is not installed (pip install 'moto[server]')")
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with log.open("w") as out:
        process = subprocess.Popen([str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):  # at most ~10 s
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1)
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"moto_server exited: {log.read_text()}")
                time.sleep(0.1)
        else:
            pytest.fail("moto_server did not answer within its start-up bound")
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def aws_env(moto_endpoint, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return moto_endpoint


def project_with(tmp_path: Path, stack: str, change) -> Path:
    """A copy of the project's Pulumi.yaml with one stack file, changed by `change(config)`."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    document = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    change(document["config"])
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def test_prod_passes_offerings_and_says_quotas_are_unknown(aws_env, tmp_path):
    report_file = tmp_path / "preflight.json"
    result = run_cli("preflight", "--stack", "prod", "--json", str(report_file))
    report = json.loads(report_file.read_text())
    # The emulator publishes no EKS AMI (its SSM refuses /aws/ names): the pinned release is the one blocker.
    (ami,) = [f for f in report["findings"] if f["status"] == "blocker"]
    assert result.returncode == 1 and ami["check"] == "ami" and "amiReleaseVersion" in ami["detail"]
    assert ami["data"]["parameter"].endswith("/amazon-eks-node-al2023-x86_64-nvidia-1.35-v20260903/image_id")
    (bucket,) = [f for f in report["findings"] if f["check"] == "bucket"]
    assert bucket["status"] == "ok" and bucket["subject"] == "bucket models: tf-prod-models-123456789012-us-east-1"
    offerings = [f for f in report["findings"] if f["check"] == "offering"]
    assert {f["subject"] for f in offerings} >= {"pool h200: p5en.48xlarge", "pool l40s: g6e.xlarge", "system nodes: m6i.xlarge"}
    quotas = [f for f in report["findings"] if f["check"] == "quota"]
    assert quotas and all(f["status"] == "unknown" and f["detail"].startswith("unknown (not checked") for f in quotas)
    # p5en spot draws on the P5 spot quota, not "All P4, P3 and P2 Spot Instance Requests"
    assert {f["data"]["quotaCode"] for f in quotas} == {"L-DB2E81BA", "L-3819A6DF", "L-417A185B", "L-C4BD4855"}
    spot = [f for f in report["findings"] if f["check"] == "spot-price"]
    assert {f["data"]["instanceType"] for f in spot} >= {"p5en.48xlarge", "g6e.xlarge"}


def test_type_not_offered_in_a_zone_is_a_blocker(aws_env, tmp_path):
    def h200_everywhere(config):
        h200 = next(pool for pool in config["tritonfleet:gpuPools"] if pool["name"] == "h200")
        del h200["zones"]

    project = project_with(tmp_path, "prod", h200_everywhere)
    result = run_cli("preflight", "--stack", "prod", "--project-dir", str(project), "--json", str(tmp_path / "r.json"))
    assert result.returncode == 1
    assert "blocker" in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    (blocker,) = [f for f in report["findings"] if f["status"] == "blocker" and f["check"] != "ami"]
    assert blocker["subject"] == "pool h200: p5en.48xlarge"
    assert blocker["data"]["missingZones"] == ["us-east-1b"]
    assert "gpuPools[].zones" in blocker["detail"]


def test_zone_the_region_does_not_have_is_a_blocker(aws_env, tmp_path):
    def zone_z(config):
        config["tritonfleet:cluster"]["zones"] = ["us-east-1a", "us-east-1z"]

    project = project_with(tmp_path, "dev", zone_z)
    result = run_cli("preflight", "--stack", "dev", "--project-dir", str(project), "--json", str(tmp_path / "r.json"))
    assert result.returncode == 1
    report = json.loads((tmp_path / "r.json").read_text())
    assert any(f["check"] == "zones" and f["subject"] == "us-east-1z" and f["status"] == "blocker" for f in report["findings"])


def _quota_response(code: str, value: float) -> dict:
    """GetServiceQuota's response shape (botocore validates it against the service model)."""
    return {
        "Quota": {
            "ServiceCode": "ec2",
            "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
            "QuotaArn": f"arn:aws:servicequotas:us-east-1:123456789012:ec2/{code}",
            "QuotaCode": code,
            "QuotaName": QUOTA_NAMES[code],
            "Value": value,
            "Unit": "None",
            "Adjustable": True,
            "GlobalQuota": False,
        }
    }


def _clients(endpoint: str):
    kwargs = {"region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    return boto3.client("ec2", endpoint_url=endpoint, **kwargs), boto3.client("service-quotas", **kwargs)


def test_over_quota_is_a_blocker_with_code_and_numbers(moto_endpoint, stack_config):
    config = stack_config("prod")
    ec2, quotas = _clients(moto_endpoint)
    # prod at its ceiling, each NodePool tier once per market it may buy: G on-demand 2 x 4 (base) + 6 x 16 (burst
    # fallback, largest listed type), G spot 6 x 16, P on-demand 1 x 192 + 2 x 192 (fallback), P spot 2 x 192
    values = {"L-DB2E81BA": 128, "L-3819A6DF": 32, "L-417A185B": 576, "L-C4BD4855": 0}
    with Stubber(quotas) as stub:
        for code in sorted(values):  # the order preflight asks in
            stub.add_response("get_service_quota", _quota_response(code, values[code]), {"ServiceCode": "ec2", "QuotaCode": code})
        report = run_preflight(config, ec2, quotas)
        stub.assert_no_pending_responses()
    quota = {f.data["quotaCode"]: f for f in report.findings if f.check == "quota"}
    assert quota["L-DB2E81BA"].status == "ok" and quota["L-DB2E81BA"].data["neededVcpus"] == 104
    assert quota["L-417A185B"].status == "ok" and quota["L-417A185B"].data["neededVcpus"] == 576
    assert quota["L-3819A6DF"].status == "blocker" and quota["L-3819A6DF"].data["neededVcpus"] == 96
    assert "32 vCPUs < 96 needed" in quota["L-3819A6DF"].detail
    assert "--quota-code L-3819A6DF --desired-value 96" in quota["L-3819A6DF"].detail
    assert quota["L-C4BD4855"].status == "blocker" and quota["L-C4BD4855"].data["neededVcpus"] == 384
    assert {f.subject for f in report.blockers} == {quota["L-3819A6DF"].subject, quota["L-C4BD4855"].subject}


def test_quota_api_denied_is_unknown_not_passed(moto_endpoint, stack_config):
    ec2, quotas = _clients(moto_endpoint)
    with Stubber(quotas) as stub:
        for _ in range(4):
            stub.add_client_error("get_service_quota", "AccessDeniedException", "not authorized to perform GetServiceQuota")
        report = run_preflight(stack_config("prod"), ec2, quotas)
    quota = [f for f in report.findings if f.check == "quota"]
    assert all(f.status == "unknown" and "AccessDeniedException" in f.detail for f in quota)
    assert not report.blockers


def test_existing_vpc_without_an_s3_endpoint_is_a_warning_with_the_nat_price(moto_endpoint, stack_config):
    ec2, quotas = _clients(moto_endpoint)
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    config = stack_config("dev")
    subnets = {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"}
    cluster = config.cluster.model_copy(
        update={"existing_vpc_id": vpc, "existing_vpc_cidr": "10.20.0.0/16", "existing_private_subnets": subnets}
    )
    config = config.model_copy(update={"cluster": cluster})
    (finding,) = check_s3_endpoint(ec2, config)
    assert finding.status == "warning" and "$0.045/GB NAT processing" in finding.detail
    assert f"create-vpc-endpoint --vpc-id {vpc} --vpc-endpoint-type Gateway" in finding.detail
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_vpc_endpoint(VpcId=vpc, ServiceName="com.amazonaws.us-east-1.s3", VpcEndpointType="Gateway", RouteTableIds=[table])
    (finding,) = check_s3_endpoint(ec2, config)
    assert finding.status == "ok" and finding.data["endpoints"][0].startswith("vpce-")
    assert check_s3_endpoint(ec2, stack_config("dev")) == []  # a VPC tritonfleet creates has one by construction


def test_no_credentials_is_said_before_any_call(tmp_path):
    """No AWS_* credentials, empty config files, no instance metadata: the user is told how to provide credentials.

    AWS_ENDPOINT_URL points at a closed local port, so an API call, had one been made, would fail differently."""
    (tmp_path / "config").write_text("")
    (tmp_path / "credentials").write_text("")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        "PYTHONPATH": str(ROOT),
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "HOME": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "-m", "tritonfleet", "preflight", "--stack", "prod"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert "no AWS credentials found, so nothing was checked" in one_line(result.stderr)
    assert "AWS_ACCESS_KEY_ID" in one_line(result.stderr) and "aws configure" in one_line(result.stderr)
    assert "did not answer" not in result.stderr and "Traceback" not in result.stderr


class _SpotHistory:
    """An EC2 client that answers describe_spot_price_history with one price per type and zone (the API's shape)."""

    def __init__(self, region: str, usd: float):
        self.region, self.usd = region, usd

    def describe_spot_price_history(self, InstanceTypes, ProductDescriptions, StartTime):  # noqa: N803 (boto3's names)
        zones = [f"{self.region}{z}" for z in "abc"]
        return {"SpotPriceHistory": [
            {"InstanceType": t, "AvailabilityZone": z, "SpotPrice": f"{self.usd:.6f}", "Timestamp": StartTime}
            for t in InstanceTypes for z in zones
        ]}  # fmt: skip


@pytest.mark.parametrize(("region", "catalog_text", "catalog_usd"), [
    ("eu-central-1", "catalog in eu-central-1: $0.7730", 0.773),  # the catalog's regional figure
    ("eu-west-1", "catalog in eu-west-1: unknown", None),  # none there: never us-east-1's $1.208
])  # fmt: skip
def test_spot_prices_are_compared_with_the_regions_catalog_price(region, catalog_text, catalog_usd):
    raw = engine_config("dev")
    raw["tritonfleet:region"] = region
    raw["tritonfleet:gpuPools"] = json.dumps([{"name": "l40s", "gpu": "L40S", "instanceType": "g6e.xlarge", "maxNodes": 2, "spotShare": 1}])
    raw["tritonfleet:cluster"] = json.dumps({"zones": [f"{region}a", f"{region}b"]})
    raw["tritonfleet:tritonDeployments"] = "[]"
    (finding,) = check_spot_prices(_SpotHistory(region, 0.9), load_stack_config(raw, "test"))
    assert finding.subject == "pool l40s: g6e.xlarge" and finding.data["catalogUsdPerHour"] == catalog_usd
    assert finding.detail == f"{region}a $0.9000, {region}b $0.9000 ({catalog_text})"
