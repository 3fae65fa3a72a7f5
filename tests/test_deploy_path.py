"""Where each stack is deployed from, and that the deployer reaches the API endpoint it configures: the config rule
(bad deploy paths fail with the key and the fix), the plan's line, the cluster security group's 443 rule for an
in-VPC runner, GKE's DNS-based endpoint, and the CI action against the kubeconfig the Kubernetes provider runs."""

from __future__ import annotations

import json

import pulumi
import pytest
import yaml
from conftest import ROOT, config_problems, engine_config
from pulumi.runtime import mocks, settings

from components.gcp.cluster import kubeconfig, provider_kubeconfig
from tritonfleet.clouds.aws import config_rules as aws_rules
from tritonfleet.clouds.aws.exposure import api_ingress_cidrs
from tritonfleet.clouds.aws.facts import EKS_TOKEN_COMMAND
from tritonfleet.clouds.gcp.facts import GKE_AUTH_PLUGIN
from tritonfleet.core.config import ConfigError, load_stack_config
from tritonfleet.core.exposure import uncovered
from tritonfleet.plan.fake_state import fake_call, fake_outputs

STACKS = ("dev", "staging", "prod", "gcp-dev", "gcp-prod")
VPC = {
    "existingVpcId": "vpc-0123456789abcdef0",
    "existingPrivateSubnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    "existingLoadBalancerCidrs": ["10.0.224.0/24"],
    "zones": ["us-east-1a", "us-east-1b"],
}


def _config(stack: str, cluster: dict) -> dict[str, str]:
    raw = dict(engine_config(stack))
    raw["tritonfleet:cluster"] = json.dumps({**json.loads(raw.get("tritonfleet:cluster", "{}")), **cluster})
    return raw


def _problems(stack: str, cluster: dict) -> dict[str, tuple]:
    return config_problems(_config(stack, cluster), stack)


# ---- the rule


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_is_deployed_from_hosted_ci_and_reaches_its_endpoint(stack_config, stack):
    from tritonfleet.core.cloud import cloud

    config = stack_config(stack)
    # Said in the stack file itself, as .github/workflows/deploy.yml runs them.
    assert json.loads(engine_config(stack)["tritonfleet:cluster"])["deployFrom"] == "hosted-ci"
    path = cloud(config.cloud).rules.deploy_path(config.cluster, config.environment)
    assert path.reachable, path.why


def test_prod_on_aws_with_a_private_endpoint_and_hosted_ci_is_refused_with_the_fix():
    found = _problems("prod", {"controlPlaneCidrs": [], "acknowledgePublicControlPlane": False})
    value, allowed, fix = found["cluster.deployFrom"]
    assert value == "hosted-ci" and "no fixed address" in allowed and "private only" in allowed
    assert "deployFrom private-network" in allowed  # the other way out is named
    assert fix == (
        "pulumi config set --path 'tritonfleet:cluster.controlPlaneCidrs[0]' 0.0.0.0/0 --stack prod && "
        "pulumi config set --path 'tritonfleet:cluster.acknowledgePublicControlPlane' true --stack prod"
    )
    assert list(found) == ["cluster.deployFrom"]


def test_the_prod_default_endpoint_is_private_so_an_unset_prod_stack_names_its_deployer():
    raw = _config("prod", {})
    cluster = json.loads(raw["tritonfleet:cluster"])
    for key in ("controlPlaneCidrs", "acknowledgePublicControlPlane", "deployFrom"):
        cluster.pop(key)
    raw["tritonfleet:cluster"] = json.dumps(cluster)
    with pytest.raises(ConfigError) as caught:
        load_stack_config(raw, "prod")
    assert [p.key for p in caught.value.problems] == ["cluster.deployFrom"]


