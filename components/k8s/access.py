"""Chart values for a deployment's access: restricted APIs behind keys, Service and Ingress per exposure mode, and
NetworkPolicies. Plain data from the config and cloud-neutral ExposureFacts; tested without Pulumi (docs/access.md).

The keys never appear in these values: the chart passes `$(TRITON_ADMIN_KEY)` in Triton's args, which the kubelet
expands at container start from an environment variable filled from the Kubernetes Secret named here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tritonfleet.core.config import Access, TritonDeployment
from tritonfleet.core.conventions import MONITORING_NAMESPACE, triton_release_name
from tritonfleet.core.exposure import (
    CLUSTER,
    INFERENCE_APIS,
    INTERNAL,
    MODEL_CONTROL_APIS,
    ExposureFacts,
    grpc_through_load_balancer,
    uses_gateway,
)

# gRPC clients send a restricted group's header as metadata named GRPC_HEADER_PREFIX + header.
GRPC_HEADER_PREFIX = "triton-grpc-protocol-"
# kube-prometheus-stack's Prometheus pods carry this label (set by the Prometheus Operator).
PROMETHEUS_POD_LABELS = {"app.kubernetes.io/name": "prometheus"}
# The cluster DNS pods, as both EKS (CoreDNS) and GKE (kube-dns) label them.
DNS_NAMESPACE = "kube-system"
DNS_POD_LABELS = {"k8s-app": "kube-dns"}


def client_label(deployment: str) -> str:
    """The pod label (value "true") that makes a pod a client when the config names no clients: one key per
    deployment, so one pod can be a client of several. Clients are chosen, never "whatever shares the namespace"."""
    return f"tritonfleet.io/{triton_release_name(deployment)}-client"
# Paths of Triton's gRPC services: a path-routing Ingress sends these to the gRPC port, /v2 to the HTTP port.
GRPC_PATHS = ("/inference.GRPCInferenceService", "/grpc.health.v1.Health")
HTTP_PATHS = ("/v2",)


@dataclass(frozen=True)
class KeyGroup:
    """APIs that need one header; its expected value comes from env var `env`, filled from the Secret's `secret_key`."""

    apis: tuple[str, ...]
    header: str
    env: str
    secret_key: str

    @property
    def grpc_header(self) -> str:
        return GRPC_HEADER_PREFIX + self.header


ADMIN = KeyGroup(MODEL_CONTROL_APIS, header="admin-key", env="TRITON_ADMIN_KEY", secret_key="admin-key")
# The chart's model-control proxy listens here, on each pod's loopback, when model control is restricted: it alone
# holds the admin key; Triton gets a per-pod key (docs/access.md "Keys and model code").
CONTROL_PROXY_PORT = 8004
TRITON_HTTP_PORT = 8000


def control_port(access: Access) -> int:
    """The pod port `models load/unload` reaches: the proxy's when model control is restricted, else Triton's."""
    return CONTROL_PROXY_PORT if access.restrict_model_control else TRITON_HTTP_PORT


INFERENCE = KeyGroup(INFERENCE_APIS, header="inference-key", env="TRITON_INFERENCE_KEY", secret_key="inference-key")


def key_groups(access: Access) -> list[KeyGroup]:
    """The restricted API groups this deployment asks for (each API belongs to at most one group, as Triton requires)."""
    return [group for group, wanted in ((ADMIN, access.restrict_model_control), (INFERENCE, access.restrict_inference)) if wanted]


def access_secret_name(deployment: str) -> str:
    """The Secret (in the deployment's namespace) that holds the generated keys."""
    return f"{triton_release_name(deployment)}-access-keys"


def restricted_api_values(access: Access, secret_name: str) -> dict[str, Any]:
    groups = key_groups(access)
    return {
        "secretName": secret_name if groups else "",
        "groups": [{"apis": list(g.apis), "header": g.header, "env": g.env, "secretKey": g.secret_key} for g in groups],
    }


def service_values(access: Access, facts: ExposureFacts) -> dict[str, Any]:
    """A LoadBalancer Service for the internal network load balancer; ClusterIP otherwise (an Ingress, if any, routes
    to it)."""
    internal = access.mode == INTERNAL
    return {
        "type": "LoadBalancer" if internal else "ClusterIP",
        "annotations": dict(facts.internal_service_annotations) if internal else {},
        "grpcAppProtocol": facts.grpc_app_protocol,
        # Local: no second hop through another node, so a passthrough load balancer keeps the client's address.
        "externalTrafficPolicy": "Local",
        "loadBalancerSourceRanges": list(access.client_cidrs) if internal else [],
    }


