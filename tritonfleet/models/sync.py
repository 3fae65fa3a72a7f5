"""Publish a validated model repository to a bucket so that Triton never sees a half-uploaded version.

The scheme (docs/models.md explains it in full):
1. Only files whose SHA-256 differs from the one stored with the object are uploaded (which also makes a re-run
   after an interruption resume where it stopped).
2. A version folder the bucket already serves is immutable: changing its files is refused; publish a new number.
3. Per model, new and changed version files go first (the file the backend loads last), then files at the model
   root, and `config.pbtxt` last. The uploaded config.pbtxt pins `version_policy { specific { versions } }` to the
   versions the local policy selects, so Triton, whatever its model control mode, loads only versions whose files
   were complete before that single PUT made them visible.
4. The new config.pbtxt must carry a later (whole-second) Last-Modified than every file uploaded before it, or
   Triton's poll mode, which compares modification times, could miss the switch; sync re-uploads it if not.
5. What the plan compared is what gets published: every write is conditional on the object being as the plan saw
   it (absent, or the same ETag/generation), a local file is hashed as it is sent and refused if it changed, and
   before the config switch the objects of the versions it names are listed again. A colleague's publish between
   plan and execute stops the sync instead of being overwritten.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format

from tritonfleet.core.config.problems import printable
from tritonfleet.core.model_names import version_number
from tritonfleet.core.object_store import (
    ConcurrentChange,
    ContentChanged,
    RemoteObject,
    RepositoryUri,
    Source,
    Store,
    StoreError,
    open_regular,
)
from tritonfleet.models.validate import CONFIG_FILE, Model, Report, parse_config

PUBLISHED_HEADER = (
    "# Published by `tritonfleet models sync`. version_policy pins the versions whose upload completed before this\n"
    "# file was written; see docs/models.md. Edit the source config.pbtxt, not this copy.\n"
)
CONFIG_RETRIES = 4  # the store's clock may be ahead of ours by a fraction of a second


class SyncError(Exception):
    """The repository could not be published; the message says what the bucket still serves and how to resume."""


@dataclass(frozen=True)
class Upload:
    relative: str  # path under the repository root, '/'-separated: "add/1/model.py"
    size: int
    sha256: str
    reason: str  # "new" or "changed"
    path: Path | None = None  # a local file, or
    data: bytes | None = None  # generated content (the published config.pbtxt)
    expect: str | None = None  # the object's token when the plan compared it (None: absent); the write requires it

    @property
    def source(self) -> Source:
        return Source(self.sha256, self.size, path=self.path, data=self.data)


@dataclass
class ModelPlan:
    model: str
    uploads: list[Upload]  # in publish order; config.pbtxt, when it changes, is last
    unchanged: int
    served_before: list[int] | None  # versions the bucket's config.pbtxt serves; None when the model is not published
    served_after: list[int]
    remote: dict[str, str | None] = field(default_factory=dict)  # the model's objects when planned: relative -> token
    held_after: list[int] = field(default_factory=list)  # version folders the bucket holds after the sync

    @property
    def published_unserved(self) -> list[int]:
        """Versions in the bucket that Triton is not told to serve: published, not live (a rollout pins them)."""
        return [v for v in self.held_after if v not in self.served_after]


@dataclass
class SyncPlan:
    uri: RepositoryUri
    models: list[ModelPlan]
    remote_only: list[str] = field(default_factory=list)  # model folders in the bucket but not in DIR: left alone

    @property
    def uploads(self) -> list[Upload]:
        return [u for m in self.models for u in m.uploads]

    @property
    def total_bytes(self) -> int:
        return sum(u.size for u in self.uploads)


def sha256_file(path: Path) -> tuple[str, int]:
    """The SHA-256 and size of the bytes read, in one pass."""
    digest, size = hashlib.sha256(), 0
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def published_config(model: Model) -> bytes:
    """The config.pbtxt sync uploads: the model's own, with version_policy pinned to the versions it serves."""
    config = type(model.config)()
    config.CopyFrom(model.config)
    config.version_policy.specific.versions[:] = model.served_versions
    return (PUBLISHED_HEADER + text_format.MessageToString(config)).encode()


def pinned_config(model: Model, version: int) -> bytes:
    """A deployment's custom configuration of a model (configs/<name>.pbtxt, read by --model-config-name): the
    model's own, serving the pinned version alone."""
    config = type(model.config)()
    config.CopyFrom(model.config)
    config.version_policy.specific.versions[:] = [version]
    return (PUBLISHED_HEADER + text_format.MessageToString(config)).encode()


def _publish_order(model: Model, relative: str) -> tuple:
    """Version folders first (ascending; the backend's entry file last in each), then model-root files."""
    parts = relative.split("/")[1:]  # below the model folder
    version = version_number(parts[0]) if len(parts) > 1 else None
    if version is None:
        return (1, 0, 0, relative)
    in_entry = model.entry is not None and "/".join(parts[1:]).startswith(model.entry)
    return (0, version, int(in_entry), relative)


