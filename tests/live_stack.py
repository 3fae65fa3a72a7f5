"""The live tests' scaffolding, in one place: real tritonservers (the nvidia-pytriton wheel, CPU, Python-backend
models) and a real Prometheus on loopback scraping them as Prometheus Operator's ServiceMonitor relabelling does.

Everything binds 127.0.0.1 on free ports (tests/local_servers.py); every wait is bounded by a deadline; what is
started here is stopped by its pid (`stop_all`, or the `prometheus` context manager).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.local_servers import free_port, stop
from tests.monitoring_support import tool, write_rules
from tests.triton_wheel import pytriton_dir

STARTUP_SECONDS = 120  # for tritonservers to load their models, and for Prometheus to see them
SCRAPE = {"scrape_interval": "1s", "evaluation_interval": "1s"}
# The latency metrics the chart turns on (charts/triton-inference-server/templates/deployment.yaml).
CHART_METRICS_FLAGS = ("--metrics-config=summary_latencies=true", "--metrics-config=histogram_latencies=true")


# ---- tritonserver ----


@dataclass(frozen=True)
class Triton:
    """A tritonserver started by start_triton: its process, ports and log."""

    process: subprocess.Popen
    http_port: int
    metrics_port: int
    log: Path
    grpc_port: int | None = None

    @property
    def http(self) -> str:
        return f"127.0.0.1:{self.http_port}"

    def fail_if_exited(self) -> None:
        """It must be this test's own server, alive: a readiness answer alone could come from another's."""
        if self.process.poll() is not None:
            pytest.fail(f"tritonserver {self.log.name} exited ({self.process.returncode}):\n{self.log_tail()}")

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def python_backend(tmp: Path) -> Path:
    """tmp/backends (a --backend-directory): the wheel's Python backend with the stub for this Python, made
    executable; created once per folder."""
    backends = tmp / "backends"
    if (backends / "python").is_dir():
        return backends
    wheel = pytriton_dir()
    python = backends / "python"
    python.mkdir(parents=True)
    for item in (wheel / "tritonserver" / "backends" / "python").iterdir():
        if item.is_file():
            (python / item.name).write_bytes(item.read_bytes())
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stub = wheel / "tritonserver" / "python_backend_stubs" / version / "triton_python_backend_stub"
    (python / stub.name).write_bytes(stub.read_bytes())
    (python / stub.name).chmod(0o755)
    return backends


def start_triton(
    tmp: Path, name: str, models: dict[str, tuple[str, str]], *, http_port: int | None = None,
    metrics_port: int | None = None, grpc_port: int | None = None, version: int = 1, args: Iterable[str] = (),
) -> Triton:
    """A tritonserver serving `models` (name -> (config.pbtxt, model.py of `version`)) from tmp/models-<name>, its log
    in tmp/triton-<name>.log; HTTP and metrics on the given (or free) ports, gRPC off unless a port is given. Returns
    at once: wait_until_ready waits for it."""
    wheel = pytriton_dir()
    backends = python_backend(tmp)
    repository = tmp / f"models-{name}"
    for model, (config, code) in models.items():
        (repository / model / str(version)).mkdir(parents=True)
        (repository / model / "config.pbtxt").write_text(config)
        (repository / model / str(version) / "model.py").write_text(code)
    http_port, metrics_port = http_port or free_port(), metrics_port or free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",  # the stub finds numpy through python3
        "LD_LIBRARY_PATH": str(wheel.parent / "nvidia_pytriton.libs"),
    }
    command = [
        str(wheel / "tritonserver" / "bin" / "tritonserver"),
        f"--model-repository={repository}",
        f"--backend-directory={backends}",
        "--http-address=127.0.0.1",
        f"--http-port={http_port}",
        *(["--grpc-address=127.0.0.1", f"--grpc-port={grpc_port}"] if grpc_port else ["--allow-grpc=false"]),
        "--metrics-address=127.0.0.1",
        f"--metrics-port={metrics_port}",
        *args,
    ]
    log = tmp / f"triton-{name}.log"
    with log.open("w") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    return Triton(process, http_port, metrics_port, log, grpc_port)


def wait_until_ready(servers: list[Triton], deadline: float, model: str | None = None) -> None:
    """Until every server answers ready (its `model`, or the server as a whole), polling them all at once; fails with
    the log of one that exits, or when the deadline (time.monotonic()) passes first."""
    path = f"/v2/models/{model}/ready" if model else "/v2/health/ready"
    waiting = list(servers)
    while waiting and time.monotonic() < deadline:
        for server in list(waiting):
            server.fail_if_exited()
            try:
                if requests.get(f"http://{server.http}{path}", timeout=2).status_code == 200:
                    waiting.remove(server)
            except requests.RequestException:
                pass
        if waiting:
            time.sleep(0.25)
    if waiting:
        pytest.fail(f"{len(waiting)} of {len(servers)} tritonservers were not ready by the deadline:\n" + waiting[0].log_tail())


def warm_up(servers: list[Triton], model: str, body: dict[str, Any], times: int = 5) -> None:
    """A few inferences on each server, as a pod's warm-up before it turns ready: a Python-backend stub's first
    requests are slow, and on a loaded host one queued the requests behind it past a queue-time guard."""
    for server in servers:
        for _ in range(times):
            requests.post(f"http://{server.http}/v2/models/{model}/infer", json=body, timeout=30).raise_for_status()


def fail_if_any_exited(servers: list[Triton]) -> None:
    for server in servers:
        server.fail_if_exited()


def stop_all(processes: Iterable[subprocess.Popen]) -> None:
    """SIGTERM to all at once (their shutdowns overlap), then each awaited by its pid and killed if it lingers."""
    processes = list(processes)
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        stop(process)


# ---- Prometheus ----


def service_monitor_job(
    job: str, targets: list[tuple[int, dict[str, str]]], extra_labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """A scrape job as Prometheus Operator builds one for a ServiceMonitor endpoint: each target (a metrics port and
    its pod's metadata, e.g. {"namespace": ..., "pod": ..., "pod_label_tritonfleet_io_track": ...}) carries
    __meta_kubernetes_<key> labels; namespace and pod (and `extra_labels`: meta key -> series label) come from them."""
    relabel = {"namespace": "namespace", "pod_name": "pod", **(extra_labels or {})}
    return {
        "job_name": job,
        "static_configs": [
            {"targets": [f"127.0.0.1:{port}"], "labels": {f"__meta_kubernetes_{key}": value for key, value in meta.items()}}
            for port, meta in targets
        ],
        "relabel_configs": [
            {"source_labels": [f"__meta_kubernetes_{key}"], "target_label": label} for key, label in relabel.items()
        ],
    }


def triton_job(triton: Triton, pod: dict[str, str]) -> dict[str, Any]:
    """A job scraping one tritonserver with the labels (namespace, pod) the ServiceMonitor's relabelling gives it."""
    return {"job_name": "triton", "static_configs": [{"targets": [f"127.0.0.1:{triton.metrics_port}"], "labels": pod}]}


@contextmanager
def prometheus(tmp: Path, jobs: list[dict[str, Any]], rule_groups: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """A real Prometheus on loopback scraping `jobs` every second (with `rule_groups` loaded), its data in tmp/tsdb;
    yields its URL once it answers ready, and stops it by its pid on exit."""
    binary = tool("prometheus")
    config: dict[str, Any] = {"global": SCRAPE, "scrape_configs": jobs}
    if rule_groups is not None:
        config["rule_files"] = [str(write_rules(rule_groups, tmp))]
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    with ExitStack() as stack:
        log = stack.enter_context((tmp / "prometheus.log").open("w"))
        process = subprocess.Popen(
            [binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        stack.callback(stop, process)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _answers(f"{url}/-/ready"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("Prometheus did not become ready:\n" + (tmp / "prometheus.log").read_text()[-3000:])
            time.sleep(0.2)
        yield url


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def query(url: str, expr: str, at: float | None = None) -> list[dict[str, Any]]:
    """An instant query through Prometheus' HTTP API: the result vector."""
    params = {"query": expr, **({"time": f"{at:.3f}"} if at else {})}
    response = requests.get(f"{url}/api/v1/query", params=params, timeout=5)
    response.raise_for_status()
    return response.json()["data"]["result"]


def query_by_pod(url: str, expr: str, at: float | None = None) -> dict[str, float]:
    """An instant query's values (at `at`, else now) by their pod label."""
    return {r["metric"].get("pod", ""): float(r["value"][1]) for r in query(url, expr, at)}


def wait_for_pods(url: str, expr: str, pods: list[str], deadline: float, servers: list[Triton]) -> None:
    """Until `expr` has a series for every pod (servers are checked alive meanwhile); fails at the deadline."""
    seen: dict[str, float] = {}
    while time.monotonic() < deadline:
        fail_if_any_exited(servers)
        try:
            seen = query_by_pod(url, expr)
        except requests.RequestException:
            seen = {}
        if set(pods) <= set(seen):
            return
        time.sleep(0.5)
    pytest.fail(f"Prometheus saw {sorted(seen)} of {pods} for {expr} by the deadline")


# ---- a fleet: replicas of one Deployment, scraped as one ServiceMonitor's pods ----


@dataclass(frozen=True)
class Fleet:
    servers: list[Triton]
    pods: list[str]  # the pod label each server's series carry, in the servers' order
    prometheus: str  # Prometheus' URL

    @property
    def http_ports(self) -> list[int]:
        return [server.http_port for server in self.servers]


@contextmanager
def fleet(
    tmp: Path, count: int, models: dict[str, tuple[str, str]], namespace: str, app: str, args: Iterable[str] = ()
) -> Iterator[Fleet]:
    """`count` tritonservers serving `models` (pods <app>-0, <app>-1, … of `namespace`) and a Prometheus scraping them
    with the ServiceMonitor's relabelling, all started at once; yields once every server's models are ready and
    Prometheus answers. Everything is stopped by its pid on exit."""
    servers = [start_triton(tmp, str(i), models, args=["--http-thread-count=8", *args]) for i in range(count)]
    pods = [f"{app}-{i}" for i in range(count)]
    targets = [(s.metrics_port, {"namespace": namespace, "pod_name": pod}) for s, pod in zip(servers, pods, strict=True)]
    with ExitStack() as stack:
        stack.callback(stop_all, [server.process for server in servers])
        url = stack.enter_context(prometheus(tmp, [service_monitor_job(f"serviceMonitor/{namespace}/{app}/0", targets)]))
        deadline = time.monotonic() + STARTUP_SECONDS
        for model in models:
            wait_until_ready(servers, deadline, model)
        yield Fleet(servers, pods, url)
