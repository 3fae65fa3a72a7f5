"""A node-local model cache: each published version fetched once per node, checked against the SHA-256 that
`tritonfleet models sync` stores with every object, and shared by every Triton replica on the node.

Run by the prefetch DaemonSet on every GPU node of a cached deployment's pool (docs/serving.md "Node-local model
cache"), which keeps the deployment's view published and re-checks the bucket every `--every` seconds:
    python -m tritonfleet.models.node_cache s3://BUCKET/PREFIX --cache /cache --publish NAMESPACE.RELEASE --every 60
or once, into a view folder of its own:
    python -m tritonfleet.models.node_cache s3://BUCKET/PREFIX --cache /cache --view /models

The cache lives on the node's instance store / local SSD (a hostPath). Under `--cache`:
    entries/<model>/<group>@<digest>/   complete entries: a model's root files (config.pbtxt, ...) or one version
    partial/                            fills in progress, never served; renamed into entries/ once verified
    locks/                              one flock per entry: two fills starting together fetch it once
    views/<key>/v-<n>/                  a published view: links into entries, and COMPLETE, written last
    views/<key>/current                 a link to the newest complete view, swapped atomically (rename)
    views/<key>/FILLING                 touched while a fill runs: Triton's start waits for it (a fresh one only)
An entry's digest is that of its published manifest (each file's path, size and SHA-256), so a new version or a
republished root is a new entry and never overwrites one a running replica reads. Links are relative, so a view
reads the same wherever the cache is mounted (Triton's pods mount it read-only elsewhere).

A view is the replica's repository: per model, links to its root entry's files and to the served versions' entries
(the config's version policy, plus any pinned with `--version MODEL=N`). Every check reads the bucket's listing and
the objects' checksums (no object bytes when the node holds the version), verifies each cached file against them
(once per process for a published view's entries), and refetches an entry that is partial or corrupted.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import hashlib
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tritonfleet.core.model_names import version_number
from tritonfleet.core.object_store import RepositoryUri, Store, StoreError, open_store

CONFIG_FILE = "config.pbtxt"
MANIFEST = ".manifest.json"  # inside a complete entry: what it was verified against
ROOT_GROUP = "root"
# Kept free on the cache's disk beyond what an entry needs: the kubelet evicts pods below its own threshold.
FREE_MARGIN_BYTES = 2**30
GIB = 2**30
# A published view's files, as Triton's start (charts/triton-inference-server/files/model_cache_start.sh) reads them.
COMPLETE = "COMPLETE"  # inside views/<key>/v-<n>/: the repository it mirrors, on its first line; touched each check
CURRENT = "current"
FILLING = "FILLING"
HEARTBEAT_SECONDS = 10
# Published views kept per key: the current one and the one before it (a replica that started on it may still read
# it). Entries no kept view links to are removed.
KEPT_VIEWS = 2


class CacheError(Exception):
    """The cache cannot serve the repository; the message says why and how to fix it."""


@dataclass(frozen=True)
class Published:
    relative: str  # path under the model's folder: "config.pbtxt", "1/model.py"
    size: int
    sha256: str


@dataclass(frozen=True)
class Group:
    """Files cached and verified together: a model's root files, or one of its versions."""

    model: str
    name: str  # ROOT_GROUP or the version number
    files: tuple[Published, ...]

    @property
    def digest(self) -> str:
        lines = "".join(f"{f.relative}\t{f.size}\t{f.sha256}\n" for f in self.files)
        return hashlib.sha256(lines.encode()).hexdigest()[:16]

    @property
    def entry(self) -> str:
        return f"{self.model}/{self.name}@{self.digest}"

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


