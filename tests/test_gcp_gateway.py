"""gRPC through GKE's Application load balancers: a Gateway API Gateway and HTTPRoute (cleartext HTTP/2 to Triton's gRPC
port) instead of the Ingress, validated against the Gateway API CRDs GKE installs; the REST-only Ingress unchanged; the
cluster serves the Gateway API only when a deployment needs it (docs/access.md "Public, GCP")."""

from __future__ import annotations

import copy
from functools import cache

import jsonschema
import pytest
import yaml

from components.k8s.access import GRPC_PATHS, HTTP_PATHS
from tests.access_helpers import FACTS, chart_values, deployment
from tests.conftest import UPSTREAM_CHARTS
from tests.serving_helpers import render
from tests.test_triton_chart import _strict
from tritonfleet.clouds.gcp.exposure import needs_gateway_api, proxy_only_ports
from tritonfleet.clouds.gcp.facts import (
    GKE_EXTERNAL_GATEWAY_CLASS,
    GKE_GATEWAY_PRE_SHARED_CERT_OPTION,
    GKE_H2C_APP_PROTOCOL,
    GKE_INTERNAL_GATEWAY_CLASS,
)
from tritonfleet.core.catalog import FAST_SAFE_LOADER
from tritonfleet.core.conventions import TRITON_INFERENCE_PORTS

GATEWAY_CRDS = UPSTREAM_CHARTS / "gateway-api-v1.4.0" / "crds"
INTERNAL_APP = {"exposure": "internal", "loadBalancer": "application", "hostname": "vision.internal.example.com"}
PUBLIC = {"exposure": "public", "hostname": "vision.example.com", "restrictInference": True}
# (label, access, GatewayClass): every Application mode with every TLS source a Gateway takes.
GATEWAY_CASES = [
    ("public-secret", {**PUBLIC, "tls": {"secretName": "vision-tls"}}, GKE_EXTERNAL_GATEWAY_CLASS),
    ("public-pre-shared", {**PUBLIC, "tls": {"preSharedCert": "vision-cert"}, "loadBalancerGrpc": True}, GKE_EXTERNAL_GATEWAY_CLASS),
    ("internal-secret", {**INTERNAL_APP, "tls": {"secretName": "vision-tls"}}, GKE_INTERNAL_GATEWAY_CLASS),
    ("internal-pre-shared", {**INTERNAL_APP, "tls": {"preSharedCert": "vision-regional"}}, GKE_INTERNAL_GATEWAY_CLASS),
]


@cache
def gateway_api_validator(kind: str) -> jsonschema.protocols.Validator:
    """The v1 schema of a standard-channel Gateway API CRD, unknown fields made errors (CEL rules are not run here)."""
    crd = yaml.load((GATEWAY_CRDS / f"gateway.networking.k8s.io_{kind.lower()}s.yaml").read_text(), Loader=FAST_SAFE_LOADER)
    assert crd["spec"]["names"]["kind"] == kind
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = _strict(version["schema"]["openAPIV3Schema"])
    return jsonschema.validators.validator_for(schema)(schema)


def _rendered(access: dict) -> dict[str, list[dict]]:
    objects = render(chart_values("gcp", access), name="triton-llm")
    kinds: dict[str, list[dict]] = {}
    for obj in objects:
        kinds.setdefault(obj["kind"], []).append(obj)
    return kinds


@pytest.mark.parametrize(("label", "access", "class_name"), GATEWAY_CASES, ids=[c[0] for c in GATEWAY_CASES])
def test_grpc_through_gke_is_a_gateway_that_validates_against_the_gateway_api_crds(label, access, class_name):
    objects = _rendered(access)
    assert "Ingress" not in objects
    ((gateway,), (route,)) = objects["Gateway"], objects["HTTPRoute"]
    for obj in (gateway, route):
        gateway_api_validator(obj["kind"]).validate(obj)
    assert gateway["spec"]["gatewayClassName"] == class_name
    (listener,) = gateway["spec"]["listeners"]
    assert (listener["protocol"], listener["port"], listener["hostname"]) == ("HTTPS", 443, access["hostname"])
    # The CRD's CEL rule for Terminate: certificateRefs or options, at least one.
    tls = listener["tls"]
    assert tls["mode"] == "Terminate" and (tls.get("certificateRefs") or tls.get("options"))
    if "secretName" in access["tls"]:
        assert tls["certificateRefs"] == [{"kind": "Secret", "group": "", "name": access["tls"]["secretName"]}]
    else:
        assert tls["options"] == {GKE_GATEWAY_PRE_SHARED_CERT_OPTION: access["tls"]["preSharedCert"]}
    assert route["spec"]["parentRefs"] == [{"name": gateway["metadata"]["name"], "sectionName": listener["name"]}]
    assert route["spec"]["hostnames"] == [access["hostname"]]