def test_known_addresses_must_be_inside_the_public_endpoints_cidrs():
    cluster = {"deployFrom": "public-cidrs", "deployerCidrs": ["198.51.100.0/24", "203.0.113.8/29"]}
    found = _problems("dev", {**cluster, "controlPlaneCidrs": ["198.51.100.0/23"]})
    value, allowed, fix = found["cluster.deployFrom"]
    assert "203.0.113.8/29" in allowed and "198.51.100.0/24" not in allowed.split("(")[0]
    assert fix == "pulumi config set --path 'tritonfleet:cluster.controlPlaneCidrs[1]' 203.0.113.8/29 --stack dev"
    config = load_stack_config(_config("dev", {**cluster, "controlPlaneCidrs": ["198.51.100.0/23", "203.0.113.0/24"]}), "dev")
    assert aws_rules.deploy_path(config.cluster, "dev").endpoint.startswith("EKS public endpoint")


def test_an_in_vpc_runner_needs_an_existing_vpc_and_gets_443_on_the_cluster_security_group():
    runner = {"deployFrom": "private-network", "deployerCidrs": ["10.0.8.0/24"], "controlPlaneCidrs": []}
    found = _problems("dev", runner)
    value, allowed, fix = found["cluster.deployFrom"]
    assert "no runner or VPN is inside it" in allowed and "existingVpcId" in fix
    config = load_stack_config(_config("dev", {**runner, **VPC}), "dev")
    path = aws_rules.deploy_path(config.cluster, "dev")
    assert path.reachable and "443 from 10.0.8.0/24" in path.endpoint
    assert api_ingress_cidrs(config.cluster.deploy_from, config.cluster.deployer_cidrs) == ["10.0.8.0/24"]
    assert api_ingress_cidrs("hosted-ci", []) == [] and api_ingress_cidrs("public-cidrs", ["198.51.100.0/24"]) == []


@pytest.mark.parametrize(
    ("cluster", "key", "fragment"),
    [
        ({"deployFrom": "public-cidrs"}, "cluster.deployerCidrs[0]", "required with deployFrom public-cidrs"),
        ({"deployerCidrs": ["198.51.100.0/24"]}, "cluster.deployerCidrs", "hosted runners have no fixed address"),
        ({"deployFrom": "public-cidrs", "deployerCidrs": ["198.51.100.1/24"]}, "cluster.deployerCidrs[0]", "a CIDR"),
        ({"deployFrom": "laptop"}, "cluster.deployFrom", "hosted-ci"),
    ],
)
def test_bad_deployer_settings_name_the_key_and_the_fix(cluster, key, fragment):
    found = _problems("dev", cluster)
    assert fragment in found[key][1] or fragment in str(found[key]), found
    assert found[key][2].startswith("pulumi config")


def test_gke_is_reached_through_its_dns_endpoint_from_anywhere():
    for deploy_from in ({}, {"deployFrom": "public-cidrs", "deployerCidrs": ["198.51.100.0/24"]}):
        config = load_stack_config(_config("gcp-prod", deploy_from), "gcp-prod")
        from tritonfleet.clouds.gcp.config_rules import deploy_path

        path = deploy_path(config.cluster, "prod")
        assert path.reachable and "DNS-based endpoint" in path.endpoint


def test_uncovered_cidrs():
    assert uncovered(("10.1.2.0/24", "10.9.0.0/16"), ("10.1.0.0/16",)) == ["10.9.0.0/16"]
    assert uncovered(("10.1.2.0/24",), ("0.0.0.0/0",)) == [] and uncovered(("10.1.2.0/24",), ()) == ["10.1.2.0/24"]


# ---- the plan


@pytest.mark.parametrize(("stack", "endpoint"), [("prod", "EKS public endpoint"), ("gcp-prod", "GKE DNS-based endpoint")])
def test_the_plan_says_where_the_stack_is_deployed_from(stack, endpoint):
    from tests.serving_helpers import plan
    from tritonfleet.cli.output import out
    from tritonfleet.cli.plan import print_plan

    document = plan(stack)
    path = document["cloudNotes"]["deployPath"]
    assert path["deployFrom"] == "hosted-ci" and path["reachable"] and path["endpoint"].startswith(endpoint)
    with out.capture() as captured:
        print_plan(document)
    text = " ".join(captured.get().split())
    assert f"Deployed from hosted CI runners (no fixed address): reaches the {endpoint}" in text