@dataclass
class Outcome:
    fetched: list[str]  # entries filled from the bucket on this run
    reused: list[str]  # entries the node already held, verified
    discarded: list[str]  # partial or corrupted entries removed and fetched again


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _published(
    store: Store, uri: RepositoryUri, checksums: dict[tuple[str, str], str] | None = None
) -> dict[str, dict[str, Published]]:
    """model -> relative path -> its published size and SHA-256 (HEAD requests; no object bytes). `checksums`:
    (key, ETag or generation) -> SHA-256 read in an earlier round; an object is immutable under its token, so a
    repeated check asks the store only about objects written since."""
    models: dict[str, dict[str, Published]] = {}
    for key, remote in sorted(store.list(uri.prefix).items()):
        relative = key[len(uri.prefix) :]
        model, _, inner = relative.partition("/")
        if not inner or key.endswith("/"):
            continue
        if any(segment in ("", ".", "..") for segment in relative.split("/")):
            raise CacheError(
                f"{uri}{relative} is no path inside the repository (an empty, '.' or '..' segment), so it cannot be "
                "cached safely. Fix: remove it from the bucket and publish with `tritonfleet models sync`"
            )
        remembered = (key, remote.token) if remote.token and checksums is not None else None
        sha = remote.sha256 or (checksums.get(remembered) if remembered else None) or store.sha256(key)
        if remembered and sha:
            checksums[remembered] = sha
        if sha is None:
            raise CacheError(
                f"{uri}{relative} carries no published SHA-256, so a cached copy could not be verified. Fix: publish "
                "the repository with `tritonfleet models sync`, or turn the node-local model cache off"
            )
        models.setdefault(model, {})[inner] = Published(inner, remote.size, sha)
    return models


def _groups(model: str, files: dict[str, Published], served: list[int]) -> list[Group]:
    root = tuple(f for rel, f in files.items() if version_number(rel.split("/")[0]) is None or "/" not in rel)
    groups = [Group(model, ROOT_GROUP, root)]
    for version in served:
        own = tuple(f for rel, f in files.items() if "/" in rel and version_number(rel.split("/")[0]) == version)
        if own:
            groups.append(Group(model, str(version), own))
    return groups


def _served(config: bytes, files: dict[str, Published], pinned: int | None = None) -> list[int]:
    """The versions the published config.pbtxt serves, and the one the deployment pins (modelVersions) if present."""
    from tritonfleet.models.sync import served_by_config

    present = {v for rel in files if "/" in rel and (v := version_number(rel.split("/")[0])) is not None}
    served = set(served_by_config(config, present) or [])
    if pinned is not None and pinned in present:
        served.add(pinned)
    return sorted(served)


def _verified(path: Path, group: Group) -> bool:
    """A complete entry whose every file has the published size and SHA-256 (a partial one has no manifest)."""
    try:
        recorded = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    if recorded != [[f.relative, f.size, f.sha256] for f in group.files]:
        return False
    for f in group.files:
        local = path / _within(group, f)
        try:
            if local.stat().st_size != f.size or sha256_file(local) != f.sha256:
                return False
        except OSError:
            return False
    return True


def _within(group: Group, f: Published) -> str:
    """A file's path inside its entry: a version's files without the version folder."""
    return f.relative if group.name == ROOT_GROUP else f.relative.split("/", 1)[1]


@contextmanager
def _locked(cache: Path, group: Group) -> Iterator[None]:
    locks = cache / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{group.model}@{group.name}@{group.digest}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _check_room(cache: Path, group: Group) -> None:
    free = shutil.disk_usage(cache).free
    if group.size + FREE_MARGIN_BYTES > free:
        raise CacheError(_full_message(cache, group, free))


def _full_message(cache: Path, group: Group, free: int) -> str:
    return (
        f"the node-local model cache at {cache} has {free / GIB:.1f} GiB free, but {group.model} "
        f"{'root files' if group.name == ROOT_GROUP else 'version ' + group.name} needs {group.size / GIB:.1f} GiB "
        f"plus a {FREE_MARGIN_BYTES / GIB:.0f} GiB margin. Fix: remove old entries under {cache}/entries, or give the "
        "pool an instance type with more instance store / local SSD (docs/serving.md \"Node-local model cache\")"
    )


class _Hashing:
    """A write-only file that hashes what it writes: a fill reads each byte from the bucket once and not again."""

    def __init__(self, handle):
        self.handle, self.digest, self.size = handle, hashlib.sha256(), 0

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.handle.write(data)