def served_by_config(text: bytes | None, remote_versions: Iterable[int]) -> list[int] | None:
    """Versions a bucket's config.pbtxt makes Triton serve; all remote versions when it cannot be read."""
    if text is None:
        return None
    present = sorted(set(remote_versions))
    try:
        config = parse_config(text.decode())
    except (text_format.ParseError, UnicodeDecodeError):
        return present
    policy = config.version_policy
    choice = policy.WhichOneof("policy_choice")
    if choice == "specific":
        return sorted(set(policy.specific.versions))
    if choice == "all":
        return present
    count = policy.latest.num_versions if choice == "latest" else 1
    return present[-count:] if count > 0 else []


def _ordered_models(models: list[Model]) -> list[Model]:
    """Ensembles last, so the models they call are published before them."""
    return sorted(models, key=lambda m: (m.backend == "ensemble", m.name))


def plan_sync(
    report: Report, store: Store, live: bool = True, pins: dict[str, int] | None = None, pin_config: str | None = None
) -> SyncPlan:
    """Compare the local repository with the bucket; raise SyncError when a served version would change.

    With `live` False, a model the bucket already serves keeps its config.pbtxt (and so the versions Triton serves):
    new version folders are uploaded, not switched to; a deployment's modelVersions pin, rolled out, serves them.
    `pins` (model -> version) with `pin_config` add each pinned model's configs/<pin_config>.pbtxt after its version
    files (tritonfleet.core.rollout.pinned_config_name)."""
    uri = store.uri
    remote = store.list(uri.prefix)
    remote_models = {key[len(uri.prefix) :].split("/")[0] for key in remote if "/" in key[len(uri.prefix) :]}
    plans: list[ModelPlan] = []
    conflicts: list[str] = []

    for model in _ordered_models(report.models):
        model_remote = {k[len(uri.prefix) :]: v for k, v in remote.items() if k.startswith(uri.key(model.name + "/"))}
        remote_versions = {
            number
            for rel in model_remote
            if len(rel.split("/")) > 2 and (number := version_number(rel.split("/")[1])) is not None
        }
        config_rel = f"{model.name}/{CONFIG_FILE}"
        served_before = served_by_config(
            store.read(uri.key(config_rel)) if config_rel in model_remote else None, remote_versions
        )
        uploads: list[Upload] = []
        unchanged = 0
        local_rels: set[str] = set()
        for below, path in sorted(model.files.items()):
            relative = f"{model.name}/{below}"
            if relative == config_rel:
                continue
            local_rels.add(relative)
            digest, size = sha256_file(path)
            remote_object = model_remote.get(relative)
            state = _state(store, uri.key(relative), remote_object, size, digest)
            if state == "unchanged":
                unchanged += 1
                continue
            version = _version_of(relative)
            if served_before and version in served_before:
                conflicts.append(f"{relative}: {state} in version {version}, which the bucket serves")
            uploads.append(Upload(relative, size, digest, state, path=path, expect=_token(remote_object)))
        for relative in sorted(set(model_remote) - local_rels - {config_rel}):
            version = _version_of(relative)
            shown = printable(relative)  # a key someone else may have written
            if served_before and version in served_before:
                if version in model.versions:
                    conflicts.append(f"{shown}: in served version {version} in the bucket but not in {model.directory}")
            elif version in model.served_versions:
                # Left by an interrupted run (or another publisher): sync never deletes, and the switch would serve it.
                conflicts.append(
                    f"{shown}: in the bucket but not in {model.directory}; version {version} would be served with it "
                    "(remove it from the bucket, or publish under a new version number)"
                )

        uploads.sort(key=lambda u: _publish_order(model, u.relative))
        if pins and pin_config and model.name in pins:
            relative = f"{model.name}/configs/{pin_config}.pbtxt"
            pinned = _generated_upload(store, relative, pinned_config(model, pins[model.name]), model_remote)
            if pinned is None:
                unchanged += 1
            else:
                uploads.append(pinned)
        held = sorted(remote_versions | {v for u in uploads if (v := _version_of(u.relative)) is not None})
        tokens = {relative: remote_object.token for relative, remote_object in model_remote.items()}
        if not live and served_before is not None:
            plans.append(ModelPlan(model.name, uploads, unchanged, served_before, served_before, tokens, held))
            continue
        config = _generated_upload(store, config_rel, published_config(model), model_remote)
        if config is None:
            unchanged += 1
        else:
            uploads.append(config)
        plans.append(ModelPlan(model.name, uploads, unchanged, served_before, model.served_versions, tokens, held))

    if conflicts:
        listed = "\n".join(f"  - {c}" for c in conflicts)
        raise SyncError(
            "refusing to change versions Triton may be serving (a version is immutable once published; "
            f"copy the change into a new version folder instead):\n{listed}"
        )
    local_names = {m.name for m in report.models}
    return SyncPlan(uri, plans, sorted(remote_models - local_names))


