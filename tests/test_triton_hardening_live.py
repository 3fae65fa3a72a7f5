"""The rendered Triton container's hardening, on the real `tritonserver` of the nvidia-pytriton wheel started with
gcp-dev's rendered command and args (poll mode, restricted APIs behind keys):

- poll mode never serves a model with a configuration Triton made up: a model whose `config.pbtxt` has not arrived
  yet stays unloaded, and loads at the poll after the file appears; the same server without
  `--disable-auto-complete-config` loads it at once with an auto-completed configuration (the race the flag closes);
- what model code can read of the keys: a Python model looks for them where model code can look, in its own
  environment, in the server's /proc environ and in the server's /proc cmdline. The deployment's admin key is in none
  of them (only the control proxy's container holds it); the cmdline shows the per-pod key, which opens this pod's
  Triton only (docs/access.md "Keys and model code" says what that leaves).

Test-only changes to the rendered args: the repository is a local folder, the HTTP port a free loopback port, gRPC and
metrics off, the poll every second (the rendered interval is the drain budget's, 10 s) and the wheel's Python backend.
The rendered command runs as it is, with the wheel's `bin/` first on PATH.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from components.k8s.access import ADMIN
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


def rendered_container() -> dict:
    spec = by_kind(render(planned_values(STACK, RELEASE), name=RELEASE))["Deployment"]["spec"]["template"]["spec"]
    return spec["containers"][0]


def rendered_args() -> list[str]:
    """The rendered args as the kubelet expands them, with `test-<secret key>` for each key."""
    container = rendered_container()
    env = container_env(container, stand_in_secrets(container))
    return [kubelet_expand(a, env) for a in container["args"]]


def stand_in_secrets(container: dict) -> dict[str, dict[str, str]]:
    """A stand-in for each Secret the container's env reads: `test-<key>` for each key."""
    secrets: dict[str, dict[str, str]] = {}
    for entry in container.get("env", []):
        if "valueFrom" in entry:
            ref = entry["valueFrom"]["secretKeyRef"]
            secrets.setdefault(ref["name"], {})[ref["key"]] = f"test-{ref['key']}"
    return secrets


POD_KEY = "test-pod-key"  # what the `pod-key` init container writes (tests/test_control_proxy_live.py runs it)


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
def serving(
    args: list[str], repository: Path, work: Path, extra_env: dict[str, str] | None = None, command: list[str] | None = None
):
    """tritonserver with `args` (the test-only changes of the module docstring); once it answers, yields a function
    that reads its repository index."""
    extra_env = extra_env or {}
    root = pytriton_dir() / "tritonserver"
    backend = work / "backends" / "python"
    backend.mkdir(parents=True)
    for source in (root / "backends" / "python").glob("*.*"):
        shutil.copy(source, backend)
    shutil.copy(root / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}" / "triton_python_backend_stub", backend)
    port = free_port()
    replaced = {"--model-repository": str(repository), "--repository-poll-secs": "1", "--http-port": str(port)}
    flag = lambda a: a.split("=", 1)[0]  # noqa: E731
    args = [f"{flag(a)}={replaced[flag(a)]}" if flag(a) in replaced else a for a in args]
    args = [a for a in args if not a.startswith(("--grpc-port=", "--metrics-port=", "--allow-metrics=", "--allow-gpu-metrics="))]
    container = rendered_container()
    (work / "pod-key").write_text(POD_KEY)
    env = {
        **os.environ,
        **container_env(container, stand_in_secrets(container)),  # the keys' variables too, as the kubelet sets them
        "CONTROL_KEY_FILE": str(work / "pod-key"),
        **extra_env,
        "LD_LIBRARY_PATH": str(root.parent.parent / "nvidia_pytriton.libs"),
        "PATH": f"{root / 'bin'}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    log_path = work / "tritonserver.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [*(command or container["command"]), *args, f"--backend-directory={work / 'backends'}",
             "--http-address=127.0.0.1", "--allow-grpc=false", "--allow-metrics=false"],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work,
            start_new_session=True,  # its own process group: the python backend stubs it starts stop with it
        )
    try:
        headers = {ADMIN.header: POD_KEY}
        live = wait_for(lambda: process.poll() is not None or "arriving" in index(port, headers), attempts=240)
        assert live and process.poll() is None, "tritonserver did not start:\n" + log_path.read_text()[-3000:]
        yield lambda: index(port, headers)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the group led by this pid: tritonserver and its stubs
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


