"""The chart's rendered Triton container, run for real: the `tritonserver` binary of the nvidia-pytriton wheel (CPU)
started with the rendered args (repository in a local S3 server, ports remapped to free loopback ports), the rendered
probe paths answered as the probes expect, the prometheus-adapter rules' PromQL checked by promtool and evaluated by a
real Prometheus scraping that server, and SIGTERM draining within the rendered grace period.

Test-only changes to the rendered command, and why: the repository URI gains the local endpoint
(s3://http://127.0.0.1:PORT/<same bucket and prefix>), ports 8000-8002 become free ports (other tests may run in
parallel), and --backend-directory points at the wheel's Python backend (the NGC image has it at the default path).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from components.k8s.autoscaling import INFERENCES_PER_SECOND, QUEUE_MS_PER_REQUEST, triton_adapter_rules
from tests.access_helpers import container_env, kubelet_expand
from tests.local_servers import free_port, local_s3_repository, stop
from tests.serving_helpers import by_kind, planned_values, render
from tests.triton_wheel import pytriton_dir
from tritonfleet.core.conventions import triton_release_name

STACK, DEPLOYMENT = "dev", "resnet"
RELEASE = triton_release_name(DEPLOYMENT)
POD = f"{RELEASE}-0"
NAMESPACE = "triton"
MODEL_CONFIG = """name: "identity"
backend: "python"
max_batch_size: 8
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""
MODEL_PY = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
"""
INFER_BODY = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}).encode()


# The test's additions to the rendered args: every endpoint listens on loopback only.
POD_KEY = "test-pod-key"  # the per-pod key the admin group is restricted with, where model control is restricted
LOOPBACK_ONLY = ("--http-address=127.0.0.1", "--grpc-address=127.0.0.1", "--metrics-address=127.0.0.1")


def _get(url: str, data: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError:
        return 0, b""


def _wait(predicate, attempts: int, pause: float = 0.5) -> bool:
    for _ in range(attempts):
        if predicate():
            return True
        time.sleep(pause)
    return False


@pytest.fixture(scope="module")
def container():
    """The Triton container of the dev stack's planned release, as the chart renders it."""
    pod = by_kind(render(planned_values(STACK, RELEASE), name=RELEASE))["Deployment"]["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


@pytest.fixture(scope="module")
def s3_repository(container):
    """A local S3 server holding a one-model repository at the bucket and prefix the rendered args name."""
    _, spec = container
    uri = next(a for a in spec["args"] if a.startswith("--model-repository=")).split("=", 1)[1]
    with local_s3_repository(uri, {"identity": (MODEL_CONFIG, MODEL_PY)}) as triton_uri:
        yield uri, triton_uri


def _start_triton(
    spec: dict, s3_repository: tuple[str, str], work: Path, launcher: tuple[str, ...] = ()
) -> tuple[dict[str, int], subprocess.Popen]:
    """Start tritonserver with the rendered args (see the module docstring for the test-only changes); wait until ready.

    `launcher`: a command that runs the server for the test (e.g. inside the rendered securityContext)."""
    root = pytriton_dir() / "tritonserver"
    rendered_uri, local_uri = s3_repository
    backend = work / "backends" / "python"
    backend.mkdir(parents=True)
    for source in (root / "backends" / "python").glob("*.*"):
        shutil.copy(source, backend)
    stub = root / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}" / "triton_python_backend_stub"
    shutil.copy(stub, backend)

    ports = {p["name"]: (p["containerPort"], free_port()) for p in spec["ports"]}
    flags = {"http": "--http-port", "grpc": "--grpc-port", "metrics": "--metrics-port"}
    args = []
    for arg in spec["args"]:
        if arg == f"--model-repository={rendered_uri}":
            arg = f"--model-repository={local_uri}"
        for name, flag in flags.items():
            if arg == f"{flag}={ports[name][0]}":
                arg = f"{flag}={ports[name][1]}"
        args.append(arg)
    assert sum(a != b for a, b in zip(args, spec["args"], strict=True)) == 4, "repository and the three ports"
    # Restricted-API keys: a stand-in Secret, and $(VAR) in the args expanded from the env as the kubelet does.
    secrets: dict[str, dict[str, str]] = {}
    for entry in spec.get("env", []):
        if "valueFrom" in entry:
            ref = entry["valueFrom"]["secretKeyRef"]
            secrets.setdefault(ref["name"], {})[ref["key"]] = f"test-{ref['key']}"
    container = container_env(spec, secrets)
    args = [kubelet_expand(a, container) for a in args]
    if "CONTROL_KEY_FILE" in container:  # what the `pod-key` init container writes (tests/test_control_proxy_live.py)
        key_file = work / "pod-key"
        key_file.write_text(POD_KEY)
        container["CONTROL_KEY_FILE"] = str(key_file)
    env = {
        **os.environ,
        **container,
        "AWS_ACCESS_KEY_ID": "testing",  # the local S3 server's; in the cluster IRSA provides credentials
        "AWS_SECRET_ACCESS_KEY": "testing",
        "LD_LIBRARY_PATH": str(root.parent.parent / "nvidia_pytriton.libs"),
        "PATH": f"{root / 'bin'}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    log_path = work / "tritonserver.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                *launcher,
                *spec["command"],  # `tritonserver`, through the key-dropping launcher where keys are set (on PATH)
                *args,
                f"--backend-directory={work / 'backends'}",
                *LOOPBACK_ONLY,
            ],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work,
        )
    http = ports["http"][1]
    ready = _wait(lambda: process.poll() is not None or _get(f"http://127.0.0.1:{http}/v2/health/ready")[0] == 200, 240)
    if not ready or process.poll() is not None:
        stop(process, grace_seconds=0)
        pytest.fail("tritonserver did not become ready:\n" + log_path.read_text()[-3000:])
    return {name: local for name, (_, local) in ports.items()}, process


