"""The restricted APIs against a real Triton: the tritonserver binary of the nvidia-pytriton wheel, on CPU, started with
the command, args and env our chart renders (the inference key reaches Triton only through $(VAR) expansion of a
Secret-backed env var; the admin group's key is the per-pod key the rendered launcher reads from the file the `pod-key`
init container's command wrote).

Model control (load/unload) is refused without the per-pod key and with the deployment's admin key (which only the
control proxy holds: tests/test_control_proxy_live.py), inference without its key, over HTTP and gRPC; health,
metadata and the metrics port stay open (kubelet probes and Prometheus send no header).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from components.k8s.access import ADMIN, INFERENCE
from tests.access_helpers import chart_values, container_env, kubelet_expand, write_pod_key
from tests.local_servers import free_port
from tests.serving_helpers import by_kind, render
from tests.triton_wheel import pytriton_dir

START_SECONDS = 90

IDENTITY_CONFIG = """
name: "identity"
backend: "python"
max_batch_size: 0
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ -1 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""
IDENTITY_MODEL = """
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
"""
# Rendered args that only make sense in the cluster, replaced here: the repository, the ports, GPU metrics.
LOCAL_OVERRIDES = ("--model-repository=", "--http-port=", "--grpc-port=", "--metrics-port=", "--allow-gpu-metrics=")


