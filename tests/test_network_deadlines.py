"""Every network call the tool makes has an overall deadline: a server that accepts a connection and
then trickles its answer a byte at a time never trips a per-read timeout. A local slow-drip HTTP server on 127.0.0.1
answers a Triton client's probe and drips its inference answers (or its probe); the load test still ends, with the
requests it abandoned counted as errors."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from local_servers import free_port

from tritonfleet.deadline import DeadlineExceeded, call_within

MODEL = {"name": "m", "versions": ["1"], "platform": "python",
         "inputs": [{"name": "x", "datatype": "FP32", "shape": [1]}], "outputs": [{"name": "y", "datatype": "FP32", "shape": [1]}]}
DRIP_SECONDS = 0.2  # between two bytes of a dripped answer: well inside any per-read timeout


class _SlowDrip(BaseHTTPRequestHandler):
    """Triton's HTTP API for the probe; every path in `drip` is answered one byte at a time, for ever."""

    drip: tuple[str, ...] = ()
    stopping: threading.Event

    def log_message(self, *args) -> None:  # quiet
        pass

    def _answer(self, body: bytes) -> None:
        if not self._dripped():
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Drip: ")  # a header that never ends, a byte at a time
        while not self.stopping.is_set():  # bounded by the server's stop
            try:
                self.wfile.write(b"a")
                self.wfile.flush()
            except OSError:
                return
            self.stopping.wait(DRIP_SECONDS)

    def _dripped(self) -> bool:
        return any(self.path.startswith(prefix) for prefix in self.drip)

    def do_GET(self) -> None:
        if self.path.endswith("/config"):
            self._answer(json.dumps({"name": "m", "max_batch_size": 0}).encode())
        elif self.path.startswith("/v2/models/m") and not self.path.endswith("/ready"):
            self._answer(json.dumps(MODEL).encode())
        else:
            self._answer(b"")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self._answer(b"{}")


@pytest.fixture
def slow_server():
    """start(drip=paths) -> 'host:port' of a slow-drip server; stopped (and its drips ended) after the test."""
    servers = []

    def start(drip: tuple[str, ...]) -> str:
        stopping = threading.Event()
        handler = type("Handler", (_SlowDrip,), {"drip": drip, "stopping": stopping})
        server = ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="slow-drip", daemon=True).start()
        servers.append((server, stopping))
        return f"127.0.0.1:{server.server_address[1]}"

    yield start
    for server, stopping in servers:
        stopping.set()
        server.shutdown()
        server.server_close()


def _run_bounded(plan):
    """Run the load test in a thread; a run still going after 60 s (the test's hang guard) fails the test."""
    from tritonfleet.loadtest import run

    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(_capture(run, plan)), daemon=True)
    worker.start()
    worker.join(60)
    assert outcome, "the load test did not end: no overall deadline"
    return outcome[0]


def _capture(call, *args):
    try:
        return call(*args)
    except Exception as error:  # the test looks at it
        return error


@pytest.mark.parametrize("mode", [{"concurrency": 2}, {"rate": 20.0}], ids=["closed-loop", "open-loop"])
def test_a_load_test_against_a_slow_drip_server_ends_at_its_duration_plus_the_timeout(slow_server, mode):
    from tritonfleet.loadtest import Plan

    url = slow_server(drip=("/v2/models/m/infer",))
    result = _run_bounded(Plan(url=url, model="m", duration_s=0.5, timeout_s=1.0, warmup_s=0, **mode))
    assert not isinstance(result, Exception), result
    assert result.succeeded == 0 and result.errors == result.requests >= 1
    assert any("abandoned" in sample for sample in result.error_samples), result.error_samples


def test_a_probe_that_never_completes_is_a_loadtest_error(slow_server):
    from tritonfleet.loadtest import CONTROL_TIMEOUT_S, LoadtestError, Plan

    url = slow_server(drip=("/v2/health/live",))
    error = _run_bounded(Plan(url=url, model="m", concurrency=1, duration_s=0.5, timeout_s=1.0))
    assert isinstance(error, LoadtestError)
    assert str(error) == f"the Triton server at {url} did not answer the probe within {CONTROL_TIMEOUT_S:g} s"


def test_call_within_returns_raises_or_gives_up():
    assert call_within(5, lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        call_within(5, lambda: 1 / 0)
    never = threading.Event()
    with pytest.raises(DeadlineExceeded, match="no answer within 0.1 s"):
        call_within(0.1, never.wait)
    never.set()
    time.sleep(0)  # the abandoned call's thread returns now


def test_preflight_calls_carry_timeouts():
    """Each AWS call: connect and read timeouts and a bounded number of attempts (botocore's defaults are 60 s each);
    each Compute Engine call: a timeout unless the caller gives one. The CLI bounds the whole run too."""
    from tritonfleet.clouds.aws.preflight import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, aws_clients
    from tritonfleet.clouds.gcp.preflight import CALL_TIMEOUT_S, _Bounded
    from tritonfleet.core.preflight import PREFLIGHT_DEADLINE_S

    for client in aws_clients("us-east-1"):
        config = client.meta.config
        assert (config.connect_timeout, config.read_timeout, config.retries["total_max_attempts"]) == (CONNECT_TIMEOUT_S, READ_TIMEOUT_S, 3)

    class Recording:
        region = "us-central1"

        def get(self, **kwargs):
            return kwargs

    bounded = _Bounded(Recording())
    assert bounded.get(project="p") == {"project": "p", "timeout": CALL_TIMEOUT_S}
    assert bounded.get(project="p", timeout=5)["timeout"] == 5 and bounded.region == "us-central1"
    assert CALL_TIMEOUT_S < PREFLIGHT_DEADLINE_S and READ_TIMEOUT_S < PREFLIGHT_DEADLINE_S