def _version_of(relative: str) -> int | None:
    """The version folder of a repository path ('add/3/model.py' -> 3), None for a model-root file."""
    parts = relative.split("/")
    return version_number(parts[1]) if len(parts) > 2 else None


def _generated_upload(store: Store, relative: str, data: bytes, remote: dict[str, RemoteObject]) -> Upload | None:
    """The upload of a file sync writes itself (a config.pbtxt), or None when the bucket holds these bytes already."""
    digest = hashlib.sha256(data).hexdigest()
    state = _state(store, store.uri.key(relative), remote.get(relative), len(data), digest)
    if state == "unchanged":
        return None
    return Upload(relative, len(data), digest, state, data=data, expect=_token(remote.get(relative)))


def _token(remote: RemoteObject | None) -> str | None:
    return None if remote is None else remote.token


def _state(store: Store, key: str, remote: RemoteObject | None, size: int, digest: str) -> str:
    if remote is None:
        return "new"
    if remote.size != size:
        return "changed"
    known = remote.sha256 if remote.sha256 is not None else store.sha256(key)
    return "unchanged" if known == digest else "changed"


def execute(
    plan: SyncPlan,
    store: Store,
    *,
    progress: Callable[[int], None] | None = None,
    on_file: Callable[[Upload], None] | None = None,
    wait: Callable[[], None] | None = None,
) -> list[str]:
    """Upload in publish order; returns the models published. On failure, SyncError says what is still served."""
    published: list[str] = []
    for model in plan.models:
        if not model.uploads:
            continue
        last_payload: str | None = None
        written: dict[str, str | None] = {}
        try:
            for upload in model.uploads:
                if on_file:
                    on_file(upload)
                key = plan.uri.key(upload.relative)
                if upload.data is not None and upload.relative.endswith(f"/{CONFIG_FILE}"):
                    _check_switch_inputs(store, plan.uri, model, written)
                    _publish_config(store, key, upload, last_payload, progress, wait or _wait_for_next_second)
                else:
                    written[upload.relative] = store.upload(key, upload.source, expect=upload.expect, progress=progress)
                    last_payload = key
        except (ConcurrentChange, ContentChanged) as exc:
            done = f" Published in this run: {', '.join(published)}." if published else ""
            what = "the bucket changed" if isinstance(exc, ConcurrentChange) else "a local file changed"
            raise SyncError(
                f"{exc}\nModel '{model.model}' was not published by this run: {what} after the plan compared them, and "
                f"sync never publishes what it did not compare.{done}\nRun the command again (--dry-run first) to "
                "compare anew; another publisher's versions are then kept, not overwritten."
            ) from None
        except StoreError as exc:
            served = "nothing" if model.served_before is None else f"versions {model.served_before}"
            done = f" Published in this run: {', '.join(published)}." if published else ""
            raise SyncError(
                f"{exc}\nModel '{model.model}' was not published; the bucket still serves {served} for it.{done}\n"
                "Run the same command again to resume: files already uploaded are not sent twice."
            ) from None
        published.append(model.model)
    return published


def _check_switch_inputs(store: Store, uri: RepositoryUri, model: ModelPlan, written: dict[str, str | None]) -> None:
    """Before config.pbtxt names the versions: their files (and the model-root files) must be exactly what the plan
    saw plus what this run wrote. A file another publisher wrote since, even one not in this run's uploads, stops it."""
    expected = {**model.remote, **written}
    prefix = uri.key("")
    now = {key[len(prefix) :]: found.token for key, found in store.list(uri.key(model.model + "/")).items()}
    config_rel = f"{model.model}/{CONFIG_FILE}"

    def named(relative: str) -> bool:
        parts = relative.split("/")
        return relative != config_rel and (len(parts) < 3 or version_number(parts[1]) in model.served_after)

    differing = sorted(r for r in set(expected) | set(now) if named(r) and expected.get(r, "absent") != now.get(r, "absent"))
    if differing:
        more = f" (and {len(differing) - 1} more)" if len(differing) > 1 else ""
        raise ConcurrentChange(
            f"{printable(uri.key(differing[0]))}{more} changed since this sync compared the bucket (another publisher?)"
        )


def _wait_for_next_second() -> None:
    time.sleep(1.01 - time.time() % 1.0)


def _publish_config(store: Store, key: str, upload: Upload, after: str | None, progress, wait: Callable[[], None]) -> None:
    """Upload config.pbtxt so its Last-Modified second is later than that of the files uploaded before it. The first
    write requires the config the plan read; a repeat requires the one this run just wrote."""
    floor = int(store.modified(after).timestamp()) if after else None
    expect = upload.expect
    for attempt in range(CONFIG_RETRIES):
        expect = store.upload(key, upload.source, expect=expect, progress=None if attempt else progress)
        if floor is None or int(store.modified(key).timestamp()) > floor:
            return
        wait()
    raise StoreError(f"{key} keeps the same Last-Modified second as the files before it; Triton's poll mode could miss it")