def ingress_values(access: Access, facts: ExposureFacts, release: str) -> dict[str, Any]:
    """The Ingress of an Application load balancer mode (public, internal-application); disabled otherwise, and where
    a Gateway serves the mode instead (`gateway_values`)."""
    mode = access.mode
    if mode not in facts.ingress_classes or uses_gateway(access, facts):
        return {"enabled": False}
    tls = access.tls
    assert tls is not None and access.hostname is not None, "validated configs: an Ingress has a hostname and TLS"
    annotations = dict(facts.ingress_annotations.get(mode, {}))
    class_name = facts.ingress_classes[mode]
    if facts.ingress_class_annotation:  # the controller reads the class there, and ignores spec.ingressClassName
        annotations[facts.ingress_class_annotation] = class_name
        class_name = ""
    tls_secret = certificate_annotation = ""
    for source in tls.sources:
        value = tls.value_of(source)
        if source in facts.certificate_annotations:
            certificate_annotation = facts.certificate_annotations[source]
            annotations[certificate_annotation] = value
        elif source == "secretName":
            tls_secret = value
        elif source == "certManagerIssuer":
            annotations["cert-manager.io/cluster-issuer"] = value
            tls_secret = f"{release}-tls"  # cert-manager's ingress-shim issues the certificate into this Secret
    if facts.ingress_group_annotation:
        annotations[facts.ingress_group_annotation] = release
    if access.client_cidrs and facts.ingress_source_ranges_annotation:
        annotations[facts.ingress_source_ranges_annotation] = ",".join(access.client_cidrs)
    return {
        "enabled": True,
        "className": class_name,
        "hostname": access.hostname,
        "annotations": annotations,
        "perProtocol": facts.ingress_per_protocol,
        "httpAnnotations": dict(facts.http_ingress_annotations),
        "grpcAnnotations": dict(facts.grpc_ingress_annotations),
        "httpPaths": list(HTTP_PATHS),
        # loadBalancerGrpc false: REST only (the config rules require it where the load balancer cannot carry gRPC)
        "grpcPaths": list(GRPC_PATHS) if grpc_through_load_balancer(access) else [],
        "tlsSecretName": tls_secret,
        "certificateAnnotation": certificate_annotation,
    }


def gateway_values(access: Access, facts: ExposureFacts) -> dict[str, Any]:
    """A Gateway API Gateway (one HTTPS listener for the hostname) and an HTTPRoute: REST to the HTTP port, gRPC to the
    gRPC port, whose appProtocol (`facts.grpc_app_protocol`) makes the load balancer speak cleartext HTTP/2 to the pod;
    disabled unless `uses_gateway`. TLS from a Secret or a controller TLS option (`facts.gateway_tls_options`)."""
    if not uses_gateway(access, facts):
        return {"enabled": False}
    tls = access.tls
    assert tls is not None and access.hostname is not None, "validated configs: a Gateway has a hostname and TLS"
    tls_secret, tls_options = "", {}
    for source in tls.sources:
        if source in facts.gateway_tls_options:
            tls_options[facts.gateway_tls_options[source]] = tls.value_of(source)
        elif source == "secretName":
            tls_secret = tls.value_of(source)
    return {
        "enabled": True,
        "className": facts.gateway_classes[access.mode],
        "hostname": access.hostname,
        "tlsSecretName": tls_secret,
        "tlsOptions": tls_options,
        "httpPaths": list(HTTP_PATHS),
        "grpcPaths": list(GRPC_PATHS),
        "healthCheckPolicy": dict(facts.gateway_health_check),
    }


def client_selector(access: Access, deployment: str) -> tuple[list[str], dict[str, str]]:
    """(namespaces, pod labels) of the pods that may call Triton. Named namespaces without labels: every pod there.
    Nothing named: pods of the deployment's own namespace that carry `client_label(deployment)`."""
    namespaces = list(access.client_namespaces or [])
    labels = dict(access.client_pod_labels)
    if not namespaces and not labels:
        labels = {client_label(deployment): "true"}
    return namespaces, labels


def network_policy_values(access: Access, facts: ExposureFacts, deployment: str) -> dict[str, Any]:
    """Triton's pods only: clients to 8000/8001; the load balancer to them (8000 alone when it routes no gRPC);
    Prometheus to 8002; egress to kube-dns and to the cloud's endpoints Triton needs (`ExposureFacts.egress`: the
    object store and identity endpoints over HTTPS, metadata servers), never to the internet at large."""
    namespaces, labels = client_selector(access, deployment)
    mode = access.mode
    exposed = mode != CLUSTER
    keeps_address = mode in facts.keeps_client_address
    return {
        "enabled": True,
        "clientNamespaces": namespaces,
        "clientPodLabels": labels,
        "loadBalancerCidrs": list(facts.load_balancer_sources.get(mode, ())) if exposed else [],
        "loadBalancerGrpc": grpc_through_load_balancer(access),
        "clientCidrs": list(access.client_cidrs) if keeps_address else [],
        "metricsNamespace": MONITORING_NAMESPACE,
        "metricsPodLabels": dict(PROMETHEUS_POD_LABELS),
        "dnsNamespace": DNS_NAMESPACE,
        "dnsPodLabels": dict(DNS_POD_LABELS),
        "egressHttpsCidrs": [r.cidr for r in facts.egress if (r.port, r.protocol) == (443, "TCP")],
        "extraEgress": [
            {"cidr": r.cidr, "port": r.port, "protocol": r.protocol} for r in facts.egress if (r.port, r.protocol) != (443, "TCP")
        ],
    }


def access_values(deployment: TritonDeployment, facts: ExposureFacts) -> dict[str, Any]:
    """The chart values this module owns, to merge over the deployment's other values."""
    access = deployment.access
    release = triton_release_name(deployment.name)
    return {
        "restrictedApis": restricted_api_values(access, access_secret_name(deployment.name)),
        "service": service_values(access, facts),
        "ingress": ingress_values(access, facts, release),
        "gateway": gateway_values(access, facts),
        "networkPolicy": network_policy_values(access, facts, deployment.name),
        "controlProxy": {"port": CONTROL_PROXY_PORT},
    }