def test_the_gke_plan_uses_the_dns_endpoint_and_keeps_the_ip_endpoint_private():
    from tests.serving_helpers import plan

    (cluster,) = [r for r in plan("gcp-prod")["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    assert cluster["inputs"]["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["allowExternalTraffic"] is True
    assert cluster["inputs"]["privateClusterConfig"]["enablePrivateEndpoint"] is True


# ---- CI: the action provides what the Kubernetes provider's kubeconfig runs


def _exec_commands(kubeconfig_text: str) -> set[str]:
    users = yaml.safe_load(kubeconfig_text)["users"]
    return {u["user"]["exec"]["command"] for u in users if "exec" in u["user"]}


def _installed_by(action: dict) -> set[str]:
    """Commands the composite action installs: gcloud components named to google-github-actions/setup-gcloud."""
    installed = set()
    for step in action["runs"]["steps"]:
        if str(step.get("uses", "")).startswith("google-github-actions/setup-gcloud"):
            installed |= {c.strip() for c in str(step.get("with", {}).get("install_components", "")).split(",") if c.strip()}
    return installed


class _RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self):
        self.providers: dict[str, dict] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        if args.typ == "pulumi:providers:kubernetes":
            self.providers[args.name] = dict(args.inputs)
        return f"{args.name}-id", fake_outputs(args.typ, args.name, dict(args.inputs))

    def call(self, args: pulumi.runtime.MockCallArgs):
        answer = fake_call(args.token)
        if answer is None:
            raise AssertionError(f"unexpected invoke {args.token}")
        return answer


@pytest.fixture
def recorded_gcp_prod():
    settings.ROOT.set(None)
    pulumi.runtime.set_all_config({}, [])
    recording = _RecordingMocks()
    monitor = mocks.MockMonitor(recording)
    pulumi.runtime.set_mocks(monitor.mocks, project="tritonfleet", stack="gcp-prod", preview=False, monitor=monitor)
    yield recording, load_stack_config(engine_config("gcp-prod"), "gcp-prod")
    settings.ROOT.set(None)


@pulumi.runtime.test
async def test_the_gke_provider_kubeconfig_runs_nothing_the_ci_runner_lacks(recorded_gcp_prod):
    from components.gcp.cloud import GcpCloud

    recording, config = recorded_gcp_prod
    cloud = GcpCloud("t", config)
    await cloud.facts.kubeconfig.future()
    await pulumi.Output.from_input(cloud.facts.provider).id.future()
    (inputs,) = recording.providers.values()
    text = inputs["kubeconfig"]
    text = text["value"] if isinstance(text, dict) else text  # a secret arrives wrapped
    document = yaml.safe_load(text)
    assert document["clusters"][0]["cluster"]["server"].endswith(".us-central1.gke.goog")
    assert document["users"][0]["user"] == {"token": "offline-plan-access-token"}
    action = yaml.safe_load((ROOT / ".github/actions/pulumi-stack/action.yml").read_text())
    assert _exec_commands(text) <= _installed_by(action)  # nothing to exec: no plugin needed on the runner


def test_the_ci_action_and_workflow_provide_what_every_kubeconfig_runs():
    from components.aws.cloud import kubeconfig as eks_kubeconfig

    action = yaml.safe_load((ROOT / ".github/actions/pulumi-stack/action.yml").read_text())
    workflow = yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text())
    steps = [str(s.get("uses", "")) for s in action["runs"]["steps"]]
    # Every deploy job runs on a GitHub-hosted Ubuntu image (hosted-ci, as every shipped stack says).
    jobs = {j["with"]["stack"]: job for job in workflow["jobs"].values() for j in job["steps"] if "with" in j and "stack" in j.get("with", {})}
    assert set(jobs) == set(STACKS) and all(job["runs-on"].startswith("ubuntu-") for job in jobs.values())
    # EKS: `aws eks get-token`, the AWS CLI of the hosted image, with credentials from configure-aws-credentials.
    assert _exec_commands(eks_kubeconfig("c", "https://e", "ca", "us-east-1")) == {EKS_TOKEN_COMMAND}
    assert any(s.startswith("aws-actions/configure-aws-credentials") for s in steps)
    # GKE: the kubeconfig for people execs the plugin, which the action does not install, so the provider never uses it.
    assert _exec_commands(kubeconfig("c", "gke-x.us-central1.gke.goog")) == {GKE_AUTH_PLUGIN}
    assert GKE_AUTH_PLUGIN not in _installed_by(action)
    assert _exec_commands(provider_kubeconfig("c", "gke-x.us-central1.gke.goog", "t")) == set()


