"""The real tritonserver serving what `tritonfleet models sync` published to S3 (a moto server on loopback).

The binary and its Python backend come from the nvidia-pytriton wheel and run on CPU. The test checks that Triton
loads the synced repository, answers an inference, counts it in /metrics, never loads a version whose sync was
interrupted, and serves a newly synced version in poll mode and, after a load request, in explicit mode.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import boto3
import pytest

from tests.conftest import ROOT, run_cli
from tests.local_servers import free_port, stop
from tests.triton_wheel import pytriton_dir
from tritonfleet.clouds.aws.storage import S3Store
from tritonfleet.core.object_store import RepositoryUri, StoreError
from tritonfleet.models.sync import SyncError, execute, plan_sync
from tritonfleet.models.validate import validate_repository

SAMPLE = ROOT / "tests" / "fixtures" / "model_repository"
MODEL = "add_version"
BUCKET = "tf-triton-models"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
POLL_SECONDS = 1


def http(method: str, url: str, body: dict | None = None, timeout: float = 5) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return 0, ""


def wait_for(check: Callable[[], bool], seconds: float, process: subprocess.Popen | None = None) -> bool:
    """Poll `check` every 0.2 s for at most `seconds`; stop early if `process` exits."""
    for _ in range(int(seconds / 0.2)):
        if check():
            return True
        if process is not None and process.poll() is not None:
            return False
        time.sleep(0.2)
    return check()


class Triton:
    """Starts the wheel's tritonserver binary with a Python backend folder assembled for this interpreter."""

    def __init__(self, root: Path, scratch: Path):
        self.binary = root / "tritonserver" / "bin" / "tritonserver"
        self.libs = root.parent / "nvidia_pytriton.libs"
        self.backends = scratch / "backends"
        shutil.copytree(root / "tritonserver" / "backends" / "python", self.backends / "python")
        stub = root / "tritonserver" / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}"
        shutil.copy2(stub / "triton_python_backend_stub", self.backends / "python")
        self.scratch = scratch

    def start(self, repository: str, *args: str) -> tuple[subprocess.Popen, str, str, Path]:
        http_port, metrics_port = free_port(), free_port()
        log = self.scratch / f"tritonserver-{http_port}.log"
        env = {
            **os.environ,
            **CREDENTIALS,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # the stub's python3 has numpy
            "LD_LIBRARY_PATH": str(self.libs),  # the stub needs the wheel's CUDA runtime once moved
        }
        command = [
            str(self.binary), f"--model-repository={repository}", f"--backend-directory={self.backends}",
            f"--http-port={http_port}", f"--metrics-port={metrics_port}", "--allow-grpc=false",
            "--http-address=127.0.0.1", "--metrics-address=127.0.0.1", "--exit-timeout-secs=5", *args,
        ]  # fmt: skip
        with log.open("w") as sink:
            process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
        return process, f"http://127.0.0.1:{http_port}", f"http://127.0.0.1:{metrics_port}", log


def log_tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="module")
def triton(tmp_path_factory) -> Triton:
    root = pytriton_dir()
    server = Triton(root, tmp_path_factory.mktemp("triton"))
    empty = tmp_path_factory.mktemp("empty-repository")
    process, url, _, log = server.start(str(empty))
    try:
        started = wait_for(lambda: http("GET", f"{url}/v2/health/live")[0] == 200, 30, process)
    finally:
        stop(process)
    if not started:
        pytest.skip(f"the tritonserver binary cannot start on this machine:\n{log_tail(log)}")
    return server


@pytest.fixture(scope="module")
def moto(tmp_path_factory) -> str:
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=sink, stderr=subprocess.STDOUT
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        assert wait_for(lambda: http("GET", f"{endpoint}/moto-api/")[0] == 200, 30, process), log_tail(log)
        boto3.client("s3", endpoint_url=endpoint, **_boto_credentials()).create_bucket(Bucket=BUCKET)
        yield endpoint
    finally:
        stop(process)


def _boto_credentials() -> dict[str, str]:
    return {
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        "region_name": CREDENTIALS["AWS_DEFAULT_REGION"],
    }


@pytest.fixture
def synced(monkeypatch, moto, tmp_path):
    """A copy of the sample repository and a function that syncs it with the CLI, as a user would."""
    for key, value in {**CREDENTIALS, "AWS_ENDPOINT_URL": moto}.items():
        monkeypatch.setenv(key, value)
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE, repo)

    def sync(prefix: str) -> None:
        result = run_cli("models", "sync", str(repo), "--bucket", f"s3://{BUCKET}/{prefix}")
        assert result.returncode == 0, result.stdout + result.stderr

    return repo, sync


