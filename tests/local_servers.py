"""Servers the tests start on this machine: a free port on 127.0.0.1, and a stop by pid that never leaves one behind."""

from __future__ import annotations

import os
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_handed_out: set[int] = set()
_LOWEST_PORT = 10_000


def _this_workers_ports() -> range:
    """Ports below the kernel's ephemeral range (where no outgoing connection takes its local port), split between the
    pytest-xdist workers so that no two test processes are ever given the same one: a probe socket only shows a port
    free now, and a server started on it binds seconds later, after its models load. Two workers once handed the same
    port to two tritonservers; the one that lost exited, and the other's readiness answered for it."""
    try:
        ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32_768  # Linux's default
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    high = max(ephemeral_low, _LOWEST_PORT + 1_000 * workers)  # an unusual kernel setting: overlap rather than none
    span = (high - _LOWEST_PORT) // max(workers, 1)
    start = _LOWEST_PORT + worker * span
    return range(start, start + span)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, from this test process's own share (_this_workers_ports), and
    that this process has not been given before: a server given one port for two endpoints refuses to start
    (tritonserver: "cannot listen to HTTP requests and metrics requests at the same address")."""
    for port in _this_workers_ports():
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port on 127.0.0.1 left in this test process's share {_this_workers_ports()}")


def stop(process: subprocess.Popen, grace_seconds: float = 15) -> None:
    """SIGTERM, then SIGKILL after `grace_seconds` (0: SIGKILL at once); returns once the process is gone."""
    if process.poll() is not None:
        return
    if grace_seconds > 0:
        process.terminate()
        try:
            process.wait(timeout=grace_seconds)
            return
        except subprocess.TimeoutExpired:
            pass
    process.kill()
    process.wait(timeout=30)


@contextmanager
def local_s3_repository(uri: str, models: dict[str, tuple[str, str]]) -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 holding `models` (name -> (config.pbtxt, version 1's model.py)) at the bucket and
    prefix of `uri` (s3://bucket/prefix, what the rendered args name); yields the URI Triton reads it by
    (s3://http://host:port/bucket/prefix). moto keeps one in-memory S3 per process: it starts clean and is left clean."""
    import boto3
    from moto.server import ThreadedMotoServer

    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    reset = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    try:
        urllib.request.urlopen(reset, timeout=10)
        keys = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **keys)
        s3.create_bucket(Bucket=bucket)
        for model, (config, code) in models.items():
            s3.put_object(Bucket=bucket, Key=f"{prefix}/{model}/config.pbtxt", Body=config.encode())
            s3.put_object(Bucket=bucket, Key=f"{prefix}/{model}/1/model.py", Body=code.encode())
        yield f"s3://{endpoint}/{bucket}/{prefix}"
    finally:
        urllib.request.urlopen(reset, timeout=10)
        server.stop()