@pytest.fixture(scope="module")
def served(container, s3_repository, tmp_path_factory):
    """tritonserver started with the rendered args; yields the container-port-name -> local-port map and the process."""
    pod, spec = container
    ports, process = _start_triton(spec, s3_repository, tmp_path_factory.mktemp("triton"))
    try:
        yield ports, process, pod
    finally:
        stop(process, grace_seconds=0)


def _probe_port(probe: dict, ports: dict[str, int]) -> int:
    return ports[probe["httpGet"]["port"]]


def test_rendered_probes_answer(served, container):
    ports, _, _ = served
    _, spec = container
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = spec[kind]
        status, _ = _get(f"http://127.0.0.1:{_probe_port(probe, ports)}{probe['httpGet']['path']}")
        assert status == 200, kind


def test_rendered_ports_serve(served):
    ports, _, _ = served
    status, body = _get(f"http://127.0.0.1:{ports['http']}/v2/models/identity/infer", INFER_BODY)
    assert status == 200 and json.loads(body)["outputs"][0]["data"] == [1.0, 2.0, 3.0, 4.0]
    import tritonclient.grpc

    assert tritonclient.grpc.InferenceServerClient(f"127.0.0.1:{ports['grpc']}").is_server_ready()
    status, metrics = _get(f"http://127.0.0.1:{ports['metrics']}/metrics")
    assert status == 200 and b'nv_inference_queue_duration_us{model="identity"' in metrics


def _expand(rule: dict, matchers: str) -> str:
    """The rule's metricsQuery as prometheus-adapter templates it (the series is the name the rule matched)."""
    series = rule["name"]["matches"].strip("^$")
    query = rule["metricsQuery"].replace("<<.Series>>", series)
    return query.replace("<<.LabelMatchers>>", matchers).replace("<<.GroupBy>>", "pod")


def _queries() -> dict[str, str]:
    """Each request-based adapter rule's metricsQuery as the adapter runs it for our pod, for all models and for one
    model (the LLM rules read backend metrics this model does not export: tests/test_autoscaling_llm_live.py)."""
    pod = f'namespace="{NAMESPACE}",pod="{POD}"'
    queries = {}
    for rule in triton_adapter_rules():
        if rule["name"]["as"] not in (INFERENCES_PER_SECOND, QUEUE_MS_PER_REQUEST):
            continue
        queries[rule["name"]["as"]] = _expand(rule, pod)
        queries[rule["name"]["as"] + ":identity"] = _expand(rule, pod + ',model="identity"')
    return queries