def _request(url: str, method: str = "GET", headers: dict[str, str] | None = None, body: dict | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, ConnectionError):
        return 0, ""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    wheel = pytriton_dir() / "tritonserver"
    root = tmp_path_factory.mktemp("triton")
    backends = root / "backends" / "python"
    shutil.copytree(wheel / "backends" / "python", backends, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(wheel / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}" / "triton_python_backend_stub", backends)
    model = root / "models" / "identity"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(IDENTITY_CONFIG)
    (model / "1" / "model.py").write_text(IDENTITY_MODEL)

    values = chart_values("aws", {"exposure": "internal", "restrictInference": True}, modelControlMode="explicit")
    objects = render(values, name="triton-llm")
    deployment = by_kind(objects)["Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    keys = {ADMIN.secret_key: secrets.token_urlsafe(32), INFERENCE.secret_key: secrets.token_urlsafe(32)}
    assert not any(key in json.dumps(deployment) for key in keys.values())
    env = container_env(container, {values["restrictedApis"]["secretName"]: keys})
    args = [kubelet_expand(a, env) for a in container["args"] if not a.startswith(LOCAL_OVERRIDES)]
    assert not [a for a in args if "$(" in a], "every $(VAR) in the args must resolve from the container env"

    ports = {"http": free_port(), "grpc": free_port(), "metrics": free_port()}
    key_file = write_pod_key(objects, root)
    command = [
        *container["command"],  # the launcher: reads the per-pod key, drops the keys' variables, execs tritonserver
        *args,
        f"--model-repository={root / 'models'}",
        f"--backend-directory={root / 'backends'}",
        "--http-address=127.0.0.1",
        "--grpc-address=127.0.0.1",
        "--metrics-address=127.0.0.1",
        f"--http-port={ports['http']}",
        f"--grpc-port={ports['grpc']}",
        f"--metrics-port={ports['metrics']}",
        "--allow-gpu-metrics=false",
        "--exit-timeout-secs=2",
    ]
    process_env = {
        **os.environ,
        **env,
        "CONTROL_KEY_FILE": str(key_file),
        "LD_LIBRARY_PATH": str(wheel.parent.parent / "nvidia_pytriton.libs"),
        # tritonserver for the launcher; the stub finds numpy via python3
        "PATH": f"{wheel / 'bin'}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    log = (root / "server.log").open("w")
    process = subprocess.Popen(command, env=process_env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{ports['http']}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            if _request(f"{base}/v2/health/ready")[0] == 200:
                break
            time.sleep(0.5)
        else:
            pytest.skip(f"tritonserver did not become ready: {(root / 'server.log').read_text()[-1500:]}")
        yield {"base": base, "ports": ports, "keys": keys, "pod_key": key_file.read_text(), "container": container}
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        log.close()


def test_rendered_command_and_args_restrict_model_control_and_inference(server):
    restricted = [a for a in server["container"]["args"] if "restricted" in a]
    assert restricted == [
        "--http-restricted-api=inference:inference-key=$(TRITON_INFERENCE_KEY)",
        "--grpc-restricted-protocol=inference:inference-key=$(TRITON_INFERENCE_KEY)",
    ]
    launcher = server["container"]["command"][2]
    assert '--http-restricted-api=model-repository,model-config,shared-memory,trace,logging:admin-key="$pod_key"' in launcher
    assert '--grpc-restricted-protocol=model-repository,model-config,shared-memory,trace,logging:admin-key="$pod_key"' in launcher


def test_http_model_control_needs_the_per_pod_key(server):
    base, admin, pod_key = server["base"], server["keys"][ADMIN.secret_key], server["pod_key"]
    unload = f"{base}/v2/repository/models/identity/unload"
    status, body = _request(unload, "POST")
    assert status == 403 and "admin-key" in body
    assert _request(unload, "POST", {ADMIN.header: "not-the-key"})[0] == 403
    assert _request(unload, "POST", {ADMIN.header: admin})[0] == 403  # the deployment's key opens the proxy only
    assert _request(f"{base}/v2/models/identity/config")[0] == 403  # model-config is in the admin group
    assert _request(unload, "POST", {ADMIN.header: pod_key})[0] == 200
    assert _request(f"{base}/v2/models/identity/ready")[0] != 200
    assert _request(f"{base}/v2/repository/models/identity/load", "POST", {ADMIN.header: pod_key})[0] == 200
    assert _request(f"{base}/v2/models/identity/ready")[0] == 200


def test_http_inference_needs_the_inference_key(server):
    url = f"{server['base']}/v2/models/identity/infer"
    body = {"inputs": [{"name": "INPUT0", "shape": [3], "datatype": "FP32", "data": [1, 2, 3]}]}
    status, text = _request(url, "POST", {"Content-Type": "application/json"}, body)
    assert status == 403 and "inference-key" in text
    assert _request(url, "POST", {ADMIN.header: server["keys"][ADMIN.secret_key]}, body)[0] == 403  # keys are separate
    status, text = _request(url, "POST", {INFERENCE.header: server["keys"][INFERENCE.secret_key]}, body)
    assert status == 200 and json.loads(text)["outputs"][0]["data"] == [1.0, 2.0, 3.0]


def test_grpc_needs_the_prefixed_metadata(server):
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    client = grpcclient.InferenceServerClient(f"127.0.0.1:{server['ports']['grpc']}")
    admin, inference, pod_key = server["keys"][ADMIN.secret_key], server["keys"][INFERENCE.secret_key], server["pod_key"]
    with pytest.raises(InferenceServerException, match=ADMIN.grpc_header):
        client.unload_model("identity")
    with pytest.raises(InferenceServerException, match=ADMIN.grpc_header):
        client.unload_model("identity", headers={ADMIN.header: pod_key})  # gRPC wants the triton-grpc-protocol- prefix
    with pytest.raises(InferenceServerException, match=ADMIN.grpc_header):
        client.unload_model("identity", headers={ADMIN.grpc_header: admin})  # gRPC control: the per-pod key only
    client.unload_model("identity", headers={ADMIN.grpc_header: pod_key})
    client.load_model("identity", headers={ADMIN.grpc_header: pod_key})
    tensor = grpcclient.InferInput("INPUT0", [2], "FP32")
    tensor.set_data_from_numpy(np.array([4, 5], dtype=np.float32))
    with pytest.raises(InferenceServerException, match=INFERENCE.grpc_header):
        client.infer("identity", [tensor])
    result = client.infer("identity", [tensor], headers={INFERENCE.grpc_header: inference})
    assert result.as_numpy("OUTPUT0").tolist() == [4.0, 5.0]
    assert client.is_server_ready() and client.get_model_metadata("identity").name == "identity"  # health, metadata open


def test_probes_metadata_and_metrics_stay_open(server):
    base = server["base"]
    assert _request(f"{base}/v2/health/live")[0] == 200
    assert _request(f"{base}/v2/health/ready")[0] == 200
    assert _request(f"{base}/v2/models/identity")[0] == 200
    status, metrics = _request(f"http://127.0.0.1:{server['ports']['metrics']}/metrics")
    assert status == 200 and "nv_inference_request_success" in metrics
