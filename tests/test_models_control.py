"""`models load/unload` against local HTTP servers that misbehave: a replica that redirects (the admin key must not
follow), one that accepts and never answers, one that drips bytes, one that never accepts; model names and replica
URLs that would change where a request goes. Each server binds 127.0.0.1 on a port of its own and is stopped here."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import run_cli
from tritonfleet.models.control import ControlError, check_replica_url, fan_out, request

ADMIN = {"admin-key": "secret-admin-key"}


class Replica(BaseHTTPRequestHandler):
    """A Triton stand-in: load/unload answer 200, readiness follows the last action; every request is recorded."""

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.server.seen.append((self.command, self.path, self.headers.get("admin-key")))
        if self.server.redirect_to:
            self.send_response(307)
            self.send_header("Location", self.server.redirect_to + self.path)
            self.end_headers()
            return
        self.server.loaded = self.path.endswith("/load")
        self._answer(200, b"{}")

    def do_GET(self):  # noqa: N802
        self.server.seen.append((self.command, self.path, self.headers.get("admin-key")))
        self._answer(200 if self.server.loaded else 400, b"")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextmanager
def replica(redirect_to: str = "") -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Replica)
    server.seen, server.loaded, server.redirect_to = [], False, redirect_to
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@contextmanager
def silent_replica(drip: bool = False) -> Iterator[str]:
    """Accepts connections and never answers (or drips one byte of a status line every 50 ms, forever)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve():
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                pass
            for connection in held if drip else ():
                try:
                    connection.send(b"H")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(10)
        for connection in held:
            connection.close()
        listener.close()