def test_adapter_promql_passes_promtool(tmp_path):
    promtool = shutil.which("promtool") or pytest.skip("promtool is not installed (Debian package prometheus)")
    records = [{"record": f"check:{name.replace(':', '_')}", "expr": expr} for name, expr in _queries().items()]
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "adapter", "rules": records}]}))
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(records)} rules found" in result.stdout  # the request-based rules, for all models and for one
    for rule in triton_adapter_rules():  # counters read as rates (the LLM rules read gauges and histograms)
        if rule["name"]["as"] in (INFERENCES_PER_SECOND, QUEUE_MS_PER_REQUEST):
            assert "_total" not in rule["metricsQuery"] and "rate(" in rule["metricsQuery"]


def test_hpa_reads_the_metric_the_adapter_serves(container):
    names = {rule["name"]["as"] for rule in triton_adapter_rules()}
    hpa = by_kind(render(planned_values(STACK, RELEASE), name=RELEASE))["HorizontalPodAutoscaler"]
    served = [metric["pods"]["metric"]["name"] for metric in hpa["spec"]["metrics"]]
    assert served[0] == INFERENCES_PER_SECOND and set(served) <= names


def test_adapter_rules_evaluate_on_real_triton_metrics(served, tmp_path):
    prometheus = shutil.which("prometheus") or pytest.skip("prometheus is not installed (Debian package prometheus)")
    ports, _, _ = served
    web = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [
            {
                "job_name": "triton",
                # The labels the ServiceMonitor's endpoint discovery gives the series in the cluster.
                "static_configs": [
                    {"targets": [f"127.0.0.1:{ports['metrics']}"], "labels": {"namespace": NAMESPACE, "pod": POD}}
                ],
            }
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = (tmp_path / "prometheus.log").open("w")
    process = subprocess.Popen(
        [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{web}"],
        stdout=log, stderr=subprocess.STDOUT,
    )

    def query(expr: str) -> list:
        status, body = _get(f"http://127.0.0.1:{web}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        return json.loads(body)["data"]["result"] if status == 200 else []

    try:
        assert _wait(lambda: query('up{job="triton"} == 1') != [], 120), "Prometheus never scraped Triton"
        queries = _queries()
        requests_per_pod = f'sum(rate(nv_inference_request_success{{namespace="{NAMESPACE}",pod="{POD}"}}[1m])) by (pod)'

        def traffic_seen() -> bool:
            for _ in range(5):
                _get(f"http://127.0.0.1:{ports['http']}/v2/models/identity/infer", INFER_BODY)
            found = query(requests_per_pod)
            return bool(found) and float(found[0]["value"][1]) > 0 and all(query(q) for q in queries.values())

        assert _wait(traffic_seen, 120), "the adapter queries returned no data"
        for name, expr in queries.items():
            result = query(expr)
            assert [r["metric"] for r in result] == [{"pod": POD}], name  # one series per pod, as the HPA expects
            value = float(result[0]["value"][1])
            assert math.isfinite(value) and value >= 0, (name, value)
    finally:
        stop(process, grace_seconds=0)
        log.close()


def test_sigterm_drains_within_the_rendered_grace_period(container, s3_repository, tmp_path):
    """SIGTERM (what the kubelet sends after preStop) ends Triton before the kubelet's SIGKILL would. Its own server,
    so the other tests keep theirs whatever order they run in."""
    pod, spec = container
    ports, process = _start_triton(spec, s3_repository, tmp_path)
    try:
        assert _get(f"http://127.0.0.1:{ports['http']}/v2/models/identity/infer", INFER_BODY)[0] == 200
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=pod["terminationGracePeriodSeconds"])
        except subprocess.TimeoutExpired:
            pytest.fail("tritonserver outlived terminationGracePeriodSeconds after SIGTERM")
        assert process.returncode == 0
    finally:
        stop(process, grace_seconds=0)