# A Python model that looks for the keys where model code can: its own environment (inherited from the server), the
# server's environ and cmdline in /proc. It writes what it found to PROBE_REPORT.
PROBE_PY = """import json
import os

import triton_python_backend_utils as pb_utils


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError as error:
        return f"unreadable: {error}"


class TritonPythonModel:
    def initialize(self, args):
        server = os.getppid()
        report = {
            "server": read(f"/proc/{server}/comm").strip(),
            "own_environment": {k: v for k, v in os.environ.items() if k.startswith("TRITON_") and k.endswith("_KEY")},
            "server_environ": read(f"/proc/{server}/environ").split("\\0"),
            "server_cmdline": read(f"/proc/{server}/cmdline").split("\\0"),
        }
        with open(os.environ["PROBE_REPORT"], "w") as f:
            json.dump(report, f)

    def execute(self, requests):
        tensor = pb_utils.get_input_tensor_by_name
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", tensor(r, "INPUT0").as_numpy())]) for r in requests]
"""


def probe(tmp_path: Path, command: list[str] | None = None, extra_args: tuple[str, ...] = (), extra_env: dict | None = None) -> dict:
    """What the probe model found, in a server started with the rendered args and `extra_args` (and `command`, or the
    rendered one)."""
    repository = tmp_path / "repository"
    (repository / "arriving" / "1").mkdir(parents=True)
    (repository / "arriving" / "config.pbtxt").write_text(CONFIG)
    (repository / "arriving" / "1" / "model.py").write_text(PROBE_PY)
    report_path = tmp_path / "report.json"
    env = {"PROBE_REPORT": str(report_path), **(extra_env or {})}
    with serving([*rendered_args(), *extra_args], repository, tmp_path / "work", env, command) as models:
        assert wait_for(lambda: models().get("arriving") == "READY", attempts=60), models()
    return json.loads(report_path.read_text())


def test_model_code_reads_no_admin_key_only_its_pods_own(tmp_path):
    container = rendered_container()
    assert container["command"][:2] == ["bash", "-c"], "model control is restricted: the per-pod key's launcher runs Triton"
    assert not [e for e in container["env"] if "valueFrom" in e], "gcp-dev restricts model control only: no key here"
    report = probe(tmp_path)
    assert report["server"] == "tritonserver", "the model's parent is the server (the launcher exec'd into it)"
    everything = json.dumps(report)
    assert "test-admin-key" not in everything, "the deployment's admin key is held by the control proxy only"
    assert report["own_environment"] == {}
    # What model code can still read: its own pod's key, which opens this pod's Triton only.
    assert "--http-restricted-api=model-repository,model-config,shared-memory,trace,logging:admin-key=test-pod-key" in (
        report["server_cmdline"]
    )


def test_the_probe_finds_a_key_in_the_args_or_the_environment(tmp_path):
    """The control: a server started as the chart once started it (directly, the admin key in its args and its
    environment) hands both to the model code it starts, so the probe above would have found it."""
    old_flag = "--http-restricted-api=logging:admin-key=test-admin-key"  # an API the test's index requests do not use
    report = probe(tmp_path, command=["tritonserver"], extra_args=(old_flag,), extra_env={"TRITON_ADMIN_KEY": "test-admin-key"})
    assert report["own_environment"] == {"TRITON_ADMIN_KEY": "test-admin-key"}
    assert "TRITON_ADMIN_KEY=test-admin-key" in report["server_environ"]
    assert old_flag in report["server_cmdline"]
