"""One bad model must not take down every replica, proven on the real `tritonserver` (nvidia-pytriton wheel, CPU) with
the chart's rendered args, probes and model-state exporter, over a local S3 repository holding a good model and a
broken one (its model.py raises at import, as a corrupt artefact does).

- broken model optional (requiredModels names only the good one): the server keeps running, the rendered readiness
  and startup checks pass, the good model serves, and the exporter reports the broken one not ready;
- broken model required: the server still runs (no crash loop), but the rendered readiness check fails.

Test-only changes to the rendered pod are those of tests/test_triton_live.py (local S3 endpoint, free loopback ports,
the wheel's backend directory); the readiness check's fixed port 8000 is replaced by the test's HTTP port.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest

from tests.access_helpers import container_env
from tests.local_servers import free_port, local_s3_repository, stop
from tests.serving_helpers import by_kind, planned_values, render
from tests.test_triton_live import INFER_BODY, MODEL_CONFIG, MODEL_PY, POD_KEY, _get, _start_triton, _wait
from tritonfleet.core.conventions import triton_release_name

STACK, DEPLOYMENT = "dev", "resnet"
RELEASE = triton_release_name(DEPLOYMENT)
BROKEN_PY = 'raise RuntimeError("weights are corrupt")\n'


def _rendered(required: list[str]) -> dict[str, dict]:
    values = copy.deepcopy(planned_values(STACK, RELEASE))
    values["requiredModels"] = required
    return by_kind(render(values, name=RELEASE))


@pytest.fixture(scope="module")
def s3_repository():
    """A local S3 server with two models at the rendered repository's bucket and prefix: `identity` and `broken`."""
    spec = _rendered([])["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    uri = next(a for a in spec["args"] if a.startswith("--model-repository=")).split("=", 1)[1]
    models = {m: (MODEL_CONFIG.replace('"identity"', f'"{m}"'), code) for m, code in (("identity", MODEL_PY), ("broken", BROKEN_PY))}
    with local_s3_repository(uri, models) as triton_uri:
        yield uri, triton_uri


def _ready_check(probe: dict, http_port: int) -> subprocess.CompletedProcess[str]:
    """Run the rendered exec check as the kubelet does (bash from the image; here the machine's bash)."""
    command = [part.replace("/dev/tcp/127.0.0.1/8000", f"/dev/tcp/127.0.0.1/{http_port}") for part in probe["exec"]["command"]]
    return subprocess.run(command, capture_output=True, text=True, timeout=probe.get("timeoutSeconds", 5) + 5)


@pytest.fixture(scope="module")
def optional_broken(s3_repository, tmp_path_factory):
    objects = _rendered(["identity"])
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    ports, process = _start_triton(pod["containers"][0], s3_repository, tmp_path_factory.mktemp("optional"))
    try:
        yield objects, ports, process
    finally:
        stop(process, grace_seconds=0)


def test_rendered_args_keep_the_server_up_and_decide_readiness_by_required_models(optional_broken):
    objects, _, _ = optional_broken
    spec = objects["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert "--exit-on-error=false" in spec["args"] and "--strict-readiness=false" in spec["args"]
    assert spec["readinessProbe"]["exec"]["command"][-1] == "identity"
    assert spec["startupProbe"]["exec"] == spec["readinessProbe"]["exec"]


def test_an_optional_broken_model_leaves_the_replica_ready_and_serving(optional_broken):
    objects, ports, process = optional_broken
    spec = objects["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert process.poll() is None, "tritonserver exited on the broken model"
    for kind in ("startupProbe", "readinessProbe"):
        result = _ready_check(spec[kind], ports["http"])
        assert result.returncode == 0, (kind, result.stdout, result.stderr)
    status, body = _get(f"http://127.0.0.1:{ports['http']}/v2/models/identity/infer", INFER_BODY)
    assert status == 200, body
    assert _get(f"http://127.0.0.1:{ports['http']}/v2/models/broken/ready")[0] != 200


def test_the_model_state_exporter_reports_the_broken_model(optional_broken, tmp_path):
    objects, ports, _ = optional_broken
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    sidecar = next(c for c in pod["containers"] if c["name"] == "model-state")
    script = objects["ConfigMap"]["data"]["model_state.py"]
    port = free_port()
    secrets: dict[str, dict[str, str]] = {}
    for entry in pod["containers"][0].get("env", []) + sidecar.get("env", []):
        if "valueFrom" in entry:
            ref = entry["valueFrom"]["secretKeyRef"]
            secrets.setdefault(ref["name"], {})[ref["key"]] = f"test-{ref['key']}"  # the same stand-in as the server's
    env = {
        **os.environ,
        **container_env(sidecar, secrets),
        "MODEL_STATE_ADDRESS": "127.0.0.1",
        "MODEL_STATE_PORT": str(port),
        "TRITON_URL": f"http://127.0.0.1:{ports['http']}",
    }
    if "MODEL_STATE_KEY_FILE" in env:  # the per-pod key, as _start_triton's server was given it
        (tmp_path / "pod-key").write_text(POD_KEY)
        env["MODEL_STATE_KEY_FILE"] = str(tmp_path / "pod-key")
    exporter = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        assert _wait(lambda: _get(f"http://127.0.0.1:{port}/metrics")[0] == 200, 60)
        broken = 'tritonfleet_triton_model_ready{model="broken",version="1",state="UNAVAILABLE"} 0'
        # Triton may still be loading (the broken model is LOADING, then UNAVAILABLE): scrape until it has settled. The
        # server is ready before that (strict readiness off), and on a loaded machine the failing load took over 30 s.
        # Every check below reads that one scrape: a later one may catch the model LOADING again.
        scrapes: list[str] = []

        def settled() -> bool:
            scrapes.append(_get(f"http://127.0.0.1:{port}/metrics")[1].decode())
            return broken in scrapes[-1]

        assert _wait(settled, 240), f"exporter alive: {exporter.poll() is None}; last scrape:\n{scrapes[-1]}"
        text = scrapes[-1]
        assert 'tritonfleet_triton_model_ready{model="identity",version="1",state="READY"} 1' in text, text
        assert "tritonfleet_triton_model_state_up 1" in text, text
    finally:
        stop(exporter, grace_seconds=0)


def test_a_required_broken_model_keeps_the_replica_unready_without_a_crash_loop(s3_repository, tmp_path):
    objects = _rendered(["identity", "broken"])
    spec = objects["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    ports, process = _start_triton(spec, s3_repository, tmp_path)
    try:
        result = _ready_check(spec["readinessProbe"], ports["http"])
        assert result.returncode == 1 and "required model broken is not ready" in result.stdout
        assert process.poll() is None, "tritonserver exited: the pod would crash-loop instead of staying unready"
    finally:
        stop(process, grace_seconds=0)