def infer(url: str) -> dict:
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    status, text = http("POST", f"{url}/v2/models/{MODEL}/infer", body)
    assert status == 200, text
    return json.loads(text)


def answer(url: str) -> tuple[str, list[float]]:
    result = infer(url)
    return result["model_version"], result["outputs"][0]["data"]


def versions(url: str) -> dict[str, str]:
    status, text = http("POST", f"{url}/v2/repository/index", {})
    assert status == 200, text
    return {entry["version"]: entry.get("state", "") for entry in json.loads(text) if entry["name"] == MODEL}


def version_ready(url: str, version: int) -> bool:
    return http("GET", f"{url}/v2/models/{MODEL}/versions/{version}/ready")[0] == 200


def test_poll_mode_serves_synced_versions_and_never_an_interrupted_one(triton, moto, synced):
    repo, sync = synced
    sync("poll")
    process, url, metrics, log = triton.start(
        f"s3://{moto}/{BUCKET}/poll", "--model-control-mode=poll", f"--repository-poll-secs={POLL_SECONDS}"
    )
    try:
        assert wait_for(lambda: http("GET", f"{url}/v2/health/ready")[0] == 200, 40, process), log_tail(log)
        assert answer(url) == ("1", [2.0, 3.0, 4.0, 5.0])
        status, text = http("GET", f"{metrics}/metrics")
        assert status == 200 and f'nv_inference_request_success{{model="{MODEL}",version="1"}} 1' in text

        # An interrupted sync: version 2's files reach the bucket, its config.pbtxt does not.
        shutil.copytree(repo / MODEL / "1", repo / MODEL / "2")
        store = FailingConfig(S3Store(RepositoryUri.parse(f"s3://{BUCKET}/poll")))
        with pytest.raises(SyncError, match=r"still serves versions \[1\]"):
            execute(plan_sync(validate_repository(repo), store), store)
        assert store.sent == [f"poll/{MODEL}/2/model.py"]
        time.sleep(3 * POLL_SECONDS)  # let Triton poll the bucket a few times
        assert versions(url) == {"1": "READY"}
        assert answer(url) == ("1", [2.0, 3.0, 4.0, 5.0])

        sync("poll")  # resumes: uploads only config.pbtxt, which publishes version 2
        assert wait_for(lambda: version_ready(url, 2), 30, process), log_tail(log)
        assert answer(url) == ("2", [3.0, 4.0, 5.0, 6.0])
        assert wait_for(lambda: "1" not in versions(url) or versions(url)["1"] == "UNAVAILABLE", 15, process)
    finally:
        stop(process)


def test_explicit_mode_loads_the_published_version_on_request(triton, moto, synced):
    repo, sync = synced
    sync("explicit")
    process, url, _, log = triton.start(
        f"s3://{moto}/{BUCKET}/explicit", "--model-control-mode=explicit", f"--load-model={MODEL}"
    )
    try:
        assert wait_for(lambda: http("GET", f"{url}/v2/health/ready")[0] == 200, 40, process), log_tail(log)
        assert answer(url) == ("1", [2.0, 3.0, 4.0, 5.0])
        shutil.copytree(repo / MODEL / "1", repo / MODEL / "2")
        sync("explicit")
        assert answer(url) == ("1", [2.0, 3.0, 4.0, 5.0])  # explicit mode changes nothing until asked
        # A load answers once the model is loaded (copied from S3, its instance started): seconds on a busy machine.
        status, text = http("POST", f"{url}/v2/repository/models/{MODEL}/load", {}, timeout=60)
        assert status == 200, text + log_tail(log)
        assert answer(url) == ("2", [3.0, 4.0, 5.0, 6.0])
    finally:
        stop(process)


class FailingConfig:
    """Passes every upload through to the store except config.pbtxt, which fails as a dropped connection would."""

    def __init__(self, store: S3Store):
        self.store, self.uri, self.sent = store, store.uri, []

    def upload(self, key, source, **kwargs):
        if key.endswith("/config.pbtxt"):
            raise StoreError(f"upload of {key} failed for s3://{self.uri.bucket}: connection reset")
        token = self.store.upload(key, source, **kwargs)
        self.sent.append(key)
        return token

    def __getattr__(self, name):
        return getattr(self.store, name)
