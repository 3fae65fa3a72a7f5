"""The node-local model cache against a moto S3 server that counts requests, and a real tritonserver serving from it:
a second replica on a node reads no object bytes, a new version is fetched once, a partial or corrupted entry is
never served, a full disk fails with the fix."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import boto3
import pytest

from tests.counting_s3 import counting_s3
from tests.local_servers import stop
from tests.test_models_triton import MODEL, SAMPLE, Triton, answer, http, log_tail, wait_for
from tests.triton_wheel import pytriton_dir
from tritonfleet.clouds.aws.storage import S3Store
from tritonfleet.core.object_store import RepositoryUri
from tritonfleet.models import node_cache
from tritonfleet.models.node_cache import CacheError, prepare
from tritonfleet.models.sync import execute, plan_sync
from tritonfleet.models.validate import validate_repository

BUCKET = "tf-cache-models"
KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}


@pytest.fixture
def bucket(tmp_path):
    """(store, counts, repo): the sample repository published by `models sync` to a counting S3 server."""
    with counting_s3() as (endpoint, counts):
        client = boto3.client("s3", endpoint_url=endpoint, **KEYS)
        client.create_bucket(Bucket=BUCKET)
        uri = RepositoryUri.parse(f"s3://{BUCKET}/models")
        store = S3Store(uri, client=client)
        repo = tmp_path / "repo"
        shutil.copytree(SAMPLE, repo)
        publish(repo, store)
        counts.reset()
        yield store, counts, repo, endpoint


def publish(repo: Path, store: S3Store) -> None:
    report = validate_repository(repo)
    assert report.ok
    execute(plan_sync(report, store), store)


def replica(store, cache: Path, tmp_path: Path, name: str):
    return prepare(store, store.uri, cache, tmp_path / name)


def test_the_second_replica_on_a_node_reads_no_object_bytes(bucket, tmp_path):
    store, counts, _, _ = bucket
    cache = tmp_path / "cache"
    first = replica(store, cache, tmp_path, "view-a")
    assert [e.split("@")[0] for e in first.fetched] == [f"{MODEL}/root", f"{MODEL}/1"]
    assert counts.bytes_sent > 0 and len(counts.object_gets) == 2  # config.pbtxt and 1/model.py, once each
    counts.reset()
    second = replica(store, cache, tmp_path, "view-b")
    assert second.fetched == [] and sorted(second.reused) == sorted(first.fetched)
    assert counts.object_gets == [] and counts.bytes_sent == 0
    assert (tmp_path / "view-b" / MODEL / "1" / "model.py").read_bytes() == (SAMPLE / MODEL / "1" / "model.py").read_bytes()


def test_replicas_starting_together_fetch_once(bucket, tmp_path):
    store, counts, _, _ = bucket
    cache = tmp_path / "cache"
    threads = [threading.Thread(target=replica, args=(store, cache, tmp_path, f"view-{i}")) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(counts.object_gets) == 2


def test_a_new_version_is_fetched_once(bucket, tmp_path):
    store, counts, repo, _ = bucket
    cache = tmp_path / "cache"
    config = repo / MODEL / "config.pbtxt"
    config.write_text(config.read_text() + "version_policy: { all: {} }\n")  # versions 1 and 2 served together
    publish(repo, store)
    replica(store, cache, tmp_path, "view-a")
    shutil.copytree(repo / MODEL / "1", repo / MODEL / "2")
    publish(repo, store)
    counts.reset()
    after = replica(store, cache, tmp_path, "view-b")
    # the republished config.pbtxt (a new root entry) and version 2's file; version 1 stays cached.
    assert sorted(p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1] for p in counts.object_gets) == [
        "2/model.py", f"{MODEL}/config.pbtxt"
    ]
    assert any(e.startswith(f"{MODEL}/1@") for e in after.reused)
    counts.reset()
    replica(store, cache, tmp_path, "view-c")
    assert counts.object_gets == []
    assert sorted(p.name for p in (tmp_path / "view-c" / MODEL).iterdir()) == ["1", "2", "config.pbtxt"]


def test_a_corrupted_entry_is_discarded_and_fetched_again(bucket, tmp_path):
    store, counts, _, _ = bucket
    cache = tmp_path / "cache"
    replica(store, cache, tmp_path, "view-a")
    [cached] = (cache / "entries" / MODEL).glob("1@*/model.py")
    data = bytearray(cached.read_bytes())
    data[0] ^= 1  # same size, one bit flipped
    cached.write_bytes(bytes(data))
    counts.reset()
    outcome = replica(store, cache, tmp_path, "view-b")
    assert [e.split("@")[0] for e in outcome.discarded] == [f"{MODEL}/1"] and len(counts.object_gets) == 1
    assert (tmp_path / "view-b" / MODEL / "1" / "model.py").read_bytes() == (SAMPLE / MODEL / "1" / "model.py").read_bytes()


def test_a_partial_entry_is_never_served(bucket, tmp_path):
    store, counts, _, _ = bucket
    cache = tmp_path / "cache"
    replica(store, cache, tmp_path, "view-a")
    [entry] = (cache / "entries" / MODEL).glob("1@*")
    (entry / node_cache.MANIFEST).unlink()  # as if the fill stopped before it was verified
    (entry / "model.py").write_bytes(b"")
    counts.reset()
    outcome = replica(store, cache, tmp_path, "view-b")
    assert outcome.discarded and len(counts.object_gets) == 1
    assert (tmp_path / "view-b" / MODEL / "1" / "model.py").stat().st_size > 0


def test_a_full_disk_fails_with_the_fix(bucket, tmp_path, monkeypatch):
    store, counts, _, _ = bucket
    monkeypatch.setattr(node_cache.shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(10 * 2**30, 10 * 2**30, 2**20))
    with pytest.raises(CacheError) as error:
        replica(store, tmp_path / "cache", tmp_path, "view-a")
    message = str(error.value)
    assert "has 0.0 GiB free" in message and "Fix: remove old entries" in message
    assert counts.object_gets == [] and not list((tmp_path / "cache").glob("entries/*/*"))


def test_an_object_without_a_published_checksum_is_refused(bucket, tmp_path):
    store, _, _, endpoint = bucket
    boto3.client("s3", endpoint_url=endpoint, **KEYS).put_object(Bucket=BUCKET, Key=f"models/{MODEL}/extra.txt", Body=b"x")
    with pytest.raises(CacheError, match="carries no published SHA-256.*tritonfleet models sync"):
        replica(store, tmp_path / "cache", tmp_path, "view-a")


def test_a_key_that_climbs_out_of_the_repository_is_refused(bucket, tmp_path):
    store, _, _, endpoint = bucket
    client = boto3.client("s3", endpoint_url=endpoint, **KEYS)
    client.put_object(Bucket=BUCKET, Key=f"models/{MODEL}/1/" + "../" * 3 + "escape.txt", Body=b"x")
    with pytest.raises(CacheError, match="no path inside the repository"):
        replica(store, tmp_path / "cache", tmp_path, "view-a")
    assert not (tmp_path / "escape.txt").exists()


def test_the_command_reports_a_bad_uri_without_a_traceback(capsys, tmp_path):
    assert node_cache.main(["http://nope", "--cache", str(tmp_path / "c"), "--view", str(tmp_path / "v")]) == 1
    assert capsys.readouterr().err.startswith("error: 'http://nope' is not a bucket URI")


def test_a_real_tritonserver_serves_from_the_cache(bucket, tmp_path):
    store, counts, _, _ = bucket
    server = Triton(pytriton_dir(), tmp_path / "triton")
    cache = tmp_path / "cache"
    replica(store, cache, tmp_path, "view-a")
    counts.reset()
    # The node's prefetch publishes its view (the node holds the version: no object bytes); Triton's pod mounts the
    # cache at another path and serves views/<key>/current, as the chart's start script hands it over.
    node_cache.keep_published(store, store.uri, cache, "triton.triton-x", every=0, rounds=1)
    mounted = tmp_path / "model-cache"
    cache.rename(mounted)
    process, url, _, log = server.start(str(mounted / "views" / "triton.triton-x" / node_cache.CURRENT))
    try:
        assert wait_for(lambda: http("GET", f"{url}/v2/health/ready")[0] == 200, 40, process), log_tail(log)
        assert answer(url) == ("1", [2.0, 3.0, 4.0, 5.0])
    finally:
        stop(process)
    assert counts.object_gets == [] and counts.bytes_sent == 0


def test_the_daemonset_publishes_views_atomically_prunes_and_caches_pins(bucket, tmp_path, monkeypatch):
    store, counts, repo, _ = bucket
    asked = []
    monkeypatch.setattr(store, "sha256", lambda key, ask=store.sha256: asked.append(key) or ask(key))
    cache, key = tmp_path / "cache", "triton.triton-default"
    config = repo / MODEL / "config.pbtxt"
    node_cache.keep_published(store, store.uri, cache, key, every=0, rounds=3)  # rounds 2 and 3 change nothing
    current = cache / "views" / key / node_cache.CURRENT
    assert os.readlink(current) == "v-1" and not (cache / "views" / key / node_cache.FILLING).exists()
    assert (current / node_cache.COMPLETE).read_text() == f"{store.uri}\n" and len(counts.object_gets) == 2
    # Each object's published checksum is asked once, not at every round: the later rounds only list.
    assert len(asked) == len(set(asked)) == 2
    # Mounted elsewhere (Triton's pods mount the cache read-only at their own path), the view still reads.
    moved = tmp_path / "elsewhere"
    shutil.copytree(cache, moved, symlinks=True)
    assert (moved / "views" / key / "current" / MODEL / "1" / "model.py").read_bytes() == (
        SAMPLE / MODEL / "1" / "model.py"
    ).read_bytes()
    for version in (2, 3):  # each publish a new version; the config serves the latest only
        shutil.copytree(repo / MODEL / "1", repo / MODEL / str(version))
        config.write_text(config.read_text())
        publish(repo, store)
        node_cache.keep_published(store, store.uri, cache, key, every=0, rounds=1)
    assert os.readlink(current) == "v-3" and sorted(p.name for p in (cache / "views" / key).glob("v-*")) == ["v-2", "v-3"]
    assert sorted(p.name.split("@")[0] for p in (cache / "entries" / MODEL).iterdir()) == ["2", "3", "root", "root"]
    assert sorted(p.name for p in (current / MODEL).iterdir()) == ["3", "config.pbtxt"]
    # A version the deployment pins (modelVersions) is cached besides the served one.
    prepare(store, store.uri, cache, tmp_path / "pinned", pinned={MODEL: 2})
    assert sorted(p.name for p in (tmp_path / "pinned" / MODEL).iterdir()) == ["2", "3", "config.pbtxt"]
    with pytest.raises(CacheError, match="is not MODEL=N"):
        node_cache._pinned(["resnet"])


def test_pruning_waits_for_no_fill_on_the_node(tmp_path):
    """Another deployment's fill holds the views lock shared for as long as it runs: pruning skips the round."""
    cache = tmp_path / "cache"
    with node_cache._views_locked(cache, exclusive=False):
        assert node_cache.prune(cache) == []
    (cache / "entries" / "m" / "1@0").mkdir(parents=True)
    assert node_cache.prune(cache) == ["m/1@0"]  # no view links it
