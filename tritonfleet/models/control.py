"""Load or unload a model on EVERY replica of a Triton deployment, and say what each replica did.

A load/unload request through the Service reaches one random pod, so replicas drift apart. This fans the request
out to each replica's own endpoint and then checks the model's readiness there (Triton's /v2/models/<m>/ready).
The change lasts until a replica restarts: a restarted or new replica loads the deployment's declared set
(`loadModels` in the stack config, passed as --load-model), so put lasting changes in the config.

Replicas are found with kubectl (the pods of the release, each reached through `kubectl port-forward`), or given as
NAME=URL pairs.
"""

from __future__ import annotations

import http.client
import json
import re
import select
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from tritonfleet.core.model_names import MODEL_NAME_RULE, is_model_name

ACTIONS = ("load", "unload")
DEADLINE_SECONDS = 600  # all replicas together; a load returns when the model is loaded (or failed): large models take minutes
CONNECT_SECONDS = 10  # a replica that does not accept a connection in this time is unreachable
READY_SECONDS = 10  # the readiness check after the load/unload
PROGRESS_SECONDS = 10  # how often the replicas still being waited for are reported
BODY_LIMIT = 64 * 1024  # an answer is an error text at most; the rest is not read
PORT_FORWARD_WAIT_LINES = 20
PORT_FORWARD_SECONDS = 30


class ControlError(Exception):
    """The replicas could not be found or reached."""


@dataclass(frozen=True)
class ReplicaResult:
    replica: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no HTTP answer (detail says why)
    detail: str  # the body, or why there was no answer
    location: str = ""  # a redirect's target, which is never followed


def check_replica_url(name: str, url: str) -> str:
    """`url` as a replica's base URL (http(s)://host:port), or ControlError: the admin key goes to this exact place,
    so user info, a path, a query or a fragment (which could send it elsewhere or into logs) are refused."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise ControlError(f"replica {name}: {url!r} has no valid port") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise ControlError(f"replica {name}: {url!r} is not http(s)://HOST[:PORT]")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ControlError(f"replica {name}: {url!r} has a path, query or fragment; give http(s)://HOST[:PORT]")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def request(
    base_url: str,
    path: str,
    headers: Mapping[str, str],
    *,
    deadline: float,
    data: bytes | None = None,
    connect_seconds: float = CONNECT_SECONDS,
) -> Answer:
    """One HTTP request to exactly `base_url`: no proxy, no redirect followed (http.client follows none), the connection
    made within `connect_seconds` and every wait on it ending by `deadline` (time.monotonic())."""
    parts = urlsplit(base_url)
    left = deadline - time.monotonic()
    if left <= 0:
        return Answer(0, "no time left before the deadline")
    if parts.scheme == "https":
        import ssl

        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=min(connect_seconds, left), context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=min(connect_seconds, left))
    try:
        try:
            connection.connect()
        except TimeoutError:
            return Answer(0, f"no connection within {min(connect_seconds, left):g} s")
        connection.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        connection.request("POST" if data is not None else "GET", path, body=data, headers=dict(headers))
        response = connection.getresponse()
        body = response.read(BODY_LIMIT).decode(errors="replace")
        return Answer(response.status, body, response.getheader("Location", ""))
    except TimeoutError:
        return Answer(0, DEADLINE_PASSED)
    except (OSError, http.client.HTTPException, ValueError) as error:  # ValueError: a header http.client refuses
        return Answer(0, str(error) or type(error).__name__)
    finally:
        connection.close()


def _error_text(body: str) -> str:
    try:
        return json.loads(body).get("error", body)
    except (ValueError, AttributeError):
        return body


def control_replica(
    base_url: str, action: str, model: str, headers: Mapping[str, str], deadline: float, connect_seconds: float = CONNECT_SECONDS
) -> tuple[bool, str]:
    """One replica: the request, then the model's readiness there. Returns (ok, detail)."""
    name = quote(model, safe="")  # validated already; quoted all the same, as every value put into a URL
    answer = request(
        base_url,
        f"/v2/repository/models/{name}/{action}",
        headers,
        deadline=deadline,
        data=b"{}",
        connect_seconds=connect_seconds,
    )
    if 300 <= answer.status < 400:
        return False, (
            f"{action} refused: the replica redirected (HTTP {answer.status} to {answer.location or 'nowhere'}); "
            "control calls never follow a redirect, so the admin key goes only to the URL given"
        )
    if answer.status != 200:
        reason = _error_text(answer.detail)
        return False, f"{action} refused (HTTP {answer.status}): {reason}" if answer.status else f"unreachable: {reason}"
    ready = request(  # with the same headers: behind the control proxy, readiness is asked with the admin key too
        base_url,
        f"/v2/models/{name}/ready",
        headers,
        deadline=min(deadline, time.monotonic() + READY_SECONDS),
        connect_seconds=connect_seconds,
    ).status
    if action == "load" and ready != 200:
        return False, f"loaded, but the model is not ready (HTTP {ready})"
    if action == "unload" and ready == 200:
        return False, "unloaded, but the model still answers ready"
    return True, "ready" if action == "load" else "unloaded"


