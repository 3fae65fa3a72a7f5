"""A moto S3 server on 127.0.0.1 that counts what it is asked: requests by method and the object bytes it sends.

The node-local model cache's proof reads these counts: a replica served from the cache makes no object GETs."""

from __future__ import annotations

import threading
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Counts:
    requests: Counter = field(default_factory=Counter)  # method -> requests
    object_gets: list[str] = field(default_factory=list)  # paths of GETs of objects (not listings)
    bytes_sent: int = 0  # body bytes of object GETs

    def reset(self) -> None:
        self.requests.clear()
        self.object_gets.clear()
        self.bytes_sent = 0


@contextmanager
def counting_s3() -> Iterator[tuple[str, Counts]]:
    """Yields (endpoint, counts); the server's in-memory S3 starts empty and goes with it."""
    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args, **kwargs) -> None:
            pass

    counts = Counts()
    lock = threading.Lock()
    app = DomainDispatcherApplication(create_backend_app)

    def counted(environ, start_response):
        method, query = environ["REQUEST_METHOD"], environ.get("QUERY_STRING", "")
        path = environ.get("PATH_INFO", "")
        is_object_get = method == "GET" and path.strip("/").count("/") >= 1 and "list-type" not in query
        chunks = app(environ, start_response)
        body = b"".join(chunks)
        with lock:
            counts.requests[method] += 1
            if is_object_get:
                counts.object_gets.append(path)
                counts.bytes_sent += len(body)
        return [body]

    server = make_server("127.0.0.1", 0, counted, threaded=True, request_handler=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    reset = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    try:
        urllib.request.urlopen(reset, timeout=10)  # moto keeps one S3 per process: start clean, leave clean
        counts.reset()
        yield endpoint, counts
    finally:
        urllib.request.urlopen(reset, timeout=10)
        server.shutdown()
        thread.join(timeout=10)
