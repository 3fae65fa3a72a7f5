"""A node-local model cache: each published version fetched once per node, checked against the SHA-256 that
`tritonfleet models sync` stores with every object, and shared by every Triton replica on the node.

Run before Triton starts (the chart's init container, docs/serving.md "Node-local model cache"):
    python -m tritonfleet.models.node_cache s3://BUCKET/PREFIX --cache /cache --view /models

The cache lives on the node's instance store / local SSD (a hostPath). Under `--cache`:
    entries/<model>/<group>@<digest>/   complete entries: a model's root files (config.pbtxt, ...) or one version
    partial/                            fills in progress, never served; renamed into entries/ once verified
    locks/                              one flock per entry: two replicas starting together fetch it once
An entry's digest is that of its published manifest (each file's path, size and SHA-256), so a new version or a
republished root is a new entry and never overwrites one a running replica reads.

`--view` becomes the replica's repository: per model, links to its root entry's files and to the served versions'
entries. Every start reads the bucket's listing and the objects' checksums (no object bytes when the node holds the
version), verifies each cached file against them, and refetches an entry that is partial or corrupted.
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
from collections.abc import Iterator
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


def _published(store: Store, uri: RepositoryUri) -> dict[str, dict[str, Published]]:
    """model -> relative path -> its published size and SHA-256 (HEAD requests; no object bytes)."""
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
        sha = remote.sha256 or store.sha256(key)
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


def _served(config: bytes, files: dict[str, Published]) -> list[int]:
    from tritonfleet.models.sync import served_by_config

    present = {v for rel in files if "/" in rel and (v := version_number(rel.split("/")[0])) is not None}
    return served_by_config(config, present) or []


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


def _ensure(store: Store, uri: RepositoryUri, cache: Path, group: Group, outcome: Outcome) -> Path:
    target = cache / "entries" / group.entry
    with _locked(cache, group):
        if _verified(target, group):
            outcome.reused.append(group.entry)
            return target
        if target.exists():
            outcome.discarded.append(group.entry)
            shutil.rmtree(target)
        _check_room(cache, group)
        _fill(store, uri, cache, group, target)
        outcome.fetched.append(group.entry)
    return target


def _link_view(view: Path, model: str, root: Path, versions: dict[str, Path]) -> None:
    folder = view / model
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for item in root.iterdir():
        if item.name != MANIFEST:
            (folder / item.name).symlink_to(item)
    for version, path in versions.items():
        (folder / version).symlink_to(path, target_is_directory=True)


def prepare(store: Store, uri: RepositoryUri, cache: Path, view: Path) -> Outcome:
    """Make `view` a repository of the bucket's published models, every file from a verified node-local entry."""
    outcome = Outcome([], [], [])
    for model, files in _published(store, uri).items():
        if CONFIG_FILE not in files:
            continue  # not a model folder Triton would load
        groups = _groups(model, files, [])
        root = _ensure(store, uri, cache, groups[0], outcome)
        served = _served((root / CONFIG_FILE).read_bytes(), files)
        versions = {g.name: _ensure(store, uri, cache, g, outcome) for g in _groups(model, files, served)[1:]}
        _link_view(view, model, root, versions)
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repository", help="the published repository: s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")
    parser.add_argument("--cache", required=True, type=Path, help="the node-local cache folder (a hostPath)")
    parser.add_argument("--view", required=True, type=Path, help="the replica's repository folder (an emptyDir)")
    args = parser.parse_args(argv)
    try:
        uri = RepositoryUri.parse(args.repository)
        outcome = prepare(open_store(uri), uri, args.cache, args.view)
    except (CacheError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"fetched": outcome.fetched, "reused": outcome.reused, "discarded": outcome.discarded}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