def _fill(store: Store, uri: RepositoryUri, cache: Path, group: Group, target: Path) -> None:
    partial = cache / "partial" / f"{group.model}@{group.name}@{group.digest}.{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        for f in group.files:
            local = partial / _within(group, f)
            local.parent.mkdir(parents=True, exist_ok=True)
            with local.open("wb") as handle:
                sink = _Hashing(handle)
                store.download(uri.key(f"{group.model}/{f.relative}"), sink)
            if sink.size != f.size or sink.digest.hexdigest() != f.sha256:
                raise CacheError(
                    f"{uri}{group.model}/{f.relative} does not match its published SHA-256 (changed while it was "
                    "read, or corrupted in transit); nothing was cached. Run again; if it persists, republish it "
                    "with `tritonfleet models sync`"
                )
        (partial / MANIFEST).write_text(json.dumps([[f.relative, f.size, f.sha256] for f in group.files]))
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(partial, target)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise CacheError(_full_message(cache, group, shutil.disk_usage(cache).free)) from None
        raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _ensure(
    store: Store, uri: RepositoryUri, cache: Path, group: Group, outcome: Outcome, trusted: set[str] | None = None
) -> Path:
    target = cache / "entries" / group.entry
    with _locked(cache, group):
        if trusted is not None and group.entry in trusted and (target / MANIFEST).is_file():
            outcome.reused.append(group.entry)  # verified by this process before; entries never change in place
            return target
        if _verified(target, group):
            if trusted is not None:
                trusted.add(group.entry)
            outcome.reused.append(group.entry)
            return target
        if target.exists():
            outcome.discarded.append(group.entry)
            shutil.rmtree(target)
        _check_room(cache, group)
        _fill(store, uri, cache, group, target)
        outcome.fetched.append(group.entry)
        if trusted is not None:
            trusted.add(group.entry)
    return target


def _link_view(view: Path, model: str, root: Path, versions: dict[str, Path]) -> None:
    folder = view / model
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for item in root.iterdir():
        if item.name != MANIFEST:
            (folder / item.name).symlink_to(_relative(item, folder))
    for version, path in versions.items():
        (folder / version).symlink_to(_relative(path, folder), target_is_directory=True)


def _relative(target: Path, folder: Path) -> str:
    return os.path.relpath(os.path.abspath(target), os.path.abspath(folder))


def prepare(
    store: Store,
    uri: RepositoryUri,
    cache: Path,
    view: Path,
    pinned: Mapping[str, int] | None = None,
    trusted: set[str] | None = None,
    checksums: dict[tuple[str, str], str] | None = None,
) -> Outcome:
    """Make `view` a repository of the bucket's published models, every file from a verified node-local entry.
    `pinned`: model -> a version the deployment pins (cached besides the served ones); `trusted`: entries this process
    verified before (not hashed again) and `checksums` the objects' published SHA-256 it read before, both grown by
    this call."""
    outcome = Outcome([], [], [])
    for model, files in _published(store, uri, checksums).items():
        if CONFIG_FILE not in files:
            continue  # not a model folder Triton would load
        groups = _groups(model, files, [])
        root = _ensure(store, uri, cache, groups[0], outcome, trusted)
        served = _served((root / CONFIG_FILE).read_bytes(), files, (pinned or {}).get(model))
        versions = {g.name: _ensure(store, uri, cache, g, outcome, trusted) for g in _groups(model, files, served)[1:]}
        _link_view(view, model, root, versions)
    return outcome


@contextmanager
def _heartbeat(marker: Path) -> Iterator[None]:
    """Touch `marker` every HEARTBEAT_SECONDS while the block runs, and remove it after: a starting replica waits for
    a fill only while its marker is fresh (a fill whose process died stops holding replicas back)."""
    marker.parent.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            marker.touch()
            stop.wait(HEARTBEAT_SECONDS)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        marker.unlink(missing_ok=True)


@contextmanager
def _views_locked(cache: Path, exclusive: bool) -> Iterator[bool]:
    """Publishing holds it shared, pruning exclusive: no entry is removed between its fill and its view's link.
    Pruning does not wait (another deployment's fill on the node may hold it for long): it yields False when busy."""
    locks = cache / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / "views.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
        except BlockingIOError:
            yield False
            return
        yield True


def _views(folder: Path) -> list[Path]:
    """A key's published views, oldest first."""
    found = [p for p in folder.glob("v-*") if p.is_dir() and p.name[2:].isdigit()]
    return sorted(found, key=lambda p: int(p.name[2:]))


def _linked_entries(view: Path) -> set[Path]:
    """The entries a view links to: a version's link names its entry, a root file's link a file of its root entry."""
    entries = set()
    for link in view.glob("*/*"):
        if link.is_symlink():
            target = Path(os.path.realpath(link))
            entries.add(target if version_number(link.name) is not None else target.parent)
    return entries


