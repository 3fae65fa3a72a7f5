"""The GCS store a model repository is published to (tritonfleet/core/object_store.py's Store), through
google-cloud-storage.

Credentials come only from Application Default Credentials; the endpoint override is the SDK's own,
STORAGE_EMULATOR_HOST. The Google libraries are imported when a store is opened, never at module load.
"""

from __future__ import annotations

import base64
import hashlib
import tempfile
from datetime import datetime

from tritonfleet.core.object_store import (
    MIB,
    SHA256_METADATA,
    ConcurrentChange,
    Progress,
    RemoteObject,
    RepositoryUri,
    Sink,
    Source,
    StoreError,
)


class GcsStore:
    """GCS through google-cloud-storage: writes preconditioned on the object's generation (0: absent) and an MD5
    the server checks before it creates the object, per https://cloud.google.com/storage/docs/request-preconditions
    and https://cloud.google.com/storage/docs/data-validation (2026-12-05)."""

    def __init__(self, uri: RepositoryUri, client=None):
        from google.api_core import exceptions as api_exceptions
        from google.auth import exceptions as auth_exceptions

        self.uri = uri
        self._api = api_exceptions
        self._failures = (api_exceptions.GoogleAPIError, auth_exceptions.GoogleAuthError, ConnectionError)
        if client is None:
            from google.cloud import storage

            try:
                client = storage.Client()
            except auth_exceptions.DefaultCredentialsError as exc:
                raise StoreError(
                    f"cannot use gs://{uri.bucket}: no Application Default Credentials "
                    f"(gcloud auth application-default login, GOOGLE_APPLICATION_CREDENTIALS, or Workload Identity): {exc}"
                ) from None
        self._client = client
        self._bucket = client.bucket(uri.bucket)

    def _fail(self, action: str, exc: Exception) -> StoreError:
        where = f"gs://{self.uri.bucket}"
        if isinstance(exc, self._api.NotFound):
            return StoreError(f"{action} {where}: the bucket does not exist (is the stack deployed? is the name right?)")
        if isinstance(exc, self._api.PreconditionFailed):
            return ConcurrentChange(f"{action} {where}: someone else wrote it since this sync compared the bucket")
        if isinstance(exc, self._api.Forbidden):
            return StoreError(f"{action} {where}: access denied for the current Google credentials")
        return StoreError(f"{action} {where}: {exc}")

    def check(self) -> None:
        try:
            list(self._client.list_blobs(self._bucket, max_results=1))
        except self._failures as exc:
            raise self._fail("cannot use", exc) from None

    def list(self, prefix: str) -> dict[str, RemoteObject]:
        try:
            blobs = list(self._client.list_blobs(self._bucket, prefix=prefix))
        except self._failures as exc:
            raise self._fail("cannot list", exc) from None
        return {
            b.name: RemoteObject(b.size or 0, (b.metadata or {}).get(SHA256_METADATA), str(b.generation)) for b in blobs
        }

    def sha256(self, key: str) -> str | None:
        try:
            blob = self._bucket.get_blob(key)
        except self._failures as exc:
            raise self._fail(f"cannot read metadata of {key} in", exc) from None
        return (blob.metadata or {}).get(SHA256_METADATA) if blob is not None else None

    def read(self, key: str) -> bytes | None:
        try:
            return self._bucket.blob(key).download_as_bytes()
        except self._api.NotFound:
            return None
        except self._failures as exc:
            raise self._fail(f"cannot read {key} from", exc) from None

    def download(self, key: str, sink: Sink) -> None:
        """Stream an object into `sink` (a node-local cache fill: objects far larger than memory)."""
        try:
            self._bucket.blob(key).download_to_file(sink)
        except self._failures as exc:
            raise self._fail(f"cannot read {key} from", exc) from None

    def upload(self, key: str, source: Source, *, expect: str | None, progress: Progress | None = None) -> str:
        # The bytes are copied once (memory up to 64 MiB, then a temporary file) while they are hashed, so the MD5
        # GCS checks is that of the very bytes sent; GCS shows the object only once the upload is finalised.
        with tempfile.SpooledTemporaryFile(max_size=64 * MIB) as copy:
            md5 = hashlib.md5(usedforsecurity=False)
            for block in source.chunks(MIB):
                md5.update(block)
                copy.write(block)
            copy.seek(0)
            blob = self._bucket.blob(key)
            blob.metadata = {SHA256_METADATA: source.sha256}
            blob.md5_hash = base64.b64encode(md5.digest()).decode()
            try:
                blob.upload_from_file(copy, size=source.size, if_generation_match=int(expect or 0), checksum="md5")
            except self._failures as exc:
                raise self._fail(f"upload of {key} failed for", exc) from None
        if progress:
            progress(source.size)
        return str(blob.generation)

    def modified(self, key: str) -> datetime:
        try:
            blob = self._bucket.get_blob(key)
        except self._failures as exc:
            raise self._fail(f"cannot read metadata of {key} in", exc) from None
        if blob is None or blob.updated is None:
            raise StoreError(f"gs://{self.uri.bucket}/{key} vanished after its upload")
        return blob.updated
