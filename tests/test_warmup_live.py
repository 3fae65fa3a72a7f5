"""Warm before ready, on the real tritonserver: a model with `model_warmup` in its config.pbtxt has run its warm-up
requests by the time Triton first reports it ready, so the replica's readiness probe (the per-model ready check,
docs/serving.md) never sends it the first real request cold. A model without warm-up shows the difference."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.local_servers import stop
from tests.test_models_triton import SAMPLE, Triton, http, log_tail, wait_for
from tests.triton_wheel import pytriton_dir

WARMUP = """
model_warmup [
  {
    name: "zeros"
    batch_size: 1
    inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } }
  }
]
"""
# Records each execute() in a file beside the model (its first one is the warm-up when the config has one), slowly
# enough that a readiness report before the warm-up finished would be seen.
RECORDING_MODEL = '''
import os
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.marker = os.path.join(args["model_repository"], "executed")

    def execute(self, requests):
        time.sleep(2)
        with open(self.marker, "a") as handle:
            handle.write(f"{len(requests)}\\n")
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy().astype(np.float32))]
            )
            for r in requests
        ]
'''


def _model(repository: Path, name: str, warmup: bool) -> Path:
    folder = repository / name
    shutil.copytree(SAMPLE / "add_version", folder)
    config = (folder / "config.pbtxt").read_text().replace('name: "add_version"', f'name: "{name}"')
    (folder / "config.pbtxt").write_text(config + (WARMUP if warmup else ""))
    (folder / "1" / "model.py").write_text(RECORDING_MODEL)
    return folder


def test_a_model_with_warmup_is_ready_only_after_its_warmup_ran(tmp_path):
    server = Triton(pytriton_dir(), tmp_path / "triton")
    repository = tmp_path / "repository"
    warm, cold = _model(repository, "warm", True), _model(repository, "cold", False)
    process, url, _, log = server.start(str(repository))
    try:
        seen_ready = wait_for(lambda: http("GET", f"{url}/v2/models/warm/ready")[0] == 200, 60, process)
        warmed_when_ready = (warm / "executed").exists()
        assert seen_ready, log_tail(log)
        assert warmed_when_ready, "Triton reported the model ready before its warm-up request ran"
        assert wait_for(lambda: http("GET", f"{url}/v2/health/ready")[0] == 200, 30, process), log_tail(log)
        assert not (cold / "executed").exists()  # no warm-up: its first real request would pay the first execute
    finally:
        stop(process)
