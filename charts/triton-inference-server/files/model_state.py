"""Model-state exporter: Triton's repository index as Prometheus metrics, so a model that failed to load is visible.

Runs beside tritonserver in the same pod (the Triton image's own python3, standard library only). Every scrape asks
Triton's repository index (POST /v2/repository/index) and answers:

  tritonfleet_triton_model_ready{model, version, state}  1 when the version is READY, else 0
  tritonfleet_triton_model_state_up                      1 when Triton answered the index request, else 0
  tritonfleet_triton_model_cache_hit{reason}             with the node-local model cache (MODEL_STATE_CACHE_FILE):
                                                         1 when Triton serves the node's view, 0 when it fell back
                                                         to the bucket (reason: why, from the start script)

Models never asked to load (explicit mode) and models unloaded on purpose are left out: they are not failures.
Settings (env): TRITON_URL (default http://127.0.0.1:8000), MODEL_STATE_ADDRESS/PORT (default all interfaces, 8003),
and, when the
model-repository API is restricted, MODEL_STATE_HEADER (the header name) and MODEL_STATE_KEY_FILE (the per-pod key's
file).
"""

from __future__ import annotations

import json
import os
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TRITON_URL = os.environ.get("TRITON_URL", "http://127.0.0.1:8000")
ADDRESS = os.environ.get("MODEL_STATE_ADDRESS", "")  # every interface of the pod: Prometheus scrapes the pod IP
PORT = int(os.environ.get("MODEL_STATE_PORT", "8003"))
HEADER = os.environ.get("MODEL_STATE_HEADER", "")
KEY_FILE = os.environ.get("MODEL_STATE_KEY_FILE", "")  # the per-pod key, when the chart runs the control proxy
CACHE_FILE = os.environ.get("MODEL_STATE_CACHE_FILE", "")  # the model cache start script's choice: "hit" or "miss WHY"
TIMEOUT_SECONDS = 5


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def repository_index() -> list[dict]:
    request = urllib.request.Request(f"{TRITON_URL}/v2/repository/index", data=b"{}", method="POST")
    request.add_header("Content-Type", "application/json")
    if HEADER:
        with open(KEY_FILE) as file:  # read at each scrape: the file is written before this container starts
            request.add_header(HEADER, file.read().strip())
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
        return json.loads(response.read())


def exposition() -> str:
    lines = [
        "# HELP tritonfleet_triton_model_ready 1 when Triton reports the model version READY, else 0 (see state).",
        "# TYPE tritonfleet_triton_model_ready gauge",
    ]
    try:
        models = repository_index()
        up = 1
    except (OSError, ValueError):
        models, up = [], 0
    for model in models:
        state = model.get("state", "")
        if not state or (state == "UNAVAILABLE" and model.get("reason", "") == "unloaded"):
            continue
        labels = f'model="{_label(model["name"])}",version="{_label(model.get("version", ""))}",state="{_label(state)}"'
        lines.append(f"tritonfleet_triton_model_ready{{{labels}}} {1 if state == 'READY' else 0}")
    lines += [
        "# HELP tritonfleet_triton_model_state_up 1 when Triton answered the repository index request.",
        "# TYPE tritonfleet_triton_model_state_up gauge",
        f"tritonfleet_triton_model_state_up {up}",
    ]
    return "\n".join(lines + _cache_lines()) + "\n"


def _cache_lines() -> list[str]:
    try:
        with open(CACHE_FILE) as file:
            choice, _, reason = file.readline().strip().partition(" ")
    except OSError:
        return []  # no model cache, or Triton's start has not chosen yet
    return [
        "# HELP tritonfleet_triton_model_cache_hit 1 when Triton serves its node's model cache, 0 when it reads the bucket.",
        "# TYPE tritonfleet_triton_model_cache_hit gauge",
        f'tritonfleet_triton_model_cache_hit{{reason="{_label(reason)}"}} {1 if choice == "hit" else 0}',
    ]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        if self.path != "/metrics":
            self.send_error(404)
            return
        body = exposition().encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # scrapes every 15 s would flood the pod's log
        pass


if __name__ == "__main__":
    ThreadingHTTPServer((ADDRESS, PORT), Handler).serve_forever()
