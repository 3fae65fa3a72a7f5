"""The admin key out of model code's reach, on real `tritonserver`s (nvidia-pytriton wheel, CPU): two pods, each
started as the chart renders it — the `pod-key` init container's command writes the per-pod key, tritonserver runs
through the rendered launcher (which reads that key), and the `control-proxy` container runs the rendered ConfigMap's
code with the admin key from a stand-in Secret.

- through a pod's proxy with the admin key, load and unload work (the fan-out `tritonfleet models load` uses);
- without the header the proxy answers 401, with a wrong key 403, and it forwards no inference route (404);
- the admin key is in neither Triton's /proc/<pid>/cmdline nor its environment; the per-pod key is (what model code
  can still read), and it opens its own pod's Triton only: the other pod's refuses it (403);
- Triton itself refuses the admin key (HTTP and gRPC): model control goes through the proxy or nowhere.

Test-only changes: a local repository folder, free loopback ports, the key file under the test's folder.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from components.k8s.access import ADMIN, INFERENCE
from tests.access_helpers import chart_values, container_env, kubelet_expand, pod_containers, start_control_proxy, write_pod_key
from tests.local_servers import free_port, stop
from tests.serving_helpers import render
from tests.test_access_triton import IDENTITY_CONFIG, IDENTITY_MODEL
from tests.triton_wheel import pytriton_dir
from tritonfleet.models.control import fan_out

LOCAL_OVERRIDES = ("--model-repository=", "--http-port=", "--grpc-port=", "--metrics-port=", "--allow-gpu-metrics=")
INFER_BODY = {"inputs": [{"name": "INPUT0", "shape": [2], "datatype": "FP32", "data": [1, 2]}]}


def _request(url: str, method: str = "GET", headers: dict[str, str] | None = None, body: dict | None = None) -> int:
    data = json.dumps(body).encode() if body is not None else (b"{}" if method == "POST" else None)
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, ConnectionError):
        return 0


def _start_pod(objects: list[dict], keys: dict[str, dict[str, str]], work: Path) -> dict:
    """One pod on this machine: init container, then tritonserver through the rendered launcher (not yet ready)."""
    wheel = pytriton_dir() / "tritonserver"
    backends = work / "backends" / "python"
    shutil.copytree(wheel / "backends" / "python", backends, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(wheel / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}" / "triton_python_backend_stub", backends)
    (work / "models" / "identity" / "1").mkdir(parents=True)
    (work / "models" / "identity" / "config.pbtxt").write_text(IDENTITY_CONFIG)
    (work / "models" / "identity" / "1" / "model.py").write_text(IDENTITY_MODEL)
    key_file = write_pod_key(objects, work)
    triton = pod_containers(objects)["tritonserver"]
    env = container_env(triton, keys)
    args = [kubelet_expand(a, env) for a in triton["args"] if not a.startswith(LOCAL_OVERRIDES)]
    ports = {"http": free_port(), "grpc": free_port()}
    process = subprocess.Popen(
        [*triton["command"], *args, f"--model-repository={work / 'models'}", f"--backend-directory={work / 'backends'}",
         "--http-address=127.0.0.1", "--grpc-address=127.0.0.1", f"--http-port={ports['http']}",
         f"--grpc-port={ports['grpc']}", "--allow-metrics=false", "--exit-timeout-secs=2"],
        env={**os.environ, **env, "CONTROL_KEY_FILE": str(key_file),
             "LD_LIBRARY_PATH": str(wheel.parent.parent / "nvidia_pytriton.libs"),
             "PATH": f"{wheel / 'bin'}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"},
        stdout=(work / "tritonserver.log").open("w"), stderr=subprocess.STDOUT, cwd=work,
    )
    return {"work": work, "key_file": key_file, "ports": ports, "triton": process, "base": f"http://127.0.0.1:{ports['http']}"}


@pytest.fixture(scope="module")
def pods(tmp_path_factory):
    values = chart_values("aws", {"restrictInference": True}, modelControlMode="explicit")
    objects = render(values, name="triton-llm")
    keys = {values["restrictedApis"]["secretName"]: {ADMIN.secret_key: secrets.token_urlsafe(32), INFERENCE.secret_key: secrets.token_urlsafe(32)}}
    assert not any(key in json.dumps(objects) for key in keys[values["restrictedApis"]["secretName"]].values())
    started: list[dict] = []
    try:
        for name in ("a", "b"):  # both servers start at once: the test waits for their loads together
            started.append(_start_pod(objects, keys, tmp_path_factory.mktemp(f"pod-{name}")))
        for pod in started:
            for _ in range(240):  # bounded: 60 s
                if pod["triton"].poll() is not None or _request(f"{pod['base']}/v2/health/ready") == 200:
                    break
                time.sleep(0.25)
            assert pod["triton"].poll() is None, (pod["work"] / "tritonserver.log").read_text()[-3000:]
            port, pod["proxy"] = start_control_proxy(objects, keys, pod["key_file"], pod["ports"]["http"], pod["work"])
            pod["control"] = f"http://127.0.0.1:{port}"
        yield {"pods": started, "admin": next(iter(keys.values()))[ADMIN.secret_key], "keys": next(iter(keys.values()))}
    finally:
        for pod in started:
            for process in (pod.get("proxy"), pod["triton"]):
                if process is not None:
                    stop(process, grace_seconds=0)


def test_load_and_unload_through_the_proxy_with_the_admin_key(pods):
    replicas = {f"pod-{i}": pod["control"] for i, pod in enumerate(pods["pods"])}
    headers = {ADMIN.header: pods["admin"]}
    assert [r.detail for r in fan_out("unload", "identity", replicas, headers, deadline_seconds=30)] == ["unloaded"] * 2
    assert all(_request(f"{pod['base']}/v2/models/identity/ready") != 200 for pod in pods["pods"])
    assert [r.detail for r in fan_out("load", "identity", replicas, headers, deadline_seconds=30)] == ["ready"] * 2
    assert all(_request(f"{pod['base']}/v2/models/identity/ready") == 200 for pod in pods["pods"])


def test_the_proxy_refuses_a_missing_or_wrong_key_and_every_inference_route(pods):
    control = pods["pods"][0]["control"]
    unload = f"{control}/v2/repository/models/identity/unload"
    assert _request(unload, "POST") == 401
    assert _request(unload, "POST", {ADMIN.header: "not-the-key"}) == 403
    assert _request(unload, "POST", {ADMIN.header: pods["admin"][:-1]}) == 403
    admin = {ADMIN.header: pods["admin"], INFERENCE.header: pods["keys"][INFERENCE.secret_key]}
    assert _request(f"{control}/v2/models/identity/infer", "POST", admin, INFER_BODY) == 404
    assert _request(f"{control}/v2/models/identity/config", headers=admin) == 200  # model-config passes


def test_the_admin_key_is_not_in_tritons_proc_and_the_per_pod_key_opens_its_own_pod_only(pods):
    first, second = pods["pods"]
    pid = first["triton"].pid  # the launcher exec'd into tritonserver: same pid
    assert Path(f"/proc/{pid}/comm").read_text().strip() == "tritonserver"
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
    environ = Path(f"/proc/{pid}/environ").read_bytes().decode()
    assert pods["admin"] not in cmdline and pods["admin"] not in environ
    pod_key = first["key_file"].read_text()
    assert pod_key in cmdline, "what model code can still read: its own pod's key"
    assert pod_key != second["key_file"].read_text()
    index = "/v2/repository/index"
    assert _request(f"{first['base']}{index}", "POST", {ADMIN.header: pod_key}) == 200
    assert _request(f"{second['base']}{index}", "POST", {ADMIN.header: pod_key}) == 403


def test_triton_refuses_the_admin_key_itself(pods):
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    pod = pods["pods"][0]
    assert _request(f"{pod['base']}/v2/repository/models/identity/unload", "POST", {ADMIN.header: pods["admin"]}) == 403
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{pod['ports']['grpc']}")
    with pytest.raises(InferenceServerException, match=ADMIN.grpc_header):
        client.unload_model("identity", headers={ADMIN.grpc_header: pods["admin"]})
    # Inference does not pass through the proxy: Triton's own port, with the inference key.
    inference = {INFERENCE.header: pods["keys"][INFERENCE.secret_key]}
    assert _request(f"{pod['base']}/v2/models/identity/infer", "POST", inference, INFER_BODY) == 200
