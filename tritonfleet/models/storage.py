"""Object stores a model repository is published to: S3 (boto3) and GCS (google-cloud-storage).

Credentials come only from each SDK's standard chain (AWS: environment, profile, SSO, IRSA, instance role;
Google: Application Default Credentials). Endpoint overrides are the SDKs' own: AWS_ENDPOINT_URL(_S3) for boto3,
STORAGE_EMULATOR_HOST for google-cloud-storage. Every object carries its SHA-256 in user metadata so a later sync
can tell what changed without downloading it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

SHA256_METADATA = "sha256"


class StoreError(Exception):
    """The bucket cannot be used: missing, unreachable, no credentials, access denied, or a failed request."""


@dataclass(frozen=True)
class RepositoryUri:
    scheme: str  # "s3" or "gs"
    bucket: str
    prefix: str  # "" or a folder path ending in "/"

    @classmethod
    def parse(cls, uri: str, extra_prefix: str = "") -> RepositoryUri:
        scheme, sep, rest = uri.partition("://")
        if not sep or scheme not in ("s3", "gs"):
            raise StoreError(f"'{uri}' is not a bucket URI: use s3://BUCKET[/PREFIX] or gs://BUCKET[/PREFIX]")
        bucket, _, path = rest.partition("/")
        if not bucket:
            raise StoreError(f"'{uri}' names no bucket")
        return cls(scheme, bucket, join_prefix(path, extra_prefix))

    def key(self, relative: str) -> str:
        return self.prefix + relative

    def __str__(self) -> str:
        return f"{self.scheme}://{self.bucket}/{self.prefix}"


def join_prefix(*parts: str) -> str:
    """Folder parts joined as an object-key prefix: '' or 'a/b/'."""
    segments = [s for part in parts for s in part.split("/") if s]
    return "".join(f"{s}/" for s in segments)


@dataclass(frozen=True)
class RemoteObject:
    size: int
    sha256: str | None = None  # None: not known from the listing (ask Store.sha256)


Progress = Callable[[int], None]  # called with the number of bytes just sent


class Store(Protocol):
    uri: RepositoryUri

    def check(self) -> None:
        """Raise StoreError unless the bucket exists and can be listed with the current credentials."""

    def list(self, prefix: str) -> dict[str, RemoteObject]: ...

    def sha256(self, key: str) -> str | None: ...

    def read(self, key: str) -> bytes | None: ...

    def upload(self, key: str, sha256: str, *, path: Path | None = None, data: bytes | None = None,
               progress: Progress | None = None) -> None: ...

    def modified(self, key: str) -> datetime: ...


def open_store(uri: RepositoryUri) -> Store:
    return S3Store(uri) if uri.scheme == "s3" else GcsStore(uri)


class S3Store:
    def __init__(self, uri: RepositoryUri, client=None):
        import boto3
        import boto3.exceptions
        import botocore.exceptions as errors

        self.uri = uri
        self._errors = errors
        self._failures = (errors.BotoCoreError, errors.ClientError, boto3.exceptions.S3UploadFailedError)
        self._client = client or boto3.client("s3")

    def _fail(self, action: str, exc: Exception) -> StoreError:
        errors = self._errors
        where = f"s3://{self.uri.bucket}"
        if isinstance(exc, errors.NoCredentialsError):
            return StoreError(
                f"{action} {where}: no AWS credentials in the standard chain "
                "(environment, AWS_PROFILE/SSO, web identity/IRSA, instance role)"
            )
        if isinstance(exc, errors.EndpointConnectionError):
            return StoreError(f"{action} {where}: cannot reach the S3 endpoint ({exc})")
        if isinstance(exc, errors.ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("404", "NoSuchBucket"):
                return StoreError(f"{action} {where}: the bucket does not exist (is the stack deployed? is the name right?)")
            if code in ("403", "AccessDenied"):
                return StoreError(f"{action} {where}: access denied for the current AWS credentials")
        return StoreError(f"{action} {where}: {exc}")

    def check(self) -> None:
        try:
            self._client.head_bucket(Bucket=self.uri.bucket)
        except self._failures as exc:
            raise self._fail("cannot use", exc) from None

    def list(self, prefix: str) -> dict[str, RemoteObject]:
        found: dict[str, RemoteObject] = {}
        try:
            for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.uri.bucket, Prefix=prefix):
                for item in page.get("Contents", []):
                    found[item["Key"]] = RemoteObject(size=item["Size"])
        except self._failures as exc:
            raise self._fail("cannot list", exc) from None
        return found

    def sha256(self, key: str) -> str | None:
        try:
            head = self._client.head_object(Bucket=self.uri.bucket, Key=key)
        except self._failures as exc:
            raise self._fail(f"cannot read metadata of {key} in", exc) from None
        return head.get("Metadata", {}).get(SHA256_METADATA)

    def read(self, key: str) -> bytes | None:
        try:
            return self._client.get_object(Bucket=self.uri.bucket, Key=key)["Body"].read()
        except self._errors.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise self._fail(f"cannot read {key} from", exc) from None
        except self._failures as exc:
            raise self._fail(f"cannot read {key} from", exc) from None

    def upload(self, key: str, sha256: str, *, path: Path | None = None, data: bytes | None = None,
               progress: Progress | None = None) -> None:
        metadata = {SHA256_METADATA: sha256}
        try:
            if path is not None:
                # Multipart above 8 MiB; S3 shows the object only once the upload completes.
                self._client.upload_file(str(path), self.uri.bucket, key, ExtraArgs={"Metadata": metadata}, Callback=progress)
            else:
                assert data is not None
                self._client.put_object(Bucket=self.uri.bucket, Key=key, Body=data, Metadata=metadata)
                if progress:
                    progress(len(data))
        except self._failures as exc:
            raise self._fail(f"upload of {key} failed for", exc) from None

    def modified(self, key: str) -> datetime:
        try:
            return self._client.head_object(Bucket=self.uri.bucket, Key=key)["LastModified"]
        except self._failures as exc:
            raise self._fail(f"cannot read metadata of {key} in", exc) from None


class GcsStore:
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
        return {b.name: RemoteObject(size=b.size or 0, sha256=(b.metadata or {}).get(SHA256_METADATA)) for b in blobs}

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

    def upload(self, key: str, sha256: str, *, path: Path | None = None, data: bytes | None = None,
               progress: Progress | None = None) -> None:
        blob = self._bucket.blob(key)
        blob.metadata = {SHA256_METADATA: sha256}
        try:
            # GCS shows the object only once the (resumable, for large files) upload is finalised.
            if path is not None:
                blob.upload_from_filename(str(path))
                size = path.stat().st_size
            else:
                assert data is not None
                blob.upload_from_string(data)
                size = len(data)
        except self._failures as exc:
            raise self._fail(f"upload of {key} failed for", exc) from None
        if progress:
            progress(size)

    def modified(self, key: str) -> datetime:
        try:
            blob = self._bucket.get_blob(key)
        except self._failures as exc:
            raise self._fail(f"cannot read metadata of {key} in", exc) from None
        if blob is None or blob.updated is None:
            raise StoreError(f"gs://{self.uri.bucket}/{key} vanished after its upload")
        return blob.updated
