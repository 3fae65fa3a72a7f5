"""Poll mode never serves a model with a configuration Triton made up: the real `tritonserver` of the nvidia-pytriton
wheel, started with gcp-dev's rendered poll-mode args, leaves a model whose `config.pbtxt` has not arrived yet
unloaded, and loads it at the poll after the file appears; the same server without `--disable-auto-complete-config`
loads it at once with an auto-completed configuration (the race the flag closes).

Test-only changes to the rendered args: the repository is a local folder, the HTTP port a free loopback port, gRPC and
metrics off, the poll every second (the rendered interval is the drain budget's, 10 s) and the wheel's Python backend.
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
from contextlib import contextmanager
from pathlib import Path

from tests.access_helpers import container_env, kubelet_expand
from tests.local_servers import free_port, stop
from tests.serving_helpers import by_kind, planned_values, render
from tests.triton_wheel import pytriton_dir

STACK, RELEASE = "gcp-dev", "triton-resnet"
AUTO_COMPLETE_OFF = "--disable-auto-complete-config"
# A Python model that can describe itself: with auto-complete on, Triton loads it from model.py alone.
MODEL_PY = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(config):
        config.add_input({"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [4]})
        config.add_output({"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [4]})
        config.set_max_batch_size(8)
        return config

    def execute(self, requests):
        tensor = pb_utils.get_input_tensor_by_name
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", tensor(r, "INPUT0").as_numpy())]) for r in requests]
"""
CONFIG = """name: "arriving"
backend: "python"
max_batch_size: 8
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""


def rendered_args() -> list[str]:
    spec = by_kind(render(planned_values(STACK, RELEASE), name=RELEASE))["Deployment"]["spec"]["template"]["spec"]
    container = spec["containers"][0]
    secrets: dict[str, dict[str, str]] = {}
    for entry in container.get("env", []):
        if "valueFrom" in entry:
            ref = entry["valueFrom"]["secretKeyRef"]
            secrets.setdefault(ref["name"], {})[ref["key"]] = f"test-{ref['key']}"
    env = container_env(container, secrets)
    return [kubelet_expand(a, env) for a in container["args"]]


def admin_header(args: list[str]) -> dict[str, str]:
    """The header the rendered args restrict the repository API to (the admin key), with the test's key."""
    for arg in args:
        if arg.startswith("--http-restricted-api=") and "model-repository" in arg.split(":", 1)[0]:
            header, _, value = arg.split(":", 1)[1].partition("=")
            return {header: value}
    return {}


def index(port: int, headers: dict[str, str]) -> dict[str, str]:
    """Model name -> state ('' for a model Triton saw but could not read) from the repository index."""
    url = f"http://127.0.0.1:{port}/v2/repository/index"
    request = urllib.request.Request(url, data=b"{}", method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return {m["name"]: m.get("state", "") for m in json.loads(response.read())}
    except (urllib.error.URLError, OSError):
        return {}


def wait_for(predicate, attempts: int = 120, pause: float = 0.5) -> bool:
    for _ in range(attempts):
        if predicate():
            return True
        time.sleep(pause)
    return False


@contextmanager
def serving(args: list[str], repository: Path, work: Path):
    """tritonserver with `args` (the test-only changes of the module docstring); once it answers, yields a function
    that reads its repository index."""
    root = pytriton_dir() / "tritonserver"
    backend = work / "backends" / "python"
    backend.mkdir(parents=True)
    for source in (root / "backends" / "python").glob("*.*"):
        shutil.copy(source, backend)
    shutil.copy(root / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}" / "triton_python_backend_stub", backend)
    port = free_port()
    replaced = {"--model-repository": str(repository), "--repository-poll-secs": "1", "--http-port": str(port)}
    args = [f"{a.split('=', 1)[0]}={replaced[a.split('=', 1)[0]]}" if a.split("=", 1)[0] in replaced else a for a in args]
    args = [a for a in args if not a.startswith(("--grpc-port=", "--metrics-port=", "--allow-metrics=", "--allow-gpu-metrics="))]
    env = {
        **os.environ,
        "LD_LIBRARY_PATH": str(root.parent.parent / "nvidia_pytriton.libs"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    log_path = work / "tritonserver.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [str(root / "bin" / "tritonserver"), *args, f"--backend-directory={work / 'backends'}",
             "--http-address=127.0.0.1", "--allow-grpc=false", "--allow-metrics=false"],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work,
        )
    try:
        headers = admin_header(args)
        live = wait_for(lambda: process.poll() is not None or "arriving" in index(port, headers), attempts=240)
        assert live and process.poll() is None, "tritonserver did not start:\n" + log_path.read_text()[-3000:]
        yield lambda: index(port, headers)
    finally:
        stop(process, grace_seconds=0)


def repository_with_a_model_missing_its_config(tmp_path: Path) -> Path:
    repository = tmp_path / "repository"
    (repository / "arriving" / "1").mkdir(parents=True)
    (repository / "arriving" / "1" / "model.py").write_text(MODEL_PY)
    return repository


def test_poll_mode_waits_for_the_config_before_loading_a_model(tmp_path):
    args = rendered_args()
    assert "--model-control-mode=poll" in args and AUTO_COMPLETE_OFF in args
    repository = repository_with_a_model_missing_its_config(tmp_path)
    with serving(args, repository, tmp_path / "work") as models:
        time.sleep(3)  # three more polls at 1 s: still not loaded
        assert models()["arriving"] != "READY"
        (repository / "arriving" / "config.pbtxt").write_text(CONFIG)
        assert wait_for(lambda: models().get("arriving") == "READY", attempts=60), models()


def test_without_the_flag_triton_serves_a_made_up_configuration(tmp_path):
    """The control: the race the flag closes is real on this tritonserver."""
    args = [a for a in rendered_args() if a != AUTO_COMPLETE_OFF]
    repository = repository_with_a_model_missing_its_config(tmp_path)
    with serving(args, repository, tmp_path / "work") as models:
        assert wait_for(lambda: models().get("arriving") == "READY", attempts=60), models()
        assert not (repository / "arriving" / "config.pbtxt").exists()
