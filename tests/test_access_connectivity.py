"""The NetworkPolicies the chart renders, proven with a real NetworkPolicy engine (network-config-analyzer, `nca`).

For every shipped stack: its releases as planned (exposure `cluster`, default clients), then `internal` (network load
balancer), `internal` with `loadBalancer: application` and `public` with a named client namespace. Each case lives in its own namespaces of one simulated cluster, next to peer pods (a
client, a pod of the same namespace that is no client, a pod of an unnamed namespace, Prometheus and another pod in
`monitoring`, kube-dns) and addresses (the load balancer's sources, a client network, pod and VPC ranges, the
internet, the metadata servers). nca computes the connectivity map once; every cell of the expected matrix
(components/k8s/access_matrix.py, the same data docs/access.md shows) is checked in both directions.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.k8s.access import access_values, client_label
from components.k8s.access_matrix import EGRESS_PEERS, INGRESS_PEERS, cloud_facts, egress, ingress
from tests.conftest import ROOT, STACKS, engine_config
from tests.plan_cache import shared_text, tool_stamp
from tests.serving_helpers import planned_values, render, triton_cases
from tritonfleet.clouds.aws.layout import load_balancer_cidrs, subnet_layout
from tritonfleet.clouds.aws.zones import aws_zones
from tritonfleet.clouds.gcp.layout import NODE_CIDR, POD_CIDR
from tritonfleet.core.config import TritonDeployment, load_stack_config
from tritonfleet.core.conventions import triton_release_name
from tritonfleet.core.exposure import CLUSTER, INTERNAL, INTERNAL_APPLICATION, MODES, PUBLIC

# network-config-analyzer pins PyYAML and networkx exactly (conflicting with the project's pins), so it lives in its
# own virtualenv (`make test` creates venv-nca/, like venv-checkov/).
NCA = os.environ.get("NCA") or shutil.which("nca") or str(ROOT / "venv-nca" / "bin" / "nca")

# What each peer is probed on: every port any rule could open, and ports no rule opens.
PROBES = frozenset(
    {
        ("UDP", 53),
        ("TCP", 53),
        ("TCP", 80),
        ("TCP", 443),
        ("TCP", 988),
        ("TCP", 8000),
        ("TCP", 8001),
        ("TCP", 8002),
        ("TCP", 8003),
        ("TCP", 22),
        ("UDP", 8000),
    }
)
INTERNET = "203.0.113.7"
ACM_ARN = "arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-aaaa-bbbb-cccc-123456789012"
CLIENT_NETWORK = "172.20.0.0/16"  # clientCidrs of the internal cases


@dataclass
class Case:
    """One stack in one exposure mode (tritonfleet.core.exposure), in namespaces of its own (prefix) of the simulated
    cluster."""

    label: str
    stack: str
    cloud: str
    exposure: str  # the mode
    prefix: str
    releases: dict[str, dict[str, Any]]  # release name -> chart values
    named_namespace: bool
    rest_only: bool = False  # an Application load balancer with loadBalancerGrpc false
    objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return f"{self.prefix}-triton"


def _stack_config(stack: str):
    return load_stack_config(engine_config(stack), stack)


def _exposed_access(case_prefix: str, cloud: str, mode: str, rest_only: bool = False) -> dict[str, Any]:
    access: dict[str, Any] = {"exposure": "internal" if mode == INTERNAL_APPLICATION else mode, "clientNamespaces": [f"{case_prefix}-apps"]}
    if rest_only:
        access["loadBalancerGrpc"] = False
    if mode == INTERNAL or (mode == INTERNAL_APPLICATION and cloud == "aws"):  # a GKE Ingress takes no clientCidrs
        access["clientCidrs"] = [CLIENT_NETWORK]
    if mode in (INTERNAL_APPLICATION, PUBLIC):
        tls = {"certificateArn": ACM_ARN} if cloud == "aws" else {"preSharedCert": "llm-cert"}
        access |= {"hostname": "llm.example.com", "tls": tls, "restrictInference": True}
    if mode == INTERNAL_APPLICATION:
        access["loadBalancer"] = "application"
    return access


def _facts(stack: str, cloud: str):
    return cloud_facts(cloud, load_balancer_cidrs(_stack_config(stack))) if cloud == "aws" else cloud_facts(cloud)


# Stacks whose Application modes are also checked REST only (loadBalancerGrpc false): one per cloud.
REST_ONLY_STACKS = ("prod", "gcp-prod")
REST_ONLY = "-rest-only"


@cache
def cases() -> tuple[Case, ...]:
    out = []
    for stack in STACKS:
        config = _stack_config(stack)
        releases = [release for s, release in triton_cases() if s == stack]
        planned = {release: planned_values(stack, release) for release in releases}
        variants = [(mode, False) for mode in MODES]
        if stack in REST_ONLY_STACKS:
            variants += [(INTERNAL_APPLICATION, True), (PUBLIC, True)]
        for exposure, rest_only in variants:
            prefix = f"c{len(out)}"
            if exposure == CLUSTER:  # as the stack ships: no clients named
                values = planned
            else:
                values = {}
                for deployment in config.triton_deployments:
                    access = _exposed_access(prefix, config.cloud, exposure, rest_only)
                    changed = TritonDeployment.model_validate({**deployment.model_dump(by_alias=True), "access": access})
                    release = triton_release_name(deployment.name)
                    values[release] = {**planned[release], **access_values(changed, _facts(stack, config.cloud))}
            label = f"{stack}-{exposure}" + (REST_ONLY if rest_only else "")
            out.append(Case(label, stack, config.cloud, exposure, prefix, values, exposure != CLUSTER, rest_only))
    for case in out:
        case.objects = [o for release, v in case.releases.items() for o in render(v, name=release, namespace=case.namespace)]
    return tuple(out)


def _pod(name: str, namespace: str, labels: dict[str, str], ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "example", "ports": ports or []}]},
    }


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}


def world() -> tuple[list[dict], list[dict], list[dict]]:
    """(namespaces, pods, NetworkPolicies) of the simulated cluster holding every case."""
    namespaces = [_namespace("monitoring"), _namespace("kube-system")]
    pods = [
        _pod("prometheus", "monitoring", {"app.kubernetes.io/name": "prometheus"}),
        _pod("grafana", "monitoring", {"app.kubernetes.io/name": "grafana"}),
        _pod("coredns", "kube-system", {"k8s-app": "kube-dns"}),
    ]
    policies = []
    for case in cases():
        namespaces += [_namespace(case.namespace), _namespace(f"{case.prefix}-other")]
        for obj in case.objects:
            if obj["kind"] == "Deployment":
                template = obj["spec"]["template"]
                ports = [port for container in template["spec"]["containers"] for port in container.get("ports", [])]
                pods.append(_pod(obj["metadata"]["name"], case.namespace, template["metadata"]["labels"], ports))
            elif obj["kind"] == "NetworkPolicy":
                policies.append(obj)
        if case.named_namespace:
            namespaces.append(_namespace(f"{case.prefix}-apps"))
            pods.append(_pod("client", f"{case.prefix}-apps", {"app": "frontend"}))
        else:  # the default: labelled pods of the deployment's namespace, here a client of every release
            labels = {client_label(d.name): "true" for d in _stack_config(case.stack).triton_deployments}
            pods.append(_pod("client", case.namespace, labels))
        pods.append(_pod("bystander", case.namespace, {"app": "batch-job"}))
        pods.append(_pod("stranger", f"{case.prefix}-other", {"app": "frontend"}))
    return namespaces, pods, policies


Range = tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]


def _endpoints(text: str) -> list[str | Range]:
    """`ns/pod`, or IPv4 ranges `a-b` (nca may list several, comma-separated)."""
    out: list[str | Range] = []
    for part in text.split(","):
        part = part.strip()
        if re.fullmatch(r"[\d.]+-[\d.]+", part):
            low, high = part.split("-")
            out.append((ipaddress.IPv4Address(low), ipaddress.IPv4Address(high)))
        elif re.fullmatch(r"[\d.]+(/\d+)?", part):
            net = ipaddress.IPv4Network(part)
            out.append((net[0], net[-1]))
        else:
            out.append(part)
    return out


def _ports(connection: str) -> frozenset[tuple[str, int]]:
    """The probed (protocol, port) pairs an nca connection string allows."""
    if connection.strip() == "All connections":
        return PROBES
    allowed = set()
    for protocols, ports in re.findall(r"\{protocols:([A-Z][A-Z, ]*?),dst_ports:([\d, \-]+)\}", connection):
        for protocol in protocols.replace(" ", "").split(","):
            for item in ports.replace(" ", "").split(","):
                low, _, high = item.partition("-")
                allowed |= {(p, n) for p, n in PROBES if p == protocol and int(low) <= n <= int(high or low)}
    assert allowed or "protocols" not in connection, f"unparsed nca connection: {connection}"
    return frozenset(allowed)


@dataclass
class Connectivity:
    rules: list[tuple[list[str | Range], list[str | Range], frozenset[tuple[str, int]]]]

    def __post_init__(self):
        # Each rule's endpoints as a set of pod names and a tuple of integer address ranges, for fast lookups.
        self._indexed = [(_index(sources), _index(destinations), ports) for sources, destinations, ports in self.rules]

    def allowed(self, src: str, dst: str) -> frozenset[tuple[str, int]]:
        """Probed pairs from src to dst; a peer is `ns/pod` or an IPv4 address."""
        src_peer, dst_peer = _peer(src), _peer(dst)
        found: set[tuple[str, int]] = set()
        for sources, destinations, ports in self._indexed:
            if _matches(sources, src_peer) and _matches(destinations, dst_peer):
                found |= ports
        return frozenset(found)


Indexed = tuple[frozenset[str], tuple[tuple[int, int], ...]]


def _index(endpoints: list[str | Range]) -> Indexed:
    pods = frozenset(e for e in endpoints if isinstance(e, str))
    ranges = tuple((int(e[0]), int(e[1])) for e in endpoints if isinstance(e, tuple))
    return pods, ranges


def _peer(peer: str) -> str | int:
    """A pod stays `ns/pod`; an address becomes its integer."""
    return peer if "/" in peer else int(ipaddress.IPv4Address(peer))


def _matches(endpoints: Indexed, peer: str | int) -> bool:
    pods, ranges = endpoints
    if isinstance(peer, str):
        return peer in pods
    return any(low <= peer <= high for low, high in ranges)


@pytest.fixture(scope="module")
def connectivity(tmp_path_factory) -> Connectivity:
    if not Path(NCA).exists():
        message = f"network-config-analyzer not installed at {NCA} (`make test` creates venv-nca): connectivity NOT checked"
        if os.environ.get("TRITONFLEET_REQUIRE_TOOLS") == "1":
            pytest.fail(message + "; TRITONFLEET_REQUIRE_TOOLS=1 forbids skipping")
        pytest.skip(message)
    tmp = tmp_path_factory.mktemp("nca")
    namespaces, pods, policies = world()
    (tmp / "ns.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "NamespaceList", "items": namespaces}))
    (tmp / "pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "PodList", "items": pods}))
    (tmp / "policies.yaml").write_text(yaml.safe_dump_all(policies))
    inputs = hashlib.sha256(b"".join((tmp / name).read_bytes() for name in ("ns.yaml", "pods.yaml", "policies.yaml")))
    inputs.update(tool_stamp(NCA).encode())
    report = shared_text("nca", inputs.hexdigest(), lambda: _nca(tmp))  # one nca run for every test process
    rules = []
    for line in report.splitlines():
        match = re.fullmatch(r"(.+?) => (.+?) : (.+)", line.strip())
        if match:
            rules.append((_endpoints(match[1]), _endpoints(match[2]), _ports(match[3])))
    assert rules, report
    return Connectivity(rules)


def _nca(folder: Path) -> str:
    result = subprocess.run(
        [NCA, "--connectivity", str(folder / "policies.yaml"), "--pod_list", str(folder / "pods.yaml"), "--ns_list", str(folder / "ns.yaml"),
         "--output_format", "txt_no_fw_rules", "--output_endpoints", "pods"],
        capture_output=True, text=True, timeout=300, cwd=folder,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _address(cidr: str) -> str:
    return str(ipaddress.IPv4Network(cidr)[10])


def _pod_range_addresses(case: Case) -> list[str]:
    """Addresses where the cloud puts pods and nodes: an ipBlock over them would admit every pod."""
    if case.cloud == "aws":
        config = _stack_config(case.stack)
        return [_address(p.private_cidr) for p in subnet_layout(aws_zones(config.region, config.cluster))]
    return [_address(POD_CIDR), _address(NODE_CIDR)]


def sources(case: Case) -> dict[str, list[str]]:
    """Concrete peers for each source peer of the matrix."""
    facts = _facts(case.stack, case.cloud)
    load_balancer = (
        [_address(c) for c in facts.load_balancer_sources.get(case.exposure, ())] if case.exposure != "cluster" else []
    )
    client_namespace = f"{case.prefix}-apps" if case.named_namespace else case.namespace
    return {
        "client": [f"{client_namespace}/client"],
        "same-namespace": [f"{case.namespace}/bystander"],
        "other-namespace": [f"{case.prefix}-other/stranger"],
        "prometheus": ["monitoring/prometheus"],
        "monitoring-other": ["monitoring/grafana"],
        "load-balancer": load_balancer,
        "client-network": [_address(CLIENT_NETWORK)] if case.exposure in (INTERNAL, INTERNAL_APPLICATION) else [],
        "elsewhere": [INTERNET, *_pod_range_addresses(case)],
    }


def _load_balancer_cidrs(case: Case) -> tuple[str, ...]:
    return load_balancer_cidrs(_stack_config(case.stack)) if case.cloud == "aws" else ()


def destinations(case: Case) -> dict[str, list[str]]:
    object_store = {"aws": "52.216.0.10", "gcp": "199.36.153.9"}[case.cloud]  # in S3's range / private.googleapis.com
    return {
        "kube-dns": ["kube-system/coredns"],
        "object-store": [object_store],
        "identity": [_address(c) for c in _load_balancer_cidrs(case)],  # where STS's interface endpoint answers
        # The internet (other Amazon and Google addresses among it), and the node and pod ranges.
        "internet": [INTERNET, "3.5.140.10", "142.250.0.10", *_pod_range_addresses(case)],
        "metadata-252": ["169.254.169.252"],
        "metadata-254": ["169.254.169.254"],
        "pod": [f"{case.namespace}/bystander", f"{case.prefix}-other/stranger", "monitoring/prometheus"],
    }


def _case_ids() -> list[str]:
    rest_only = [f"{stack}-{mode}{REST_ONLY}" for stack in REST_ONLY_STACKS for mode in (INTERNAL_APPLICATION, PUBLIC)]
    return [f"{stack}-{mode}" for stack in STACKS for mode in MODES] + rest_only


def _case(label: str) -> Case:
    return next(c for c in cases() if c.label == label)


def _triton_pods(case: Case) -> list[str]:
    return [f"{case.namespace}/{o['metadata']['name']}" for o in case.objects if o["kind"] == "Deployment"]


@pytest.mark.parametrize("label", _case_ids())
def test_who_reaches_triton(connectivity, label):
    case = _case(label)
    expected = ingress(_facts(case.stack, case.cloud), case.exposure, grpc_through_load_balancer=not case.rest_only)
    wrong = []
    for pod in _triton_pods(case):
        for peer in INGRESS_PEERS:
            for source in sources(case)[peer.key]:
                got = connectivity.allowed(source, pod)
                if got != expected[peer.key]:
                    wrong.append(f"{source} -> {pod} ({peer.key}): {sorted(got)}, expected {sorted(expected[peer.key])}")
    assert not wrong, "\n".join(wrong)
    # A load-balanced mode always has addresses to check (the load balancer's, or the clients' it keeps); cluster none.
    peers = sources(case)
    assert bool(peers["load-balancer"] or peers["client-network"]) == (case.exposure != "cluster")


@pytest.mark.parametrize("label", _case_ids())
def test_what_triton_reaches(connectivity, label):
    case = _case(label)
    expected = egress(_facts(case.stack, case.cloud), _load_balancer_cidrs(case))
    wrong = []
    for pod in _triton_pods(case):
        for peer in EGRESS_PEERS:
            for destination in destinations(case)[peer.key]:
                got = connectivity.allowed(pod, destination)
                if got != expected[peer.key]:
                    wrong.append(f"{pod} -> {destination} ({peer.key}): {sorted(got)}, expected {sorted(expected[peer.key])}")
        for other in _triton_pods(case):
            if other != pod:
                assert connectivity.allowed(pod, other) == frozenset(), "a Triton release is no client of another"
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("label", _case_ids())
def test_other_pods_of_the_namespace_are_untouched(connectivity, label):
    case = _case(label)
    bystander, stranger = f"{case.namespace}/bystander", f"{case.prefix}-other/stranger"
    assert connectivity.allowed(bystander, stranger) == PROBES
    assert connectivity.allowed(stranger, bystander) == PROBES
    assert connectivity.allowed(bystander, INTERNET) == PROBES


@pytest.mark.parametrize("label", _case_ids())
def test_releases_sharing_a_namespace_render_no_object_twice(label):
    case = _case(label)
    keys = [(o["kind"], o["metadata"]["name"]) for o in case.objects]
    assert len(keys) == len(set(keys)), sorted(keys)
    for policy in (o for o in case.objects if o["kind"] == "NetworkPolicy"):
        assert policy["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == policy["metadata"]["name"]


def test_every_shipped_stack_and_mode_is_a_case():
    assert {(c.stack, c.exposure) for c in cases()} == {(s, m) for s in STACKS for m in MODES}
    assert len({c.cloud for c in cases()}) == 2
    assert any(len(c.releases) > 1 for c in cases()), "a stack with two releases in one namespace"


def test_docs_show_the_matrix_these_tests_assert():
    from components.k8s.access_matrix import DOC, with_tables

    text = DOC.read_text()
    assert text == with_tables(text), "docs/access.md is stale: run `venv/bin/python -m components.k8s.access_matrix`"


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_plan_enforces_its_network_policies(stack):
    from tests.serving_helpers import plan
    from tritonfleet.cli.output import out
    from tritonfleet.cli.plan import print_plan

    document = plan(stack)
    resources = document["resources"]
    if _stack_config(stack).cloud == "aws":
        (eks,) = [r for r in resources if r["type"] == "aws:eks/cluster:Cluster"]
        endpoint = eks["inputs"]["vpcConfig"]
        assert endpoint["endpointPrivateAccess"] is True
        # Every shipped AWS stack is deployed from hosted runners (deployFrom hosted-ci, prod acknowledged).
        assert endpoint["endpointPublicAccess"] is True
        assert endpoint.get("publicAccessCidrs", []) == ["0.0.0.0/0"]
        (cni,) = [r for r in resources if r["type"] == "aws:eks/addon:Addon" and r["inputs"]["addonName"] == "vpc-cni"]
        assert json.loads(cni["inputs"]["configurationValues"]) == {"enableNetworkPolicy": "true"}
        assert "addonVersion" not in cni["inputs"]  # EKS's default for the cluster version: later than v1.14.0
    else:
        (cluster,) = [r for r in resources if r["type"] == "gcp:container/cluster:Cluster"]
        assert cluster["inputs"]["datapathProvider"] == "ADVANCED_DATAPATH"
        assert "networkPolicy" not in cluster["inputs"]  # Calico and Dataplane V2 exclude each other
        # The IP endpoint is private in every environment: the DNS-based endpoint is the way in.
        assert cluster["inputs"]["privateClusterConfig"]["enablePrivateEndpoint"] is True
        # The provider's path from anywhere: the IAM-authenticated DNS endpoint, whatever the IP endpoint is.
        assert cluster["inputs"]["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
        # authorized networks on, none outside the network
        assert cluster["inputs"]["masterAuthorizedNetworksConfig"]["gcpPublicCidrsAccessEnabled"] is False
    section = document["networkPolicy"]
    assert section["shippedBy"] and [c["enforced"] for c in section["clusters"]] == [True]
    with out.capture() as captured:
        print_plan(document)
    assert "NetworkPolicy" in captured.get() and ": enforced (" in captured.get() and "NOT enforced" not in captured.get()
