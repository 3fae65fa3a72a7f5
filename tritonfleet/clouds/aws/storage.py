"""The S3 store a model repository is published to (tritonfleet/core/object_store.py's Store), through boto3.

Credentials come only from boto3's standard chain (environment, profile, SSO, IRSA, instance role); the endpoint
override is boto3's own, AWS_ENDPOINT_URL(_S3). boto3 is imported when a store is opened, never at module load.
"""

from __future__ import annotations

import base64
import hashlib
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

S3_PART_BYTES = 8 * MIB  # boto3's default multipart threshold and part size
S3_MAX_PARTS = 10_000  # https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html (2026-12-05)
S3_PRECONDITION_CODES = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")


def sha256_checksum(data: bytes) -> str:
    """The base64 SHA-256 S3 takes as x-amz-checksum-sha256."""
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


class S3Store:
    """S3 through boto3: conditional writes (If-None-Match / If-Match) and a SHA-256 checksum S3 verifies on every
    request body (x-amz-checksum-sha256; for a multipart upload, on every part), per
    https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html and
    https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html (2026-12-05)."""

    def __init__(self, uri: RepositoryUri, client=None, part_bytes: int = S3_PART_BYTES, transfer_config=None):
        import boto3
        import boto3.exceptions
        import botocore.exceptions as errors

        self.uri = uri
        self._errors = errors
        self._failures = (errors.BotoCoreError, errors.ClientError, boto3.exceptions.S3UploadFailedError)
        self._client = client or boto3.client("s3")
        self.part_bytes = part_bytes
        self.transfer_config = transfer_config  # boto3 TransferConfig of downloads; None: boto3's (parallel ranges)

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
            if code in S3_PRECONDITION_CODES:
                return ConcurrentChange(f"{action} {where}: someone else wrote it since this sync compared the bucket")
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
                    found[item["Key"]] = RemoteObject(size=item["Size"], token=item.get("ETag"))
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

    def download(self, key: str, sink: Sink) -> None:
        """Stream an object into `sink` (a node-local cache fill: objects far larger than memory)."""
        try:
            self._client.download_fileobj(self.uri.bucket, key, sink, Config=self.transfer_config)
        except self._failures as exc:
            raise self._fail(f"cannot read {key} from", exc) from None

    def upload(self, key: str, source: Source, *, expect: str | None, progress: Progress | None = None) -> str:
        condition = {"IfNoneMatch": "*"} if expect is None else {"IfMatch": expect}
        try:
            if source.size <= self.part_bytes:
                body = source.read()
                response = self._client.put_object(
                    Bucket=self.uri.bucket, Key=key, Body=body, Metadata={SHA256_METADATA: source.sha256},
                    ChecksumAlgorithm="SHA256", ChecksumSHA256=sha256_checksum(body), **condition,
                )
                if progress:
                    progress(len(body))
            else:
                response = self._multipart(key, source, condition, progress)
        except self._failures as exc:
            raise self._fail(f"upload of {key} failed for", exc) from None
        return response["ETag"]

    def _multipart(self, key: str, source: Source, condition: dict, progress: Progress | None) -> dict:
        """Parts checked by S3 one by one; the object appears at completion, which happens only once the whole
        file was read and hashed to the planned SHA-256 (else the upload is aborted and nothing appears)."""
        part_bytes = max(self.part_bytes, -(-source.size // S3_MAX_PARTS))
        bucket = self.uri.bucket
        upload_id = self._client.create_multipart_upload(
            Bucket=bucket, Key=key, Metadata={SHA256_METADATA: source.sha256}, ChecksumAlgorithm="SHA256"
        )["UploadId"]
        parts = []
        try:
            for number, body in enumerate(source.chunks(part_bytes), start=1):
                part_checksum = sha256_checksum(body)
                sent = self._client.upload_part(
                    Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body,
                    ChecksumAlgorithm="SHA256", ChecksumSHA256=part_checksum,
                )
                parts.append({"PartNumber": number, "ETag": sent["ETag"], "ChecksumSHA256": part_checksum})
                if progress:
                    progress(len(body))
            return self._client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}, **condition
            )
        except BaseException:
            try:
                self._client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
            except self._failures:
                pass  # the bucket's lifecycle rule removes abandoned parts after 7 days
            raise

    def modified(self, key: str) -> datetime:
        try:
            return self._client.head_object(Bucket=self.uri.bucket, Key=key)["LastModified"]
        except self._failures as exc:
            raise self._fail(f"cannot read metadata of {key} in", exc) from None
