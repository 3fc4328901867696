"""The one repository miner writes: a new one, made by ``miner materialize`` from a fixture's base
(never the repository it mines)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from miner.core.errors import MinerError, MissingObjectError
from miner.git.env import GIT_CONFIG, git_env
from miner.git.reader import Repo

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class NewRepo:
    """A repository miner creates and writes (``miner materialize``); never the one it mines.

    Its git runs without the user's global or system config, so no hook, template, signing
    or fetch setting can add anything to it.
    """

    def __init__(self, path: Path, branch: str) -> None:
        self.path = path
        self.git_dir = path / ".git"
        self._env = {**git_env(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        proc = subprocess.run(
            ["git", "init", "-q", "--template=", f"--initial-branch={branch}", str(path)], capture_output=True, env=self._env
        )
        if proc.returncode != 0:
            raise MinerError(f"git init failed at {path}: {proc.stderr.decode('utf-8', 'replace').strip()}")
        # Before any ref exists: no reflog may ever record one.
        self.run("config", "core.logAllRefUpdates", "false")
        self.run("config", "gc.auto", "0")

    def run(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
        cmd = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.path}", *GIT_CONFIG, *args]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, env={**self._env, **(env or {})})
        if proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise MinerError(f"git {args[0]} failed in {self.path}: {message[-1] if message else proc.returncode}")
        return proc.stdout

    def receive(self, source: Repo, roots: list[str]) -> None:
        """Copy into this repository exactly the objects reachable from ``roots`` in ``source``."""
        pack = subprocess.Popen(
            source._git("pack-objects", "--revs", "--stdout", "-q"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_env(),
        )
        index = subprocess.Popen(
            ["git", f"--git-dir={self.git_dir}", "index-pack", "--stdin"],
            stdin=pack.stdout,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=self._env,
        )
        assert pack.stdin is not None and pack.stdout is not None
        pack.stdout.close()  # index-pack holds the only read end now
        pack.stdin.write("".join(r + "\n" for r in roots).encode())
        pack.stdin.close()
        _, index_err = index.communicate()
        pack_err = pack.stderr.read() if pack.stderr else b""
        if pack.wait() > 0:
            raise MissingObjectError(
                f"cannot copy history from {source.path}: {pack_err.decode('utf-8', 'replace').strip() or 'pack-objects failed'}"
            )
        if index.returncode != 0 or pack.returncode != 0:
            raise MinerError(f"git index-pack failed in {self.path}: {index_err.decode('utf-8', 'replace').strip()}")

    def write_blob(self, data: bytes) -> str:
        return self.run("hash-object", "-w", "--stdin", stdin=data).decode().strip()

    def write_tree(self, base_tree: str, changes: dict[str, tuple[int, str] | None]) -> str:
        """The tree ``base_tree`` with each path set to (mode, object id), or removed when None."""
        with tempfile.TemporaryDirectory(prefix="miner-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", base_tree, env=env)
            lines = b"".join(
                (f"0 {'0' * 40}\t".encode() if entry is None else f"{entry[0]:o} {entry[1]}\t".encode())
                + path.encode("utf-8", "surrogateescape")
                + b"\0"
                for path, entry in sorted(changes.items(), key=lambda kv: kv[1] is not None)
            )
            if lines:
                self.run("update-index", "-z", "--index-info", stdin=lines, env=env)
            return self.run("write-tree", env=env).decode().strip()

    def commit(self, tree: str, parents: list[str], message: str, who: tuple[str, str], when: int) -> str:
        name, email = who
        date = f"@{when} +0000"
        env = {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": date,
        }
        args = ["commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        return self.run(*args, stdin=message.encode("utf-8"), env=env).decode().strip()

    def set_ref(self, ref: str, sha: str) -> None:
        self.run("update-ref", ref, sha)

    def set_refs(self, refs: dict[str, str]) -> None:
        """Set many refs with one git command."""
        self.run("update-ref", "--stdin", stdin="".join(f"update {ref} {sha}\n" for ref, sha in refs.items()).encode())

    def bundle(self, to: Path, refs: Sequence[str], exclude: Sequence[str] = ()) -> None:
        """Write to ``to`` a git bundle of ``refs`` without what ``exclude`` reaches: the excluded
        commits it builds on become the bundle's prerequisites."""
        revs = "".join(f"{r}\n" for r in refs) + "".join(f"^{e}\n" for e in exclude)
        self.run("bundle", "create", "-q", str(to.absolute()), "--stdin", stdin=revs.encode())

    def unbundle(self, bundle: Path) -> dict[str, str]:
        """Add ``bundle``'s objects and return its refs (name -> commit); no ref here changes. git checks
        first, as ``git bundle verify`` does, that this repository holds the bundle's prerequisites."""
        out = self.run("bundle", "unbundle", str(bundle.absolute())).decode()
        return {ref: sha for sha, ref in (line.split(" ", 1) for line in out.splitlines() if line)}

    def finish(self) -> None:
        """Check out HEAD, keep only what is reachable, and leave no log of how it was made."""
        self.run("read-tree", "--reset", "-u", "HEAD")
        self.run("repack", "-a", "-d", "-q")
        self.run("prune", "--expire=now")
        self.run("pack-refs", "--all", "--prune")
        for name in ("logs", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG", "gc.log"):
            target = self.git_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