@pytest.mark.parametrize(("stack", "identifier"), [("prod", "arn:aws:eks:"), ("gcp-prod", "tf-gcp-gke")])
def test_the_kubernetes_provider_is_tied_to_its_cluster_not_to_its_endpoint(stack, identifier):
    """A token that changes every run or an endpoint that moves updates the provider; only a new cluster replaces
    it (and every Kubernetes object with it)."""
    from tests.serving_helpers import plan

    (provider,) = [r for r in plan(stack)["resources"] if r["type"] == "pulumi:providers:kubernetes"]
    assert provider["inputs"]["clusterIdentifier"].startswith(identifier)


def test_an_unreachable_deployer_fails_the_plan_with_exit_1_and_the_fix(tmp_path):
    import shutil

    from tests.conftest import one_line, run_cli

    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    cluster = document["config"]["tritonfleet:cluster"]
    del cluster["controlPlaneCidrs"], cluster["acknowledgePublicControlPlane"]
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text(yaml.safe_dump(document))
    result = run_cli("plan", "--stack", "prod", "--project-dir", str(tmp_path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    message = one_line(result.stderr)  # wrapped at the terminal's width
    assert 'tritonfleet:cluster.deployFrom = "hosted-ci"' in message
    assert "fix: pulumi config set --path 'tritonfleet:cluster.controlPlaneCidrs[0]' 0.0.0.0/0" in message


def test_the_gke_ip_endpoint_is_private_unless_cidrs_are_named():
    from tritonfleet.clouds.gcp.exposure import gke_ip_endpoint_access

    assert gke_ip_endpoint_access(None, "dev").private_only and gke_ip_endpoint_access(None, "prod").private_only
    assert gke_ip_endpoint_access(["198.51.100.0/24"], "dev").public_cidrs == ("198.51.100.0/24",)


def test_an_in_vpc_runner_gets_443_on_the_cluster_security_group_in_the_program():
    from tests.conftest import run_program

    runner = {"deployFrom": "private-network", "deployerCidrs": ["10.0.8.0/24", "10.0.9.0/24"], "controlPlaneCidrs": []}
    run = run_program(ROOT, "tritonfleet", "dev", _config("dev", {**runner, **VPC}), [])
    resources = [r.document() for r in run.resources]
    rules = [r for r in resources if r["type"] == "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"]
    assert sorted(r["inputs"]["cidrIpv4"] for r in rules) == ["10.0.8.0/24", "10.0.9.0/24"]
    assert all(r["inputs"]["fromPort"] == r["inputs"]["toPort"] == 443 and r["inputs"]["ipProtocol"] == "tcp" for r in rules)
    (eks,) = [r for r in resources if r["type"] == "aws:eks/cluster:Cluster"]
    assert eks["inputs"]["vpcConfig"]["endpointPublicAccess"] is False  # the API stays off the internet
    from tests.serving_helpers import plan

    hosted = plan("dev")["resources"]  # the shipped dev, deployed from hosted runners: no rule
    assert not [r for r in hosted if r["type"] == "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"]
