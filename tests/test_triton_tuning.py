"""Triton's tuning flags reach the server from the stack (tritonDeployments[].tuning: --backend-config,
--cache-config, memory pools, rate limiter), and /dev/shm is sized from the replica's GPUs within its memory."""

from __future__ import annotations

import copy
import json

import pytest

from components.k8s.triton import tuning_args
from tests.conftest import engine_config
from tests.local_servers import stop
from tests.serving_helpers import by_kind, planned_values, render
from tests.test_models_triton import Triton, http, log_tail, wait_for
from tests.triton_wheel import pytriton_dir
from tritonfleet.core.catalog import load_catalog
from tritonfleet.core.config import ConfigError, TritonDeployment, load_stack_config
from tritonfleet.core.conventions import CONFIG_NAMESPACE
from tritonfleet.core.packing import shm_gi

TUNED = {
    "backendConfig": {"python": {"shm-default-byte-size": 16777216}, "tensorrt": {"coalesce-request-input": True}},
    "cacheConfig": {"local": {"size": 268435456}},
    "pinnedMemoryMib": 512,
    "cudaMemoryPoolMib": 128,
    "rateLimit": "execution_count",
    "rateLimitResources": {"R1": 4},
    "bufferManagerThreads": 8,
}
FLAGS = [
    "--backend-config=python,shm-default-byte-size=16777216",
    "--backend-config=tensorrt,coalesce-request-input=true",
    "--cache-config=local,size=268435456",
    "--pinned-memory-pool-byte-size=536870912",
    "--cuda-memory-pool-byte-size=0:134217728",
    "--cuda-memory-pool-byte-size=1:134217728",
    "--rate-limit=execution_count",
    "--rate-limit-resource=R1:4",
    "--buffer-manager-thread-count=8",
]


def _itype(name: str):
    return next(i for i in load_catalog().instance_types if i.name == name)


def test_tuning_becomes_tritons_flags():
    deployment = TritonDeployment.model_validate({"name": "llm", "pool": "p", "gpusPerReplica": 2, "tuning": TUNED})
    assert tuning_args(deployment) == FLAGS
    assert tuning_args(TritonDeployment(name="a", pool="p")) == []  # Triton's defaults unless asked


def test_tritonserver_starts_with_every_flag_we_write(tmp_path):
    """The real tritonserver (CPU build) parses the flags and starts with them."""
    server = Triton(pytriton_dir(), tmp_path)
    (tmp_path / "models").mkdir()
    caches = f"--cache-directory={pytriton_dir() / 'tritonserver' / 'caches'}"  # the image's default: /opt/tritonserver
    process, url, _, log = server.start(str(tmp_path / "models"), "--model-control-mode=explicit", caches, *FLAGS)
    try:
        live = wait_for(lambda: http("GET", f"{url}/v2/health/live")[0] == 200, 60, process)
    finally:
        stop(process)
    assert live, log_tail(log)


@pytest.mark.parametrize(
    ("instance", "gpus", "stated", "expected"),
    [
        ("g6e.xlarge", 1, None, 1),  # one GPU: the Python backend's 1 GiB
        ("p5en.48xlarge", 8, None, 32),  # several GPUs: NCCL's 32 GiB
        ("g6e.12xlarge", 2, None, 32),  # 2 of 4 L40S: 144 GiB of memory, a quarter is 36
        ("g6e.12xlarge", 2, 8, 8),  # stated
    ],
)
def test_shm_is_sized_from_the_replicas_gpus(instance, gpus, stated, expected):
    assert shm_gi(_itype(instance), gpus, stated) == expected


def test_an_llm_replica_on_one_gpu_gets_tensorrt_llms_2_gib():
    assert shm_gi(_itype("g6e.xlarge"), 1, llm=True) == 2 and shm_gi(_itype("p5en.48xlarge"), 2, llm=True) == 32


def _dev(**tuning):
    raw = dict(engine_config("dev"))
    key = f"{CONFIG_NAMESPACE}:tritonDeployments"
    deployments = json.loads(raw[key])
    deployments[0]["tuning"] = tuning
    raw[key] = json.dumps(deployments)
    return load_stack_config(raw, "dev")


def test_the_chart_runs_triton_with_the_flags_and_the_shm():
    deployment = _dev(**TUNED, shmGi=4).triton_deployments[0]
    values = copy.deepcopy(planned_values("dev", "triton-resnet"))
    values.update({"shmSize": f"{shm_gi(_itype('g6e.xlarge'), 1, deployment.tuning.shm_gi)}Gi",
                   "tuningArgs": tuning_args(deployment)})  # fmt: skip
    pod = by_kind(render(values))["Deployment"]["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert [a for a in args if a in FLAGS] == [f for f in FLAGS if "=1:" not in f]  # dev: 1 GPU per replica
    shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "4Gi"}


def test_the_planned_release_carries_the_shm_size():
    assert planned_values("dev", "triton-resnet")["shmSize"] == "1Gi"
    assert planned_values("prod", "triton-llm")["tuningArgs"] == []


@pytest.mark.parametrize(
    ("tuning", "key", "fragment"),
    [
        ({"shmGi": 30}, "tuning.shmGi", "at most 12: /dev/shm is memory-backed"),  # g6e.xlarge: 24 GiB per replica
        ({"rateLimitResources": {"R1": 2}}, "tuning.rateLimit", "execution_count when rateLimitResources"),
        ({"backendConfig": {"python,x": {"a": "b"}}}, "tuning.backendConfig", "pattern"),
        ({"cacheConfig": {"local": {"size": "1 GB"}}}, "tuning.cacheConfig", ""),
        ({"rateLimit": "on"}, "tuning.rateLimit", "off"),
    ],
)
def test_bad_tuning_names_the_key(tuning, key, fragment):
    with pytest.raises(ConfigError) as error:
        _dev(**tuning)
    message = str(error.value)
    assert f"tritonfleet:tritonDeployments[0].{key}" in message and fragment in message