# A replica's own call that ran out of the overall deadline: reported as the deadline's (fan_out), whichever of the
# call's socket timeout and the caller's wait ends first.
DEADLINE_PASSED = "no answer before the deadline"


def fan_out(
    action: str,
    model: str,
    replicas: Mapping[str, str],
    headers: Mapping[str, str],
    *,
    deadline_seconds: float = DEADLINE_SECONDS,
    connect_seconds: float = CONNECT_SECONDS,
    progress_seconds: float = PROGRESS_SECONDS,
    on_wait: Callable[[list[str], float], None] | None = None,
) -> list[ReplicaResult]:
    """`replicas`: name -> base URL (http://host:port). Every replica is asked at once, whatever the others do, and
    the whole call ends by `deadline_seconds`: a replica that has not answered by then is reported as such.
    `on_wait(pending, elapsed)` is called every `progress_seconds` while replicas are still working."""
    if action not in ACTIONS:
        raise ControlError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    if not is_model_name(model):
        raise ControlError(f"{model!r} is not a model name: {MODEL_NAME_RULE}")
    if not replicas:
        raise ControlError("no replicas to control")
    urls = {name: check_replica_url(name, url) for name, url in replicas.items()}
    started = time.monotonic()
    deadline = started + deadline_seconds
    results: dict[str, ReplicaResult] = {}

    def work(name: str) -> None:
        results[name] = ReplicaResult(name, *control_replica(urls[name], action, model, headers, deadline, connect_seconds))

    # Daemon threads: one stuck past the deadline (a replica dripping bytes) never holds the command open.
    threads = {name: threading.Thread(target=work, args=(name,), daemon=True) for name in sorted(urls)}
    for thread in threads.values():
        thread.start()
    next_report = started + progress_seconds
    while True:
        pending = [name for name, thread in threads.items() if thread.is_alive()]
        now = time.monotonic()
        if not pending or now >= deadline:
            break
        if now >= next_report:
            if on_wait:
                on_wait(pending, now - started)
            next_report += progress_seconds
            continue
        threads[pending[0]].join(min(next_report, deadline) - now)
    late = f"no answer within {deadline_seconds:g} s; the {action} may still complete there: check it, or run again"
    answered = {name: r for name, r in results.items() if not r.detail.endswith(DEADLINE_PASSED)}
    return [answered.get(name) or ReplicaResult(name, False, late) for name in sorted(urls)]


def release_pods(pods_json: str) -> list[str]:
    """Names of the running pods in `kubectl get pods -o json` output (the ones a Service would route to)."""
    items = json.loads(pods_json).get("items", [])
    return sorted(p["metadata"]["name"] for p in items if p.get("status", {}).get("phase") == "Running")


@contextmanager
def kubectl_replicas(namespace: str, release: str, port: int = 8000, kubectl: str = "kubectl") -> Iterator[dict[str, str]]:
    """Each running pod of the release, reached through its own `kubectl port-forward` to the pod's `port` (Triton's
    HTTP port, or the model-control proxy's where model control is restricted), closed on exit."""
    selector = f"app.kubernetes.io/instance={release}"
    try:
        listed = subprocess.run(
            [kubectl, "get", "pods", "-n", namespace, "-l", selector, "-o", "json"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ControlError(f"kubectl get pods -n {namespace} -l {selector} failed: {error}") from None
    if listed.returncode != 0:
        raise ControlError(f"kubectl get pods -n {namespace} -l {selector} failed: {listed.stderr.strip()}")
    pods = release_pods(listed.stdout)
    if not pods:
        raise ControlError(f"no running pods of release {release} in namespace {namespace}")
    with ExitStack() as stack:
        replicas = {}
        for pod in pods:
            forward = subprocess.Popen(
                [kubectl, "port-forward", "-n", namespace, f"pod/{pod}", f":{port}"], stdout=subprocess.PIPE, text=True
            )
            stack.callback(forward.wait, 10)
            stack.callback(forward.terminate)
            found = _forwarded_port(forward, port)
            if not found:
                raise ControlError(f"kubectl port-forward to pod {pod} did not start within {PORT_FORWARD_SECONDS} s")
            replicas[pod] = f"http://127.0.0.1:{found}"
        yield replicas


def _forwarded_port(forward: subprocess.Popen, port: int) -> str | None:
    """The local port `kubectl port-forward` reports, waiting at most PORT_FORWARD_SECONDS (it may hang silently)."""
    deadline = time.monotonic() + PORT_FORWARD_SECONDS
    for _ in range(PORT_FORWARD_WAIT_LINES):
        left = deadline - time.monotonic()
        if forward.stdout is None or left <= 0 or not select.select([forward.stdout], [], [], left)[0]:
            return None
        line = forward.stdout.readline()
        if not line:
            return None
        if found := re.search(rf"Forwarding from 127\.0\.0\.1:(\d+) -> {port}\b", line):
            return found.group(1)
    return None
