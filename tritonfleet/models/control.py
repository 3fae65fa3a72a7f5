"""Load or unload a model on EVERY replica of a Triton deployment, and say what each replica did.

A load/unload request through the Service reaches one random pod, so replicas drift apart. This fans the request
out to each replica's own endpoint and then checks the model's readiness there (Triton's /v2/models/<m>/ready).
The change lasts until a replica restarts: a restarted or new replica loads the deployment's declared set
(`loadModels` in the stack config, passed as --load-model), so put lasting changes in the config.

Replicas are found with kubectl (the pods of the release, each reached through `kubectl port-forward`), or given as
NAME=URL pairs.
"""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

ACTIONS = ("load", "unload")
TIMEOUT_SECONDS = 600  # a load returns when the model is loaded (or failed): large models take minutes
PORT_FORWARD_LINE = re.compile(r"Forwarding from 127\.0\.0\.1:(\d+) -> 8000")
PORT_FORWARD_WAIT_LINES = 20


class ControlError(Exception):
    """The replicas could not be found or reached."""


@dataclass(frozen=True)
class ReplicaResult:
    replica: str
    ok: bool
    detail: str


def _request(url: str, data: bytes | None, headers: Mapping[str, str], timeout: float) -> tuple[int, str]:
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    for name, value in headers.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError as error:
        return 0, str(error)


def _error_text(body: str) -> str:
    try:
        return json.loads(body).get("error", body)
    except (ValueError, AttributeError):
        return body


def control_replica(base_url: str, action: str, model: str, headers: Mapping[str, str], timeout: float = TIMEOUT_SECONDS):
    """One replica: the request, then the model's readiness there. Returns (ok, detail)."""
    status, body = _request(f"{base_url}/v2/repository/models/{model}/{action}", b"{}", headers, timeout)
    if status != 200:
        return False, f"{action} refused (HTTP {status}): {_error_text(body)}" if status else f"unreachable: {body}"
    ready, _ = _request(f"{base_url}/v2/models/{model}/ready", None, {}, 10)
    if action == "load" and ready != 200:
        return False, f"loaded, but the model is not ready (HTTP {ready})"
    if action == "unload" and ready == 200:
        return False, "unloaded, but the model still answers ready"
    return True, "ready" if action == "load" else "unloaded"


def fan_out(action: str, model: str, replicas: Mapping[str, str], headers: Mapping[str, str]) -> list[ReplicaResult]:
    """`replicas`: name -> base URL (http://host:port). Every replica is tried, whatever the others did."""
    if action not in ACTIONS:
        raise ControlError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    if not replicas:
        raise ControlError("no replicas to control")
    return [ReplicaResult(name, *control_replica(url, action, model, headers)) for name, url in sorted(replicas.items())]


def release_pods(pods_json: str) -> list[str]:
    """Names of the running pods in `kubectl get pods -o json` output (the ones a Service would route to)."""
    items = json.loads(pods_json).get("items", [])
    return sorted(p["metadata"]["name"] for p in items if p.get("status", {}).get("phase") == "Running")


@contextmanager
def kubectl_replicas(namespace: str, release: str, kubectl: str = "kubectl") -> Iterator[dict[str, str]]:
    """Each running pod of the release, reached through its own `kubectl port-forward` (closed on exit)."""
    selector = f"app.kubernetes.io/instance={release}"
    listed = subprocess.run(
        [kubectl, "get", "pods", "-n", namespace, "-l", selector, "-o", "json"], capture_output=True, text=True, timeout=60
    )
    if listed.returncode != 0:
        raise ControlError(f"kubectl get pods -n {namespace} -l {selector} failed: {listed.stderr.strip()}")
    pods = release_pods(listed.stdout)
    if not pods:
        raise ControlError(f"no running pods of release {release} in namespace {namespace}")
    with ExitStack() as stack:
        replicas = {}
        for pod in pods:
            forward = subprocess.Popen(
                [kubectl, "port-forward", "-n", namespace, f"pod/{pod}", ":8000"], stdout=subprocess.PIPE, text=True
            )
            stack.callback(forward.wait, 10)
            stack.callback(forward.terminate)
            for _ in range(PORT_FORWARD_WAIT_LINES):
                line = forward.stdout.readline() if forward.stdout else ""
                found = PORT_FORWARD_LINE.search(line)
                if found or not line:
                    break
            if not found:
                raise ControlError(f"kubectl port-forward to pod {pod} did not start")
            replicas[pod] = f"http://127.0.0.1:{found.group(1)}"
        yield replicas