@contextmanager
def unaccepting_replica() -> Iterator[str]:
    """A listener whose accept queue is full and never served: the kernel drops further SYNs, a connect hangs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    fillers = []
    try:
        for _ in range(8):  # fill the queue (its length is the backlog plus one or so)
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(listener.getsockname())
            fillers.append(filler)
        time.sleep(0.2)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_load_reaches_every_replica_with_the_key_and_a_quoted_name():
    with replica() as first, replica() as second:
        results = fan_out("load", "resnet-50.v2", {"b": url(second), "a": url(first)}, ADMIN)
        assert [(r.replica, r.ok, r.detail) for r in results] == [("a", True, "ready"), ("b", True, "ready")]
        assert first.seen[0] == ("POST", "/v2/repository/models/resnet-50.v2/load", "secret-admin-key")
        # Readiness too: the same replica URL, which is the control proxy where model control is restricted.
        assert first.seen[1] == ("GET", "/v2/models/resnet-50.v2/ready", "secret-admin-key")


def test_a_redirect_is_refused_and_the_key_never_leaves():
    with replica() as elsewhere, replica(redirect_to=url(elsewhere)) as redirecting:
        [result] = fan_out("unload", "resnet", {"a": url(redirecting)}, ADMIN)
        assert not result.ok and "redirected (HTTP 307" in result.detail and "never follow" in result.detail
        assert elsewhere.seen == []


@pytest.mark.parametrize("drip", [False, True], ids=["silent", "dripping"])
def test_a_hung_replica_ends_at_the_deadline_with_progress_and_the_others_report(drip):
    waits = []
    with replica() as healthy, silent_replica(drip=drip) as hung:
        results = fan_out(
            "unload",
            "resnet",
            {"hung": hung, "ok": url(healthy)},
            ADMIN,
            deadline_seconds=1,
            progress_seconds=0.2,
            on_wait=lambda pending, elapsed: waits.append(pending),
        )
    by_name = {r.replica: r for r in results}
    assert by_name["ok"].ok and not by_name["hung"].ok
    assert by_name["hung"].detail.startswith("no answer within 1 s; the unload may still complete there")
    assert waits and all(pending == ["hung"] for pending in waits[1:])


def test_a_replica_that_never_accepts_fails_at_the_connect_timeout():
    with unaccepting_replica() as stuck:
        answer = request(stuck, "/v2/health/ready", {}, deadline=time.monotonic() + 30, connect_seconds=0.3)
    assert answer.status == 0 and answer.detail == "no connection within 0.3 s"


@pytest.mark.parametrize("name", ["../" * 2 + "v2/logging", "a/b", "x\n", "\x1b[2J", "a%2F", "", "-x", "x" * 129])
def test_names_that_change_the_url_are_refused_before_any_request(name):
    with replica() as server:
        with pytest.raises(ControlError, match="is not a model name"):
            fan_out("load", name, {"a": url(server)}, ADMIN)
        assert server.seen == []


@pytest.mark.parametrize(
    "bad", ["ftp://h:1", "http://user:pw@h:1", "http://h:1/v2", "http://h:1?x=1", "http://h:1#f", "h:1", "http://h:99999"]
)
def test_replica_urls_are_exactly_scheme_host_port(bad):
    with pytest.raises(ControlError, match="replica a: '"):
        check_replica_url("a", bad)


def test_replica_urls_accepted():
    assert check_replica_url("a", "http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert check_replica_url("a", "https://[::1]:8443") == "https://[::1]:8443"


def _cli(action: str, model: str, *extra: str):
    args = ["models", action, model, "--stack", "prod", "--deployment", "llm", *extra]
    return run_cli(*args, env={"TRITON_ADMIN_KEY": "secret-admin-key"})


def test_cli_reports_a_hung_replica_at_its_timeout():
    with replica() as healthy, silent_replica() as hung:
        result = _cli("unload", "llm", "--replica", f"hung={hung}", "--replica", f"ok={url(healthy)}", "--timeout", "1")
    assert result.returncode == 1, result.stderr
    assert "hung: FAILED no answer within 1 s" in result.stdout and "ok: ok unloaded" in result.stdout
    assert "1 of 2 replica(s) did not unload llm: hung" in result.stderr


def test_cli_escapes_what_replicas_and_users_send():
    result = _cli("load", "\x1b[2Jname", "--replica", "a=http://127.0.0.1:9")
    assert result.returncode == 1 and "\x1b" not in result.stderr and "\\u001b[2Jname" in result.stderr
    result = _cli("load", "llm", "--replica", "\x1b[31mred=http://127.0.0.1:9")  # nothing listens on port 9
    assert result.returncode == 1 and "\x1b" not in result.stdout + result.stderr
    assert "\\u001b[31mred: FAILED unreachable" in result.stdout


def test_an_admin_key_http_cannot_carry_is_a_failure_not_a_traceback():
    with replica() as server:
        [result] = fan_out("load", "resnet", {"a": url(server)}, {"admin-key": "line\nInjected: 1"})
    assert not result.ok and "unreachable: Invalid header value" in result.detail and server.seen == []


@pytest.mark.parametrize("timeout", ["0", "nan", "inf", "1e9"])
def test_cli_timeout_outside_1_to_7200_seconds_is_a_usage_error(timeout):
    result = _cli("load", "llm", "--replica", "a=http://127.0.0.1:9", "--timeout", timeout)
    assert result.returncode == 64 and "--timeout" in result.stderr and "Traceback" not in result.stderr


def test_kubectl_replicas_port_forward_to_the_port_asked(tmp_path):
    """A stand-in kubectl: one running pod; port-forward reports a local port for the pod port it was asked for."""
    from tritonfleet.models.control import kubectl_replicas

    calls = tmp_path / "calls"
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {calls}\n'
        'case "$1" in\n'
        """  get) echo '{"items": [{"metadata": {"name": "triton-llm-a"}, "status": {"phase": "Running"}}]}' ;;\n"""
        '  port-forward) echo "Forwarding from 127.0.0.1:40123 -> ${5#:}"; exec sleep 30 ;;\n'
        "esac\n"
    )
    kubectl.chmod(0o755)
    with kubectl_replicas("triton", "triton-llm", 8004, kubectl=str(kubectl)) as replicas:
        assert replicas == {"triton-llm-a": "http://127.0.0.1:40123"}
    assert "port-forward -n triton pod/triton-llm-a :8004" in calls.read_text()


def test_models_load_reaches_the_control_proxy_port_where_model_control_is_restricted():
    from components.k8s.access import CONTROL_PROXY_PORT, control_port
    from tritonfleet.core.config import TritonDeployment

    restricted = TritonDeployment.model_validate({"name": "llm", "pool": "gpu"})
    open_control = TritonDeployment.model_validate({"name": "llm", "pool": "gpu", "access": {"restrictModelControl": False}})
    assert control_port(restricted.access) == CONTROL_PROXY_PORT
    assert control_port(open_control.access) == 8000
