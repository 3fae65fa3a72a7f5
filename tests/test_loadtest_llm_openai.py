"""`loadtest --llm --protocol openai` over the OpenAI streaming wire format: /v1/models, then /v1/completions with
stream true answered by server-sent events of completion chunks, a usage block and `data: [DONE]`.

Triton's OpenAI-compatible frontend is not in the nvidia-pytriton wheel, so a stand-in on 127.0.0.1 speaks that wire
format with a known cost (30 ms to the first token, 5 ms a token after it); the gRPC and generate_stream paths are
tested against a real tritonserver (tests/test_loadtest_llm_live.py). The server runs in a thread and is shut down.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from tests.conftest import one_line
from tritonfleet.cli import app
from tritonfleet.loadtest import LoadtestError
from tritonfleet.loadtest_llm import LlmPlan, run

FIRST_S, TOKEN_S = 0.030, 0.005


class _Frontend(BaseHTTPRequestHandler):
    def log_message(self, *args):
        return None

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "llama", "object": "model"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert request["stream"] is True and request["model"] == "llama" and request["prompt"]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(FIRST_S)
        for i in range(request["max_tokens"]):
            if i:
                time.sleep(TOKEN_S)
            chunk = {"object": "text_completion", "choices": [{"index": 0, "text": f" t{i}"}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        usage = {"choices": [], "usage": {"completion_tokens": request["max_tokens"]}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())


@pytest.fixture(scope="module")
def frontend():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Frontend)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_openai_streaming_measures_ttft_itl_and_tokens(frontend):
    result = run(LlmPlan(url=frontend, model="llama", protocol="openai", concurrency=2, max_requests=6,
                         input_tokens=(32, 32), output_tokens=(8, 8)))  # fmt: skip
    assert result.protocol == "openai" and result.errors == 0 and result.succeeded == 6
    assert result.output_tokens.mean == 8 and result.input_tokens.mean == 32
    assert result.ttft_min_ms >= FIRST_S * 1000 * 0.9 and result.itl_ms.p50 >= TOKEN_S * 1000 * 0.9


def test_a_model_the_frontend_does_not_serve_is_named(frontend):
    with pytest.raises(LoadtestError, match="does not serve 'mistral'; it serves: llama"):
        run(LlmPlan(url=frontend, model="mistral", protocol="openai", concurrency=1, max_requests=1))


def test_protocol_openai_without_llm_is_a_usage_error(frontend):
    outcome = CliRunner().invoke(app, ["loadtest", "--model", "llama", "--url", frontend, "--protocol", "openai",
                                       "--concurrency", "1"])  # fmt: skip
    assert outcome.exit_code == 64 and "add --llm" in one_line(outcome.output)
