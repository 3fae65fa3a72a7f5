"""The toy cloud's object store (tritonfleet/core/object_store.py's Store): a bucket is a folder under
$TOY_STORE_ROOT, each object a file, its SHA-256 and write token kept beside it in the bucket's index. Writes are
preconditioned on the token as S3's and GCS's are, and the bytes received are checked against their checksum."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from tritonfleet.core.object_store import (
    MIB,
    ConcurrentChange,
    Progress,
    RemoteObject,
    RepositoryUri,
    Sink,
    Source,
    StoreError,
)

ROOT_ENV = "TOY_STORE_ROOT"
INDEX = ".index.json"


class ToyStore:
    def __init__(self, uri: RepositoryUri):
        self.uri = uri
        self._folder = Path(os.environ.get(ROOT_ENV, "/nonexistent")) / uri.bucket

    def _index(self) -> dict[str, dict]:
        path = self._folder / INDEX
        return json.loads(path.read_text()) if path.is_file() else {}

    def check(self) -> None:
        if not self._folder.is_dir():
            raise StoreError(f"cannot use toy://{self.uri.bucket}: the bucket does not exist")

    def list(self, prefix: str) -> dict[str, RemoteObject]:
        return {
            key: RemoteObject(entry["size"], entry["sha256"], entry["token"])
            for key, entry in self._index().items()
            if key.startswith(prefix)
        }

    def sha256(self, key: str) -> str | None:
        entry = self._index().get(key)
        return entry["sha256"] if entry else None

    def read(self, key: str) -> bytes | None:
        path = self._folder / key
        return path.read_bytes() if key in self._index() else None

    def download(self, key: str, sink: Sink) -> None:
        data = self.read(key)
        if data is None:
            raise StoreError(f"toy://{self.uri.bucket}/{key} does not exist")
        sink.write(data)

    def upload(self, key: str, source: Source, *, expect: str | None, progress: Progress | None = None) -> str:
        self.check()
        index = self._index()
        current = index.get(key)
        if (current["token"] if current else None) != expect:
            raise ConcurrentChange(f"upload of {key} failed for toy://{self.uri.bucket}: someone else wrote it")
        data = b"".join(source.chunks(MIB))
        if hashlib.sha256(data).hexdigest() != source.sha256:
            raise StoreError(f"upload of {key} failed for toy://{self.uri.bucket}: the checksum does not match")
        path = self._folder / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        token = str(int(current["token"]) + 1 if current else 1)
        index[key] = {"size": len(data), "sha256": source.sha256, "token": token, "modified": datetime.now(UTC).isoformat()}
        (self._folder / INDEX).write_text(json.dumps(index, indent=1, sort_keys=True))
        if progress:
            progress(len(data))
        return token

    def modified(self, key: str) -> datetime:
        entry = self._index().get(key)
        if entry is None:
            raise StoreError(f"toy://{self.uri.bucket}/{key} vanished after its upload")
        return datetime.fromisoformat(entry["modified"])
