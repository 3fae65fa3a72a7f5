"""Model-control proxy: the only holder of the deployment's admin key in a Triton pod (docs/access.md "Keys and model
code").

Runs in its own container beside tritonserver (the Triton image's python3, standard library only), so model code,
which runs inside Triton's container, cannot read this process's /proc. It listens on the pod's loopback (reached
through `kubectl port-forward`), checks the admin key's header on every request, and forwards the model-control routes
(repository, model config, shared memory, trace, logging, and a model's readiness) to Triton on 127.0.0.1 with the
per-pod key Triton was started with. Anything else, inference included, is refused (404): it does not pass here.

Settings (env): CONTROL_PROXY_HEADER (the header name), CONTROL_PROXY_KEY (the admin key), CONTROL_PROXY_POD_KEY_FILE
(the per-pod key), CONTROL_PROXY_PORT (default 8004), TRITON_PORT (default 8000).
"""

from __future__ import annotations

import hmac
import http.client
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HEADER = os.environ["CONTROL_PROXY_HEADER"]
KEY = os.environ["CONTROL_PROXY_KEY"].encode()
PORT = int(os.environ.get("CONTROL_PROXY_PORT", "8004"))
TRITON_PORT = int(os.environ.get("TRITON_PORT", "8000"))
NAME = r"[^/?#]+"
ROUTES = re.compile(
    rf"/v2/repository/index|/v2/repository/models/{NAME}/(load|unload)"  # model-repository
    rf"|/v2/models/{NAME}(/versions/{NAME})?/(config|ready)"  # model-config; readiness, checked after a load
    rf"|/v2/(system|cuda)sharedmemory(/region/{NAME})?/(status|register|unregister)"  # shared-memory
    rf"|/v2(/models/{NAME})?/trace/setting|/v2/logging"  # trace, logging
)
BODY_LIMIT = 64 * 1024 * 1024  # a load may carry a config and files inline
CLIENT_SECONDS = 30  # reading a request: a client that drips bytes is dropped
TRITON_SECONDS = 7200  # a load returns when the model is loaded: large models take minutes


def pod_key() -> str:
    with open(os.environ["CONTROL_PROXY_POD_KEY_FILE"]) as file:
        key = file.read().strip()
    if not key:
        raise SystemExit("control proxy: the per-pod key file is empty")
    return key


class Handler(BaseHTTPRequestHandler):
    timeout = CLIENT_SECONDS
    pod_key = ""

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        self.forward()

    def do_POST(self) -> None:  # noqa: N802
        self.forward()

    def refuse(self, status: int, reason: str) -> None:
        body = f'{{"error":"{reason}"}}'.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def forward(self) -> None:
        sent = self.headers.get(HEADER)
        if sent is None:
            return self.refuse(401, f"model control needs the header '{HEADER}'")
        if not hmac.compare_digest(sent.encode(errors="replace"), KEY):
            return self.refuse(403, f"wrong '{HEADER}'")
        if not ROUTES.fullmatch(self.path.split("?", 1)[0]):
            return self.refuse(404, "not a model-control route; inference goes to Triton's own ports")
        if "Transfer-Encoding" in self.headers:
            return self.refuse(411, "send Content-Length")
        length = self.headers.get("Content-Length", "0")
        if not length.isdigit() or int(length) > BODY_LIMIT:
            return self.refuse(413, f"a request body is at most {BODY_LIMIT} bytes")
        body = self.rfile.read(int(length)) if int(length) else None
        headers = {HEADER: self.pod_key}
        if content_type := self.headers.get("Content-Type"):
            headers["Content-Type"] = content_type
        triton = http.client.HTTPConnection("127.0.0.1", TRITON_PORT, timeout=TRITON_SECONDS)
        try:
            triton.request(self.command, self.path, body=body, headers=headers)
            answer = triton.getresponse()
            data = answer.read()
        except (OSError, http.client.HTTPException) as error:
            return self.refuse(502, f"Triton did not answer: {type(error).__name__}")
        finally:
            triton.close()
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.getheader("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    Handler.pod_key = pod_key()
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    server.daemon_threads = True
    server.serve_forever()
