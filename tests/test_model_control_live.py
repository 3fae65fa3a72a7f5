"""Explicit model control reaches every replica: two real `tritonserver`s started with prod's `llm` rendered args
(explicit mode, restricted model-control API, the declared --load-model set), each with its rendered control proxy,
then `tritonfleet models load/unload` fanning out to both proxies and reporting per replica. A request to one replica (what a load through the Service does) is
shown to leave the other behind first, so the test can tell the difference."""

from __future__ import annotations

import copy
import urllib.request

import pytest

from tests.access_helpers import pod_containers, start_control_proxy
from tests.conftest import one_line, run_cli
from tests.local_servers import local_s3_repository, stop
from tests.serving_helpers import by_kind, planned_values, render
from tests.test_triton_live import MODEL_CONFIG, MODEL_PY, _get, _start_triton
from tritonfleet.core.conventions import triton_release_name

STACK, DEPLOYMENT = "prod", "llm"
RELEASE = triton_release_name(DEPLOYMENT)
ADMIN_KEY = "test-admin-key"  # _start_triton's stand-in for the Secret's admin-key


@pytest.fixture(scope="module")
def rendered():
    values = copy.deepcopy(planned_values(STACK, RELEASE))
    values["loadModels"] = ["identity"]  # the declared set (config: tritonDeployments[].loadModels)
    return render(values, name=RELEASE)


@pytest.fixture(scope="module")
def container(rendered):
    return by_kind(rendered)["Deployment"]["spec"]["template"]["spec"]["containers"][0]


@pytest.fixture(scope="module")
def s3_repository(container):
    uri = next(a for a in container["args"] if a.startswith("--model-repository=")).split("=", 1)[1]
    models = {m: (MODEL_CONFIG.replace('"identity"', f'"{m}"'), MODEL_PY) for m in ("identity", "other")}
    with local_s3_repository(uri, models) as triton_uri:
        yield uri, triton_uri


@pytest.fixture(scope="module")
def pods(rendered, container, s3_repository, tmp_path_factory):
    """Each replica's Triton URL and its control proxy's URL (what `models load` reaches through port-forward)."""
    started: dict[str, tuple[str, str]] = {}
    processes = []
    ref = next(e for e in pod_containers(rendered)["control-proxy"]["env"] if "valueFrom" in e)["valueFrom"]["secretKeyRef"]
    secrets = {ref["name"]: {ref["key"]: ADMIN_KEY}}  # the stand-in Secret: its admin key reaches the proxy only
    try:
        for name in (f"{RELEASE}-a", f"{RELEASE}-b"):
            work = tmp_path_factory.mktemp(name)
            ports, process = _start_triton(container, s3_repository, work)
            processes.append(process)
            port, proxy = start_control_proxy(rendered, secrets, work / "pod-key", ports["http"], work)
            processes.append(proxy)
            started[name] = (f"http://127.0.0.1:{ports['http']}", f"http://127.0.0.1:{port}")
        yield started
    finally:
        for process in processes:
            stop(process, grace_seconds=0)


@pytest.fixture(scope="module")
def replicas(pods):
    return {name: control for name, (_, control) in pods.items()}


@pytest.fixture(scope="module")
def tritons(pods):
    return {name: triton for name, (triton, _) in pods.items()}


def _ready(url: str, model: str) -> bool:
    return _get(f"{url}/v2/models/{model}/ready")[0] == 200


@pytest.fixture
def admin_key(monkeypatch):
    monkeypatch.setenv("TRITON_ADMIN_KEY", ADMIN_KEY)  # run_cli passes the environment on


def _cli(action: str, model: str, replicas: dict[str, str]):
    args = ["models", action, model, "--stack", STACK, "--deployment", DEPLOYMENT]
    for name, url in replicas.items():
        args += ["--replica", f"{name}={url}"]
    return run_cli(*args)


def test_the_declared_set_is_loaded_by_every_replica(container, tritons):
    assert "--model-control-mode=explicit" in container["args"] and "--load-model=identity" in container["args"]
    assert all(_ready(url, "identity") and not _ready(url, "other") for url in tritons.values())


def test_one_request_changes_one_replica_and_the_fan_out_changes_all(replicas, tritons, admin_key):
    first, second = tritons.values()
    # What a load to one replica does: that replica alone changes.
    status, _ = _get(f"{first}/v2/repository/models/other/load", b"{}")
    assert status != 200, "the model-control API must need a key"

    request = urllib.request.Request(f"{next(iter(replicas.values()))}/v2/repository/models/other/load", data=b"{}", method="POST")
    request.add_header("admin-key", ADMIN_KEY)
    assert urllib.request.urlopen(request, timeout=60).status == 200
    assert _ready(first, "other") and not _ready(second, "other"), "the replicas now differ"

    result = _cli("load", "other", replicas)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in replicas:
        assert f"{name}: ok ready" in result.stdout
    assert all(_ready(url, "other") for url in tritons.values())

    result = _cli("unload", "other", replicas)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not any(_ready(url, "other") for url in tritons.values())


def test_a_failed_load_is_reported_per_replica_and_exits_1(replicas, admin_key):
    result = _cli("load", "missing", replicas)
    assert result.returncode == 1
    for name in replicas:
        assert f"{name}: FAILED load refused (HTTP 500): failed to load 'missing'" in one_line(result.stdout)
    assert "2 of 2 replica(s) did not load missing" in one_line(result.stderr)


def test_without_the_admin_key_nothing_is_sent(replicas, monkeypatch):
    monkeypatch.delenv("TRITON_ADMIN_KEY", raising=False)
    result = _cli("load", "other", replicas)
    assert result.returncode == 1 and "set TRITON_ADMIN_KEY" in one_line(result.stderr)


def test_a_deployment_without_explicit_mode_is_refused_with_the_fix():
    result = run_cli("models", "load", "x", "--stack", "dev", "--deployment", "resnet", "--replica", "a=http://127.0.0.1:1")
    assert result.returncode == 1
    assert "pulumi config set --path 'tritonfleet:tritonDeployments[0].modelControlMode' explicit --stack dev" in one_line(result.stderr)


def test_running_pods_are_found_in_kubectl_output():
    from tritonfleet.models.control import release_pods

    pods = {
        "items": [
            {"metadata": {"name": "triton-llm-b"}, "status": {"phase": "Running"}},
            {"metadata": {"name": "triton-llm-a"}, "status": {"phase": "Running"}},
            {"metadata": {"name": "triton-llm-c"}, "status": {"phase": "Pending"}},
        ]
    }
    import json

    assert release_pods(json.dumps(pods)) == ["triton-llm-a", "triton-llm-b"]
