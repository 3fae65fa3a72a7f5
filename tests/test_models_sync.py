"""`tritonfleet models sync`: change detection, publish order, immutable served versions, interruption and resume;
and that it publishes only what it compared: a file changed between hashing and upload, a colleague publishing
between plan and execute, links out of the repository, huge versions, each race reproduced with a hook at the point
where it happens.

S3 is moto (in-process for the engine, a threaded server on a loopback port for the CLI and the races); GCS is a
small fake of the google-cloud-storage client with the server's checks, since no GCS emulator runs here.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import itertools
import shutil
from pathlib import Path

import boto3
import pytest
from google.api_core import exceptions as gcs_errors
from moto import mock_aws
from moto.server import ThreadedMotoServer

from tests.conftest import ROOT, one_line, run_cli
from tritonfleet.clouds.aws.storage import S3Store
from tritonfleet.clouds.gcp.storage import GcsStore
from tritonfleet.core.object_store import RemoteObject, RepositoryUri, StoreError, join_prefix
from tritonfleet.models.stack import TargetError, stack_repository
from tritonfleet.models.sync import SyncError, execute, plan_sync, published_config
from tritonfleet.models.validate import parse_config, validate_repository

SAMPLE = ROOT / "tests" / "fixtures" / "model_repository"
BUCKET = "tf-test-models"
MODEL = "add_version"


@pytest.fixture
def aws_env(monkeypatch):
    credentials = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    for key, value in credentials.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def s3(aws_env):
    with mock_aws():
        client = boto3.client("s3")
        client.create_bucket(Bucket=BUCKET)
        yield client


@pytest.fixture
def repo(tmp_path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "repo")
    return tmp_path / "repo"


def add_version(repo: Path, version: int) -> None:
    shutil.copytree(repo / MODEL / "1", repo / MODEL / str(version))


class Recording:
    """A store wrapper that records uploads and can fail the n-th one, as a dropped connection would."""

    def __init__(self, store, fail_at: int | None = None):
        self.store, self.uri, self.fail_at, self.keys = store, store.uri, fail_at, []

    def upload(self, key, source, **kwargs):
        if self.fail_at is not None and len(self.keys) + 1 == self.fail_at:
            raise StoreError(f"upload of {key} failed for s3://{self.uri.bucket}: connection reset")
        token = self.store.upload(key, source, **kwargs)
        self.keys.append(key)
        return token

    def __getattr__(self, name):
        return getattr(self.store, name)

    @property
    def sent(self) -> list[str]:
        """Keys in upload order, once each (config.pbtxt may go twice to get a later Last-Modified second)."""
        return list(dict.fromkeys(self.keys))


def sync(repo: Path, store, **kwargs) -> list[str]:
    report = validate_repository(repo)
    assert report.ok
    return execute(plan_sync(report, store), store, **kwargs)


def served(client, prefix: str = "models/") -> list[int]:
    text = client.get_object(Bucket=BUCKET, Key=f"{prefix}{MODEL}/config.pbtxt")["Body"].read().decode()
    return list(parse_config(text).version_policy.specific.versions)


def test_first_sync_uploads_version_files_then_config_last(s3, repo):
    store = Recording(S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models")))
    assert sync(repo, store) == [MODEL]
    assert store.sent == [f"models/{MODEL}/1/model.py", f"models/{MODEL}/config.pbtxt"]
    head = s3.head_object(Bucket=BUCKET, Key=f"models/{MODEL}/1/model.py")
    assert len(head["Metadata"]["sha256"]) == 64
    assert served(s3) == [1]


def test_the_published_config_keeps_the_model_settings_and_pins_versions(repo):
    [model] = validate_repository(repo).models
    published = parse_config(published_config(model).decode())
    assert list(published.version_policy.specific.versions) == [1]
    published.ClearField("version_policy")
    assert published == model.config


def test_a_second_sync_uploads_nothing(s3, repo):
    store = S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models"))
    sync(repo, store)
    plan = plan_sync(validate_repository(repo), store)
    assert plan.uploads == [] and plan.models[0].served_before == [1] and plan.models[0].unchanged == 2


def test_a_new_version_is_published_by_the_config_alone(s3, repo):
    store = Recording(S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models")))
    sync(repo, store)
    add_version(repo, 2)
    store.keys.clear()
    sync(repo, store)
    assert store.sent == [f"models/{MODEL}/2/model.py", f"models/{MODEL}/config.pbtxt"]
    assert served(s3) == [2]


def test_a_served_version_is_immutable(s3, repo):
    store = Recording(S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models")))
    sync(repo, store)
    (repo / MODEL / "1" / "model.py").write_text("# changed\n")
    (repo / MODEL / "1" / "extra.txt").write_text("x")
    with pytest.raises(SyncError) as caught:
        plan_sync(validate_repository(repo), store)
    message = str(caught.value)
    assert f"{MODEL}/1/model.py: changed in version 1" in message and f"{MODEL}/1/extra.txt: new in version 1" in message
    assert "new version folder" in message


def test_dropping_a_version_locally_unpublishes_it_but_leaves_its_files(s3, repo):
    store = S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models"))
    sync(repo, store)
    add_version(repo, 2)
    shutil.rmtree(repo / MODEL / "1")
    sync(repo, store)
    assert served(s3) == [2]
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert f"models/{MODEL}/1/model.py" in keys


def test_an_interrupted_sync_leaves_the_served_version_and_the_next_sync_completes_it(s3, repo):
    base = S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models"))
    sync(repo, base)
    add_version(repo, 2)
    (repo / MODEL / "2" / "weights.bin").write_bytes(b"\x00" * 1000)
    failing = Recording(base, fail_at=2)  # 2/weights.bin goes up, 2/model.py fails, config.pbtxt is never sent
    with pytest.raises(SyncError) as caught:
        sync(repo, failing)
    assert failing.sent == [f"models/{MODEL}/2/weights.bin"]
    assert "still serves versions [1]" in str(caught.value) and "Run the same command again" in str(caught.value)
    assert served(s3) == [1]

    resumed = Recording(base)
    sync(repo, resumed)
    assert resumed.sent == [f"models/{MODEL}/2/model.py", f"models/{MODEL}/config.pbtxt"]  # weights.bin is not sent twice
    assert served(s3) == [2]


def test_a_version_left_unpublished_may_be_rewritten(s3, repo):
    base = S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models"))
    sync(repo, base)
    add_version(repo, 2)
    with pytest.raises(SyncError):
        sync(repo, Recording(base, fail_at=2))  # 2/model.py is uploaded, config.pbtxt fails
    (repo / MODEL / "2" / "model.py").write_text((repo / MODEL / "1" / "model.py").read_text() + "# fixed\n")
    plan = plan_sync(validate_repository(repo), base)
    expected = [(f"{MODEL}/2/model.py", "changed"), (f"{MODEL}/config.pbtxt", "changed")]
    assert [(u.relative, u.reason) for u in plan.uploads] == expected


def test_a_file_left_in_an_unpublished_version_would_be_served_and_is_refused(s3, repo):
    """An interrupted run uploaded 2/old.bin, which was then removed locally: publishing version 2 would serve it."""
    base = S3Store(RepositoryUri.parse(f"s3://{BUCKET}/models"))
    sync(repo, base)
    add_version(repo, 2)
    (repo / MODEL / "2" / "old.bin").write_bytes(b"stale")
    with pytest.raises(SyncError):
        sync(repo, Recording(base, fail_at=3))  # old.bin and model.py go up, config.pbtxt fails
    (repo / MODEL / "2" / "old.bin").unlink()
    with pytest.raises(SyncError) as caught:
        plan_sync(validate_repository(repo), base)
    assert f"{MODEL}/2/old.bin: in the bucket but not in {repo / MODEL}; version 2 would be served" in str(caught.value)
    assert served(s3) == [1]


def test_config_is_re_uploaded_until_its_last_modified_second_is_later(repo):
    class SameSecondStore:
        uri = RepositoryUri.parse("s3://b/p")

        def __init__(self):
            self.uploads, self.objects = [], {}
            self.clock = [dt.datetime(2026, 1, 1, 12, 0, 0, 100000), dt.datetime(2026, 1, 1, 12, 0, 0, 900000)]

        def list(self, prefix):
            return {key: RemoteObject(0, token=key) for key in self.objects if key.startswith(prefix)}

        def read(self, key):
            return None

        def upload(self, key, source, **kwargs):
            self.uploads.append(key)
            self.objects[key] = self.clock.pop(0) if self.clock else dt.datetime(2026, 1, 1, 12, 0, 1)
            return key

        def modified(self, key):
            return self.objects[key]

    store, waits = SameSecondStore(), []
    execute(plan_sync(validate_repository(repo), store), store, wait=lambda: waits.append("waited"))
    assert store.uploads == [f"p/{MODEL}/1/model.py", f"p/{MODEL}/config.pbtxt", f"p/{MODEL}/config.pbtxt"]
    assert waits == ["waited"]


def test_ensembles_are_published_after_the_models_they_call(s3, repo):
    ensemble = repo / "pipeline"
    (ensemble / "1").mkdir(parents=True)
    (ensemble / "config.pbtxt").write_text(
        'platform: "ensemble" max_batch_size: 8 input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ] '
        'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ] ensemble_scheduling { step [ { model_name: "add_version" '
        'model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }'
    )
    store = Recording(S3Store(RepositoryUri.parse(f"s3://{BUCKET}")))
    assert sync(repo, store) == [MODEL, "pipeline"]
    assert store.sent[-1] == "pipeline/config.pbtxt"


def test_uri_parsing_and_prefixes():
    assert RepositoryUri.parse("s3://b") == RepositoryUri("s3", "b", "")
    assert RepositoryUri.parse("gs://b/llm/", "v2") == RepositoryUri("gs", "b", "llm/v2/")
    assert str(RepositoryUri.parse("s3://b//a//", "/c/")) == "s3://b/a/c/"
    assert join_prefix("", "") == ""
    for bad in ("b/prefix", "http://b", "s3://", "file:///x", "s3://b/../x", "s3://b/a/./c", "s3://b/\x1b[2J", "s3://B", "gs://a b/"):
        with pytest.raises(StoreError):
            RepositoryUri.parse(bad)
    with pytest.raises(StoreError, match="not a folder name"):
        RepositoryUri.parse("s3://b/models", "../" * 2 + "other")  # a prefix climbing out (spelled so the standalone scan reads no path)


def test_stack_targets_follow_the_stack_config():
    assert str(stack_repository(ROOT, "dev")) == "s3://tf-dev-models-123456789012-us-east-1/"
    assert str(stack_repository(ROOT, "dev", deployment="resnet")) == "s3://tf-dev-models-123456789012-us-east-1/resnet/"
    assert str(stack_repository(ROOT, "gcp-prod", deployment="llm", prefix="canary")) == "gs://tf-gcp-prod-models-acme-ml-prod-us-central1/llm/canary/"
    assert str(stack_repository(ROOT, "prod", bucket="models")) == "s3://tf-prod-models-123456789012-us-east-1/"
    with pytest.raises(TargetError, match="no Triton deployment 'nope'.*resnet"):
        stack_repository(ROOT, "dev", deployment="nope")
    with pytest.raises(TargetError, match="no model bucket 'other'"):
        stack_repository(ROOT, "dev", bucket="other")


class FakeBlob:
    """google-cloud-storage's Blob as sync uses it, with the server's checks: the generation precondition (0: the
    object must not exist) and the md5Hash the request declares."""

    def __init__(self, bucket, name):
        self.bucket, self.name, self.metadata, self.size, self.updated = bucket, name, None, 0, None
        self.md5_hash, self.generation = None, None

    def upload_from_file(self, handle, size, if_generation_match, checksum):
        data = handle.read()
        assert len(data) == size and checksum == "md5"
        current = self.bucket.blobs.get(self.name, (None,))[0]
        if if_generation_match != (current.generation if current else 0):
            raise gcs_errors.PreconditionFailed("conditionNotMet")
        if self.md5_hash != base64.b64encode(hashlib.md5(data).digest()).decode():
            raise gcs_errors.BadRequest("Provided MD5 hash doesn't match calculated MD5 hash")
        self.bucket.generations += 1
        self.generation = self.bucket.generations
        self.size, self.updated = len(data), dt.datetime(2026, 1, 1, 12, 0, len(self.bucket.blobs))
        self.bucket.blobs[self.name] = (self, data)

    def download_as_bytes(self):
        if self.name not in self.bucket.blobs:
            raise gcs_errors.NotFound("no such object")
        return self.bucket.blobs[self.name][1]


class FakeBucket:
    def __init__(self, exists=True):
        self.blobs, self.exists, self.generations = {}, exists, 0

    def blob(self, name):
        return FakeBlob(self, name)

    def get_blob(self, name):
        return self.blobs.get(name, (None,))[0]


class FakeGcsClient:
    def __init__(self, bucket):
        self._bucket = bucket

    def bucket(self, name):
        return self._bucket

    def list_blobs(self, bucket, prefix="", max_results=None):
        if not bucket.exists:
            raise gcs_errors.NotFound("bucket not found")
        return [blob for name, (blob, _) in sorted(bucket.blobs.items()) if name.startswith(prefix)][:max_results]


def test_gcs_store_keeps_hashes_in_object_metadata(repo):
    bucket = FakeBucket()
    store = GcsStore(RepositoryUri.parse("gs://tf-gcp-prod-models/llm"), client=FakeGcsClient(bucket))
    store.check()
    assert sync(repo, store) == [MODEL]
    assert sorted(bucket.blobs) == [f"llm/{MODEL}/1/model.py", f"llm/{MODEL}/config.pbtxt"]
    listed = store.list("llm/")
    assert all(len(obj.sha256) == 64 for obj in listed.values())
    assert plan_sync(validate_repository(repo), store).uploads == []


def test_gcs_store_reports_a_missing_bucket():
    store = GcsStore(RepositoryUri.parse("gs://missing"), client=FakeGcsClient(FakeBucket(exists=False)))
    with pytest.raises(StoreError, match="gs://missing: the bucket does not exist"):
        store.check()


@pytest.fixture(scope="module")
def moto_endpoint():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def cli_env(monkeypatch, moto_endpoint, aws_env):
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    client = boto3.client("s3", endpoint_url=moto_endpoint)
    for name in (BUCKET, "tf-dev-models-123456789012-us-east-1"):
        client.create_bucket(Bucket=name)
    return client


def test_cli_dry_run_prints_the_plan_and_uploads_nothing(cli_env, repo):
    result = run_cli("models", "sync", str(repo), "--bucket", f"s3://{BUCKET}/dry", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"new      {MODEL}/1/model.py" in result.stdout and f"new      {MODEL}/config.pbtxt" in result.stdout
    assert "Dry run: 2 file(s)" in result.stdout
    assert "Contents" not in cli_env.list_objects_v2(Bucket=BUCKET, Prefix="dry/")


def test_cli_sync_to_a_stack_deployment(cli_env, repo):
    result = run_cli("models", "sync", str(repo), "--stack", "dev", "--deployment", "resnet")
    assert result.returncode == 0, result.stderr
    assert "Published add_version to s3://tf-dev-models-123456789012-us-east-1/resnet/" in result.stdout
    again = run_cli("models", "sync", str(repo), "--stack", "dev", "--deployment", "resnet")
    assert "s3://tf-dev-models-123456789012-us-east-1/resnet/ is up to date." in again.stdout


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("s3://tf-no-such-bucket/models", "the bucket does not exist"),
        ("s3://http-unreachable", "cannot reach the S3 endpoint"),
    ],
)
def test_cli_unreachable_bucket_is_a_clear_error(cli_env, repo, monkeypatch, target, expected):
    if "unreachable" in target:
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard port: nothing listens
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    result = run_cli("models", "sync", str(repo), "--bucket", target)
    assert result.returncode == 1
    assert one_line(expected) in one_line(result.stderr) and "Nothing was published." in one_line(result.stderr)
    assert "Traceback" not in result.stderr


def test_cli_refuses_a_bad_repository_before_touching_the_bucket(cli_env, repo):
    (repo / MODEL / "1").rename(repo / MODEL / "v1")
    result = run_cli("models", "sync", str(repo), "--bucket", f"s3://{BUCKET}/bad")
    assert result.returncode == 1 and "no version folder" in one_line(result.stderr) and "nothing was published" in one_line(result.stderr)
    assert "Contents" not in cli_env.list_objects_v2(Bucket=BUCKET, Prefix="bad/")


def test_cli_needs_exactly_one_target(repo):
    """Options missing or conflicting are usage errors (exit 64, as Click's own)."""
    for args in ([], ["--stack", "dev", "--bucket", "s3://b"]):
        result = run_cli("models", "sync", str(repo), *args)
        assert result.returncode == 64 and "exactly one of --stack NAME or --bucket URI" in one_line(result.stderr)
    result = run_cli("models", "sync", str(repo), "--bucket", "s3://b", "--deployment", "resnet")
    assert result.returncode == 64 and "--deployment and --model-bucket need --stack" in one_line(result.stderr)


# Races and refusals: what sync publishes is what it compared.

_buckets = itertools.count()


@pytest.fixture
def s3_bucket(moto_endpoint, aws_env):
    """A fresh bucket on the module's moto server: (client, bucket)."""
    client = boto3.client("s3", endpoint_url=moto_endpoint)
    bucket = f"tf-races-{next(_buckets)}"
    client.create_bucket(Bucket=bucket)
    return client, bucket


def s3_store(s3_bucket, **kwargs) -> S3Store:
    client, bucket = s3_bucket
    return S3Store(RepositoryUri.parse(f"s3://{bucket}/models"), client=client, **kwargs)


def body(s3_bucket, relative: str) -> bytes | None:
    client, bucket = s3_bucket
    try:
        return client.get_object(Bucket=bucket, Key=f"models/{relative}")["Body"].read()
    except client.exceptions.NoSuchKey:
        return None


def served_from(s3_bucket) -> list[int]:
    return list(parse_config(body(s3_bucket, f"{MODEL}/config.pbtxt").decode()).version_policy.specific.versions)


def colleague_copy(repo: Path, tmp_path: Path, code: str) -> Path:
    """Another checkout of the repository (which has a version 2) whose version 2 differs."""
    theirs = tmp_path / "theirs"
    shutil.copytree(repo, theirs)
    (theirs / MODEL / "2" / "model.py").write_text((theirs / MODEL / "2" / "model.py").read_text() + code)
    return theirs


def test_each_object_carries_the_checksum_of_its_stored_bytes(s3_bucket, repo):
    store = s3_store(s3_bucket)
    sync(repo, store)
    client, bucket = s3_bucket
    for relative in (f"{MODEL}/1/model.py", f"{MODEL}/config.pbtxt"):
        head = client.head_object(Bucket=bucket, Key=f"models/{relative}", ChecksumMode="ENABLED")
        stored = body(s3_bucket, relative)
        assert head["ChecksumSHA256"] == base64.b64encode(hashlib.sha256(stored).digest()).decode()
        assert head["Metadata"]["sha256"] == hashlib.sha256(stored).hexdigest()


def test_a_file_changed_between_hashing_and_upload_is_not_published(s3_bucket, repo):
    store = s3_store(s3_bucket)
    sync(repo, store)
    add_version(repo, 2)
    plan = plan_sync(validate_repository(repo), store)

    def edit_after_the_plan(upload):
        if upload.relative == f"{MODEL}/2/model.py":
            upload.path.write_text(upload.path.read_text() + "# edited while the sync ran\n")

    with pytest.raises(SyncError) as caught:
        execute(plan, store, on_file=edit_after_the_plan)
    assert "changed while it was being published" in str(caught.value) and "a local file changed" in str(caught.value)
    assert body(s3_bucket, f"{MODEL}/2/model.py") is None and served_from(s3_bucket) == [1]

    sync(repo, store)  # compared anew: the edited file goes up under its own checksum
    stored = body(s3_bucket, f"{MODEL}/2/model.py")
    assert stored.endswith(b"# edited while the sync ran\n") and served_from(s3_bucket) == [2]


def test_a_file_changed_during_a_multipart_upload_is_aborted(s3_bucket, repo, monkeypatch):
    monkeypatch.setattr("moto.s3.models.S3_UPLOAD_PART_MIN_SIZE", 256)  # the server runs in this process
    store = s3_store(s3_bucket, part_bytes=10_000)
    sync(repo, store)
    add_version(repo, 2)
    weights = repo / MODEL / "2" / "weights.bin"
    weights.write_bytes(b"\x01" * 40_000)  # four parts
    plan = plan_sync(validate_repository(repo), store)
    sent = []

    def after_each_part(count):
        sent.append(count)
        if len(sent) == 1:
            with weights.open("r+b") as handle:  # a writer still busy with the file
                handle.seek(35_000)
                handle.write(b"\x02" * 10)

    with pytest.raises(SyncError, match="changed while it was being published"):
        execute(plan, store, progress=after_each_part)
    client, bucket = s3_bucket
    assert body(s3_bucket, f"{MODEL}/2/weights.bin") is None and served_from(s3_bucket) == [1]
    assert "Uploads" not in client.list_multipart_uploads(Bucket=bucket)

    sync(repo, store)
    assert (
        hashlib.sha256(body(s3_bucket, f"{MODEL}/2/weights.bin")).hexdigest() == hashlib.sha256(weights.read_bytes()).hexdigest()
    )


def test_a_colleagues_version_published_between_plan_and_execute_is_kept(s3_bucket, repo, tmp_path):
    store = s3_store(s3_bucket)
    sync(repo, store)
    add_version(repo, 2)
    mine = plan_sync(validate_repository(repo), store)
    theirs = colleague_copy(repo, tmp_path, "# the colleague's version 2\n")
    sync(theirs, store)

    with pytest.raises(SyncError) as caught:
        execute(mine, store)
    assert "someone else wrote it" in str(caught.value) and "the bucket changed" in str(caught.value)
    assert body(s3_bucket, f"{MODEL}/2/model.py").endswith(b"# the colleague's version 2\n") and served_from(s3_bucket) == [2]
    with pytest.raises(SyncError, match="version 2, which the bucket serves"):  # compared anew: a conflict, said
        plan_sync(validate_repository(repo), store)


def test_a_config_published_between_plan_and_execute_is_not_overwritten(s3_bucket, repo, tmp_path):
    store = s3_store(s3_bucket)
    sync(repo, store)
    add_version(repo, 2)
    mine = plan_sync(validate_repository(repo), store)
    theirs = tmp_path / "theirs"
    shutil.copytree(repo, theirs)
    shutil.rmtree(theirs / MODEL / "2")
    config = theirs / MODEL / "config.pbtxt"
    config.write_text(config.read_text() + '\nparameters { key: "owner" value { string_value: "colleague" } }\n')
    sync(theirs, store)

    with pytest.raises(SyncError, match="someone else wrote it"):
        execute(mine, store)
    assert b"colleague" in body(s3_bucket, f"{MODEL}/config.pbtxt") and served_from(s3_bucket) == [1]


def test_a_file_written_into_the_version_about_to_be_published_stops_the_switch(s3_bucket, repo):
    """A file the plan found unchanged (left by an interrupted run) is overwritten by someone else before the
    config switch: the objects are listed again and the config is not written."""
    store = s3_store(s3_bucket)
    sync(repo, store)
    add_version(repo, 2)
    client, bucket = s3_bucket
    key = f"models/{MODEL}/2/model.py"
    code = (repo / MODEL / "2" / "model.py").read_bytes()
    client.put_object(Bucket=bucket, Key=key, Body=code, Metadata={"sha256": hashlib.sha256(code).hexdigest()})
    plan = plan_sync(validate_repository(repo), store)
    assert [u.relative for u in plan.uploads] == [f"{MODEL}/config.pbtxt"]
    client.put_object(Bucket=bucket, Key=key, Body=b"raise SystemExit('not the reviewed code')\n")

    with pytest.raises(SyncError, match=f"models/{MODEL}/2/model.py changed since this sync compared the bucket"):
        execute(plan, store)
    assert served_from(s3_bucket) == [1]


def test_gcs_writes_are_conditional_on_the_generation_the_plan_saw(repo, tmp_path):
    bucket = FakeBucket()
    store = GcsStore(RepositoryUri.parse("gs://tf-gcp-prod-models/llm"), client=FakeGcsClient(bucket))
    sync(repo, store)
    add_version(repo, 2)
    mine = plan_sync(validate_repository(repo), store)
    sync(colleague_copy(repo, tmp_path, "# theirs\n"), store)
    with pytest.raises(SyncError, match="someone else wrote it"):
        execute(mine, store)
    assert bucket.blobs[f"llm/{MODEL}/2/model.py"][1].endswith(b"# theirs\n")


def test_cli_refuses_a_link_out_of_the_repository_and_uploads_nothing(s3_bucket, repo, tmp_path, monkeypatch, moto_endpoint):
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    secret = tmp_path / "credentials"
    secret.write_text("[default]\naws_secret_access_key = do-not-publish\n")
    (repo / MODEL / "1" / "labels.txt").symlink_to(secret)
    client, bucket = s3_bucket
    result = run_cli("models", "sync", str(repo), "--bucket", f"s3://{bucket}/models")
    assert result.returncode == 1 and "outside the repository" in result.stderr and "Traceback" not in result.stderr
    assert "Contents" not in client.list_objects_v2(Bucket=bucket)


def test_cli_refuses_a_version_beyond_int64_cleanly(s3_bucket, repo, monkeypatch, moto_endpoint):
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    shutil.copytree(repo / MODEL / "1", repo / MODEL / "99999999999999999999999")
    client, bucket = s3_bucket
    result = run_cli("models", "sync", str(repo), "--bucket", f"s3://{bucket}/models")
    assert result.returncode == 1 and "at most 9223372036854775807" in result.stderr and "Traceback" not in result.stderr
    assert "Contents" not in client.list_objects_v2(Bucket=bucket)


def test_a_file_swapped_for_a_fifo_after_validation_is_refused_not_waited_on(repo):
    """Opening a FIFO to read it would wait for a writer forever: sync opens files non-blocking and refuses it."""
    import os

    report = validate_repository(repo)
    weights = repo / MODEL / "1" / "model.py"
    weights.unlink()
    os.mkfifo(weights)
    store = GcsStore(RepositoryUri.parse("gs://tf-gcp-prod-models/llm"), client=FakeGcsClient(FakeBucket()))
    with pytest.raises(StoreError, match="model.py is no longer a regular file"):
        plan_sync(report, store)