def test_the_crd_schemas_refuse_what_the_api_server_would():
    """The check has teeth: an Ingress-style path type and a misspelt listener field are refused."""
    objects = _rendered({**PUBLIC, "tls": {"secretName": "vision-tls"}})
    route, gateway = copy.deepcopy(objects["HTTPRoute"][0]), copy.deepcopy(objects["Gateway"][0])
    route["spec"]["rules"][0]["matches"][0]["path"]["type"] = "Prefix"
    gateway["spec"]["listeners"][0]["tlsMode"] = "Terminate"
    for obj in (route, gateway):
        with pytest.raises(jsonschema.ValidationError):
            gateway_api_validator(obj["kind"]).validate(obj)


@pytest.mark.parametrize(("label", "access", "class_name"), GATEWAY_CASES, ids=[c[0] for c in GATEWAY_CASES])
def test_the_route_sends_grpc_to_the_h2c_port_and_rest_to_http(label, access, class_name):
    objects = _rendered(access)
    service = next(s for s in objects["Service"] if s["metadata"]["name"] == "triton-llm")
    ports = {p["port"]: p for p in service["spec"]["ports"]}
    (route,) = objects["HTTPRoute"]
    routed = {}
    for rule in route["spec"]["rules"]:
        (backend,) = rule["backendRefs"]
        assert backend["name"] == service["metadata"]["name"]
        for match in rule["matches"]:
            assert match["path"]["type"] == "PathPrefix"
            routed[match["path"]["value"]] = ports[backend["port"]]["name"]
    assert routed == {**dict.fromkeys(HTTP_PATHS, "http"), **dict.fromkeys(GRPC_PATHS, "grpc")}
    http_port, grpc_port = TRITON_INFERENCE_PORTS
    assert ports[grpc_port]["appProtocol"] == GKE_H2C_APP_PROTOCOL and "appProtocol" not in ports[http_port]


@pytest.mark.parametrize(("label", "access", "class_name"), GATEWAY_CASES[:1], ids=[c[0] for c in GATEWAY_CASES[:1]])
def test_both_backends_are_health_checked_on_tritons_readiness(label, access, class_name):
    objects = _rendered(access)
    (policy,) = objects["HealthCheckPolicy"]
    assert policy["apiVersion"] == "networking.gke.io/v1"
    assert policy["spec"]["targetRef"] == {"group": "", "kind": "Service", "name": "triton-llm"}
    check = policy["spec"]["default"]["config"]
    assert check["type"] == "HTTP"
    assert check["httpHealthCheck"] == {"portSpecification": "USE_FIXED_PORT", "port": 8000, "requestPath": "/v2/health/ready"}
    (triton, *_) = objects["Deployment"][0]["spec"]["template"]["spec"]["containers"]
    assert triton["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": "http"}


@pytest.mark.parametrize(
    "access",
    [{**PUBLIC, "tls": {"secretName": "vision-tls"}, "loadBalancerGrpc": False}, {**INTERNAL_APP, "tls": {"preSharedCert": "r"}, "loadBalancerGrpc": False}],
    ids=["public", "internal-application"],
)
def test_rest_only_keeps_the_gke_ingress_and_no_gateway(access):
    objects = _rendered(access)
    assert {"Gateway", "HTTPRoute", "HealthCheckPolicy"}.isdisjoint(objects)
    (ingress,) = objects["Ingress"]
    assert [p["path"] for p in ingress["spec"]["rules"][0]["http"]["paths"]] == list(HTTP_PATHS)


def test_the_chart_refuses_a_gateway_without_tls():
    values = chart_values("gcp", {**PUBLIC, "tls": {"secretName": "vision-tls"}})
    values["gateway"].update(tlsSecretName="", tlsOptions={})
    with pytest.raises(Exception, match="a Gateway needs TLS"):
        render(values, name="triton-llm")


def test_the_cluster_serves_the_gateway_api_only_when_a_deployment_uses_it():
    gateway, rest_only = (deployment({**PUBLIC, "tls": {"secretName": "t"}, **extra}) for extra in ({}, {"loadBalancerGrpc": False}))
    assert needs_gateway_api([rest_only, gateway]) and not needs_gateway_api([rest_only, deployment({})])
    # AWS's ALB carries gRPC through its Ingress: no Gateway there.
    assert not FACTS["aws"].gateway_classes


def test_the_proxies_reach_grpc_only_when_a_deployment_routes_it_through_them_and_never_metrics():
    internal = {**INTERNAL_APP, "tls": {"preSharedCert": "r"}}
    rest_only, gateway = deployment({**internal, "loadBalancerGrpc": False}), deployment(internal)
    public_gateway = deployment({**PUBLIC, "tls": {"secretName": "t"}})  # its proxies are Google's front ends
    assert proxy_only_ports([rest_only]) == (8000,) == proxy_only_ports([rest_only, public_gateway])
    assert proxy_only_ports([rest_only, gateway]) == TRITON_INFERENCE_PORTS == (8000, 8001)
