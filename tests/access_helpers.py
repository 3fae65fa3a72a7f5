"""Shared by the access tests: deployments in every exposure mode, chart values for them, kubelet-style expansion."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from components.k8s.access import access_values
from components.k8s.access_matrix import cloud_facts
from tritonfleet.core.config import TritonDeployment
from tritonfleet.core.exposure import ExposureFacts

# AWS: the public /24s of the VPC this stack creates in two zones (tritonfleet/clouds/aws/layout.py).
FACTS: dict[str, ExposureFacts] = {"aws": cloud_facts("aws"), "gcp": cloud_facts("gcp")}
ACM_ARN = "arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-aaaa-bbbb-cccc-123456789012"

# (label, cloud, access config) for every exposure mode and TLS source; on GCP an Application mode carries gRPC through a
# GKE Gateway unless loadBalancerGrpc is false (REST only, a GKE Ingress).
ACCESS_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("aws-cluster-default", "aws", {}),
    ("aws-cluster-open-model-control", "aws", {"restrictModelControl": False, "clientNamespaces": ["apps", "batch"]}),
    ("aws-internal", "aws", {"exposure": "internal", "restrictInference": True, "clientCidrs": ["172.16.0.0/12"]}),
    (
        "aws-public-acm",
        "aws",
        {"exposure": "public", "hostname": "llm.example.com", "tls": {"certificateArn": ACM_ARN}, "restrictInference": True},
    ),
    (
        "aws-internal-application",
        "aws",
        {"exposure": "internal", "loadBalancer": "application", "hostname": "llm.internal.example.com", "tls": {"certificateArn": ACM_ARN}, "clientCidrs": ["10.0.0.0/8"]},
    ),
    (
        "aws-public-rest-only",
        "aws",
        {"exposure": "public", "hostname": "llm.example.com", "tls": {"certificateArn": ACM_ARN}, "restrictInference": True, "loadBalancerGrpc": False},
    ),
    ("gcp-cluster-labels", "gcp", {"clientPodLabels": {"app.kubernetes.io/part-of": "frontend"}}),
    (
        "gcp-internal-application-pre-shared",
        "gcp",
        {"exposure": "internal", "loadBalancer": "application", "hostname": "vision.internal.example.com", "tls": {"preSharedCert": "vision-regional"}, "loadBalancerGrpc": False},
    ),
    (
        "gcp-internal-application-secret",
        "gcp",
        {"exposure": "internal", "loadBalancer": "application", "hostname": "vision.internal.example.com", "tls": {"secretName": "vision-tls"}, "restrictInference": True, "loadBalancerGrpc": False},
    ),
    (
        "gcp-internal-application-gateway",
        "gcp",
        {"exposure": "internal", "loadBalancer": "application", "hostname": "vision.internal.example.com", "tls": {"preSharedCert": "vision-regional"}},
    ),
    ("gcp-internal", "gcp", {"exposure": "internal", "clientCidrs": ["10.128.0.0/9"], "clientNamespaces": ["apps"]}),
    (
        "gcp-public-cert-manager",
        "gcp",
        {"exposure": "public", "hostname": "vision.example.com", "tls": {"certManagerIssuer": "letsencrypt"}, "restrictInference": True, "loadBalancerGrpc": False},
    ),
    (
        "gcp-public-pre-shared",
        "gcp",
        {"exposure": "public", "hostname": "vision.example.com", "tls": {"preSharedCert": "vision-cert"}, "restrictInference": True, "loadBalancerGrpc": False},
    ),
    (
        "gcp-public-gateway",
        "gcp",
        {"exposure": "public", "hostname": "vision.example.com", "tls": {"secretName": "vision-tls"}, "restrictInference": True},
    ),
    (
        "gcp-public-secret",
        "gcp",
        {"exposure": "public", "hostname": "vision.example.com", "tls": {"secretName": "vision-tls"}, "restrictInference": True, "loadBalancerGrpc": False},
    ),
]


def deployment(access: dict[str, Any], **fields: Any) -> TritonDeployment:
    return TritonDeployment.model_validate({"name": "llm", "pool": "gpu", "access": access, **fields})


def chart_values(cloud: str, access: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Values of our chart for one deployment with that access config (the access values over a minimal base)."""
    base = {"modelRepository": "s3://tf-prod-models/llm" if cloud == "aws" else "gs://tf-prod-models/llm"}
    return {**base, **fields, **access_values(deployment(access), FACTS[cloud])}


_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def kubelet_expand(text: str, env: dict[str, str]) -> str:
    """What the kubelet does to a container's command and args: $(VAR) becomes VAR's value when VAR is defined
    (otherwise it stays as written), $$ becomes $."""

    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _REFERENCE.sub(replace, text)


def container_env(container: dict[str, Any], secrets: dict[str, dict[str, str]]) -> dict[str, str]:
    """The container's environment as the kubelet builds it, reading secretKeyRef entries from `secrets`."""
    env = {}
    for entry in container.get("env", []):
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        else:
            ref = entry["valueFrom"]["secretKeyRef"]
            env[entry["name"]] = secrets[ref["name"]][ref["key"]]
    return env


def pod_containers(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The rendered Deployment's init containers and containers by name."""
    spec = next(o for o in objects if o["kind"] == "Deployment")["spec"]["template"]["spec"]
    return {c["name"]: c for c in [*spec.get("initContainers", []), *spec["containers"]]}


def write_pod_key(objects: list[dict[str, Any]], work: Path) -> Path:
    """Run the rendered `pod-key` init container's command as the kubelet would (its env; python3 is this interpreter),
    with the key file under `work` instead of the pod's emptyDir. Returns the file."""
    init = pod_containers(objects)["pod-key"]
    key_file = work / "pod-key" / "key"
    key_file.parent.mkdir(parents=True)
    env = {**os.environ, **container_env(init, {}), "CONTROL_KEY_FILE": str(key_file)}
    command = [sys.executable if part == "python3" else part for part in init["command"]]
    subprocess.run(command, env=env, check=True, timeout=30)
    return key_file


def start_control_proxy(
    objects: list[dict[str, Any]], secrets: dict[str, dict[str, str]], key_file: Path, triton_port: int, work: Path
) -> tuple[int, subprocess.Popen]:
    """The rendered `control-proxy` container: its command and env (the admin key from `secrets`), its code from the
    rendered ConfigMap, on a free loopback port, forwarding to Triton's HTTP port `triton_port`."""
    from tests.local_servers import free_port

    proxy = pod_containers(objects)["control-proxy"]
    config_map = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-control-proxy"))
    code = work / "control-proxy"
    code.mkdir(parents=True)
    for name, text in config_map["data"].items():
        (code / name).write_text(text)
    mount = next(m["mountPath"] for m in proxy["volumeMounts"] if m["name"] == "control-proxy")
    command = [sys.executable if p == "python3" else p.replace(mount, str(code)) for p in proxy["command"]]
    port = free_port()
    env = {
        **os.environ,
        **container_env(proxy, secrets),
        "CONTROL_PROXY_POD_KEY_FILE": str(key_file),
        "CONTROL_PROXY_PORT": str(port),
        "TRITON_PORT": str(triton_port),
    }
    log = (work / "control-proxy.log").open("w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    for _ in range(100):  # bounded: 10 s
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return port, process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    process.wait(timeout=10)
    raise AssertionError("control proxy did not start:\n" + (work / "control-proxy.log").read_text()[-2000:])
