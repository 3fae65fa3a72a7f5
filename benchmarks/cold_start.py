"""How much does the node-local model cache save a replica's start? Ratios measured in this run.

A real tritonserver (the nvidia-pytriton wheel, CPU) starts on a model repository of a few hundred MB that
`models sync` published to a local moto S3 server (tests/counting_s3.py), three ways, interleaved round by round:
  no cache     Triton reads s3:// itself (it copies the repository to local disk, then loads it)
  cache, cold  the first replica on a node: tritonfleet.models.node_cache fills the node's cache, Triton reads it
  cache, warm  a later replica on that node: the cache verifies its entries against the bucket's checksums (no object
               bytes read), Triton reads it
Each time runs from the start of the replica's first process ("pod scheduled", once the image is there) to Triton's
/v2/health/ready. The medians are printed as ratios to "no cache", with the object bytes each way read from the bucket.
Run: venv/bin/python benchmarks/cold_start.py [--rounds N] [--mb MB]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from measure import ROOT, load

sys.path.insert(0, str(ROOT))
import boto3  # noqa: E402
from boto3.s3.transfer import TransferConfig  # noqa: E402

from tests.counting_s3 import counting_s3  # noqa: E402
from tests.local_servers import stop  # noqa: E402
from tests.test_models_triton import MODEL, SAMPLE, Triton, http  # noqa: E402
from tests.triton_wheel import pytriton_dir  # noqa: E402
from tritonfleet.clouds.aws.storage import S3Store  # noqa: E402
from tritonfleet.core.object_store import RepositoryUri  # noqa: E402
from tritonfleet.models.node_cache import prepare  # noqa: E402
from tritonfleet.models.sync import execute, plan_sync  # noqa: E402
from tritonfleet.models.validate import validate_repository  # noqa: E402

BUCKET = "tf-bench-models"
KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
READY_TIMEOUT_S = 300


def weights(path: Path, megabytes: int) -> None:
    """A weights file of `megabytes` MB of incompressible bytes, written in 8 MB blocks."""
    block = bytes(range(256)) * (8 * 2**20 // 256)
    with path.open("wb") as sink:
        for i in range(megabytes // 8):
            sink.write(block[i % 256 :] + block[: i % 256])


def time_to_ready(triton: Triton, repository: str, before=None) -> float:
    """Seconds from the replica's start (the cache step, if any, then tritonserver) to Triton's readiness."""
    start = time.perf_counter()
    if before is not None:
        before()
    process, url, _, log = triton.start(repository)
    try:
        deadline = start + READY_TIMEOUT_S
        while http("GET", f"{url}/v2/health/ready", timeout=1)[0] != 200:
            if process.poll() is not None or time.perf_counter() > deadline:
                raise SystemExit(f"tritonserver did not become ready:\n{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        return time.perf_counter() - start
    finally:
        stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mb", type=int, default=320, help="MB of weights in the model's version folder")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tf-cold-start-"))
    try:
        repo = scratch / "repo"
        shutil.copytree(SAMPLE, repo)
        weights(repo / MODEL / "1" / "weights.bin", args.mb)
        triton = Triton(pytriton_dir(), scratch / "triton")
        with counting_s3() as (endpoint, counts):
            client = boto3.client("s3", endpoint_url=endpoint, **KEYS)
            client.create_bucket(Bucket=BUCKET)
            uri = RepositoryUri.parse(f"s3://{BUCKET}/models")
            # One GET per object, as Triton's own copy makes: moto copies the whole object for each ranged GET, so
            # boto3's default parallel ranges would measure the emulator, not the cache.
            single = TransferConfig(multipart_threshold=2**40, use_threads=False)
            store = S3Store(uri, client=client, transfer_config=single)
            execute(plan_sync(validate_repository(repo), store), store)
            warm_cache = scratch / "warm-cache"
            prepare(store, uri, warm_cache, scratch / "warm-fill")

            runs: dict[str, list[float]] = {"no cache": [], "cache, cold": [], "cache, warm": []}
            read: dict[str, int] = {}
            for round_ in range(args.rounds):
                cold, view = scratch / f"cold-{round_}", scratch / f"view-{round_}"
                variants = {
                    "no cache": (f"s3://{endpoint}/{BUCKET}/models", None),
                    "cache, cold": (str(view / "cold"), partial(prepare, store, uri, cold, view / "cold")),
                    "cache, warm": (str(view / "warm"), partial(prepare, store, uri, warm_cache, view / "warm")),
                }
                for name, (repository, before) in variants.items():
                    counts.reset()
                    runs[name].append(time_to_ready(triton, repository, before))
                    read[name] = counts.bytes_sent
                shutil.rmtree(cold, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    base = statistics.median(runs["no cache"])
    print(f"pod start to ready, tritonserver 2.51 (CPU), {args.mb} MB of weights, median of {args.rounds} rounds; {load()}")
    for name, seconds in runs.items():
        median = statistics.median(seconds)
        print(f"  {name:12} {median:7.2f} s  ratio {median / base:5.2f}  bucket bytes read {read[name] / 1e6:8.1f} MB")


if __name__ == "__main__":
    main()
