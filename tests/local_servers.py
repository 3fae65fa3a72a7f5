"""Servers the tests start on this machine: a free port on 127.0.0.1, and a stop by pid that never leaves one behind."""

from __future__ import annotations

import fcntl
import os
import random
import socket
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LOWEST_PORT = 10_000
_CLAIMS = Path(tempfile.gettempdir()) / "tritonfleet-test-ports"
_claimed: dict[int, int] = {}  # port -> the open file whose lock claims it, held until this process exits


def _ports_below_the_ephemeral_range() -> range:
    """Where no outgoing connection takes its local port: from 10000 up to the kernel's ephemeral range."""
    try:
        ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32_768  # Linux's default
    return range(_LOWEST_PORT, max(ephemeral_low, _LOWEST_PORT + 10_000))


def _claim(port: int) -> bool:
    """Claim `port` for this process: an exclusive lock on a file named after it, which no other test process (an
    xdist worker, another pytest run) can take while this one lives; the kernel drops it when the process ends."""
    _CLAIMS.mkdir(exist_ok=True)
    fd = os.open(_CLAIMS / str(port), os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _claimed[port] = fd
    return True


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, below the ephemeral range, that no other test process holds
    and this one was never given. A probe socket alone only shows a port free now, and a server started on it binds
    seconds later (after its models load): two xdist workers once handed one port to two tritonservers, the one that
    lost exited, and the other's readiness answered for it. And a server given one port for two endpoints refuses to
    start (tritonserver: "cannot listen to HTTP requests and metrics requests at the same address")."""
    ports = _ports_below_the_ephemeral_range()
    start = random.randrange(len(ports))  # processes start apart, so they seldom contend for the same claims
    for offset in range(len(ports)):
        port = ports[(start + offset) % len(ports)]
        if port in _claimed or not _claim(port):
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use by something else: stays claimed, so this process does not try it again
        return port
    raise RuntimeError(f"no free port on 127.0.0.1 in {ports}")


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