def publish(
    store: Store,
    uri: RepositoryUri,
    cache: Path,
    key: str,
    pinned: Mapping[str, int] | None = None,
    trusted: set[str] | None = None,
    checksums: dict[tuple[str, str], str] | None = None,
) -> Outcome:
    """Bring views/<key>/current up to the bucket: a new view when an entry changed, else the current one touched as
    checked now. A view is complete (COMPLETE written last) before `current` points at it."""
    folder = cache / "views" / key
    with _views_locked(cache, exclusive=False), _heartbeat(folder / FILLING):
        views = _views(folder)
        number = int(views[-1].name[2:]) + 1 if views else 1
        staging = folder / f"v-{number}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            outcome = prepare(store, uri, cache, staging, pinned, trusted, checksums)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        current = folder / CURRENT
        unchanged = current.exists() and _same_view(staging, current.resolve())
        if unchanged:
            shutil.rmtree(staging)
            (current / COMPLETE).touch()
            return outcome
        (staging / COMPLETE).write_text(f"{uri}\n")
        swap = folder / f".{CURRENT}.{os.getpid()}"
        swap.unlink(missing_ok=True)
        swap.symlink_to(staging.name, target_is_directory=True)
        os.rename(swap, current)  # atomic: a reader sees the old view or the new one
    return outcome


def _same_view(a: Path, b: Path) -> bool:
    def links(view: Path) -> dict[str, str]:
        return {str(p.relative_to(view)): os.readlink(p) for p in view.glob("*/*") if p.is_symlink()}

    return (b / COMPLETE).is_file() and links(a) == links(b)


def prune(cache: Path) -> list[str]:
    """Remove every key's views but the newest KEPT_VIEWS, then the entries no remaining view links to; returns the
    entries removed (none while a publish on the node holds the lock: the next round prunes)."""
    removed: list[str] = []
    with _views_locked(cache, exclusive=True) as locked:
        if not locked:
            return removed
        kept: set[Path] = set()
        for folder in (cache / "views").glob("*"):
            views = _views(folder)
            for old in views[:-KEPT_VIEWS]:
                shutil.rmtree(old)
            for view in views[-KEPT_VIEWS:]:
                kept |= _linked_entries(view)
        for entry in (cache / "entries").glob("*/*"):
            if entry.is_dir() and entry.resolve() not in kept:
                shutil.rmtree(entry)
                removed.append(str(entry.relative_to(cache / "entries")))
    return removed


def keep_published(
    store: Store, uri: RepositoryUri, cache: Path, key: str, every: float, pinned: Mapping[str, int] | None = None,
    rounds: int | None = None,
) -> None:
    """The DaemonSet's loop: publish, prune, sleep `every` seconds; `rounds` bounds it (tests). A failed round is
    reported and retried at the next one: the view of the last good round stays (a replica falls back to the bucket
    only when it goes stale)."""
    trusted: set[str] = set()
    checksums: dict[tuple[str, str], str] = {}
    done = 0
    while rounds is None or done < rounds:
        try:
            outcome = publish(store, uri, cache, key, pinned, trusted, checksums)
            removed = prune(cache)
            trusted.difference_update(removed)
            print(json.dumps({"view": key, "fetched": outcome.fetched, "discarded": outcome.discarded,
                              "reused": len(outcome.reused), "pruned": removed}), flush=True)  # fmt: skip
        except (CacheError, StoreError) as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
        done += 1
        if rounds is None or done < rounds:
            time.sleep(every)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repository", help="the published repository: s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")
    parser.add_argument("--cache", required=True, type=Path, help="the node-local cache folder (a hostPath)")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--view", type=Path, help="once: the replica's repository folder")
    target.add_argument("--publish", metavar="KEY", help="keep views/KEY/current published (the DaemonSet)")
    parser.add_argument("--every", type=float, default=60, help="--publish: seconds between checks of the bucket")
    parser.add_argument("--version", action="append", default=[], metavar="MODEL=N", help="a version to cache besides "
                        "the served ones (the deployment's modelVersions); repeat per model")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        pinned = _pinned(args.version)
        uri = RepositoryUri.parse(args.repository)
        if args.publish:
            keep_published(open_store(uri), uri, args.cache, args.publish, args.every, pinned)
            return 0
        outcome = prepare(open_store(uri), uri, args.cache, args.view, pinned)
    except (CacheError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"fetched": outcome.fetched, "reused": outcome.reused, "discarded": outcome.discarded}))
    return 0


def _pinned(pairs: list[str]) -> dict[str, int]:
    pinned = {}
    for pair in pairs:
        model, _, version = pair.partition("=")
        if not model or not version.isdigit():
            raise CacheError(f"--version {pair!r} is not MODEL=N (a model name and a version number), such as resnet=2")
        pinned[model] = int(version)
    return pinned


if __name__ == "__main__":
    sys.exit(main())
