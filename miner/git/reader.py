"""The repository reader: ``Repo``, a repository opened for reading, the only way miner reads the
repository it mines.

History is streamed from ``git log`` (measured several times faster than diffing through
pygit2 or PyDriller); lines are blamed with ``git blame --porcelain -L`` ranges; objects are
read in-process through pygit2. Nothing here writes to the repository: every git command is
a read, ``GIT_OPTIONAL_LOCKS=0`` stops git from refreshing the index, and anything miner
needs on disk (an ignore-revs list, a commit-graph overlay, fetched objects) goes to a directory
of its own.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
import tempfile
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pygit2

from miner.core.errors import (
    EmptyRepositoryError,
    MinerError,
    MissingObjectError,
    NotARepositoryError,
    PromisorUnreachableError,
    TransientGitError,
    UnknownRevisionError,
)
from miner.core.records import CommitMeta, FileDiff, FileStat
from miner.git.env import GIT_CONFIG, git_env
from miner.git.parse import LOG_FORMAT, BlameHit, parse_blame, parse_commit, parse_diff, runs, squeeze

# libgit2 keeps up to 256 MB of decoded objects per process by default, and maps pack files
# in windows of up to 8 GB in all; miner reads each object about once, so small limits lose
# nothing and keep every worker's memory small on large repositories.
pygit2.settings.cache_max_size(32 * 1024 * 1024)
pygit2.settings.mwindow_size = 16 * 1024 * 1024
pygit2.settings.mwindow_mapped_limit = 64 * 1024 * 1024

# A history walk is split between processes only when each gets at least this many commits.
_SPLIT_WALK_LEAST = 500
_STRETCHES_PER_PROCESS = 3
_MISSING = re.compile(r"unable to read|bad object|missing blob|is corrupt|could not read|could not fetch \S+ from promisor")


def _changed_in(patch: pygit2.Patch) -> tuple[list[str], list[str]]:
    """The lines a patch removes and those it adds, without their line ends."""
    minus: list[str] = []
    plus: list[str] = []
    for hunk in patch.hunks:
        for line in hunk.lines:
            if line.origin == "-":
                minus.append(line.content.rstrip("\r\n"))
            elif line.origin == "+":
                plus.append(line.content.rstrip("\r\n"))
    return minus, plus


def _commit_text(encoding: str | None) -> Callable[[bytes], str]:
    """How to read a commit's message and names as ``git log`` shows them: from the encoding the
    commit declares (``i18n.commitEncoding``), else UTF-8; bytes that do not fit become U+FFFD."""

    def text(raw: bytes) -> str:
        try:
            return raw.decode(encoding or "utf-8")
        except (LookupError, UnicodeDecodeError):
            return raw.decode("utf-8", "replace")

    return text


class Repo:
    """A repository opened for reading."""

    def __init__(self, path: Path | str, exclude: Iterable[str] = (), overlay: str | None = None) -> None:
        """Open ``path`` for reading.

        ``exclude`` names paths whose history holds objects the repository lacks (see
        ``paths_with_missing_objects``): history is read without them. ``overlay`` is a
        directory made by ``miner.git.overlay.write_overlay``: git then reads a commit-graph kept there.
        """
        path = Path(path)
        self.exclude = tuple(sorted(set(exclude)))
        self.overlay = overlay
        if not path.exists():
            raise NotARepositoryError(f"{path} does not exist; give the path of a git repository")
        try:
            self._repo = pygit2.Repository(str(path))
        except (pygit2.GitError, KeyError) as exc:
            raise NotARepositoryError(f"{path} is not a git repository; give a directory that `git log` works in") from exc
        top = Path(self._repo.workdir or self._repo.path).resolve()
        if path.resolve() not in (top, Path(self._repo.path).resolve()):
            # libgit2 looks upwards from a subdirectory; mining the whole repository under the
            # subdirectory's name would surprise whoever asked for the subdirectory.
            raise NotARepositoryError(
                f"{path} is a directory inside the repository at {top}; miner mines whole repositories: give {top}"
            )
        if self._repo.is_empty:
            raise EmptyRepositoryError(f"{path} has no commits yet; mine it once it has history")
        self.path = path
        self.top = top  # the work tree's top, or the git directory of a bare repository
        self.git_dir = Path(self._repo.path)
        self.shallow = self._repo.is_shallow
        self._env = git_env()
        # Per-instance caches (an lru_cache on a method would keep every Repo ever opened alive).
        self._metas: OrderedDict[str, CommitMeta | None] = OrderedDict()
        self._cosmetic: dict[str, bool] = {}
        self._counted: OrderedDict[tuple[str, str], int] = OrderedDict()  # (rev, word) -> occurrences
        self._removed: dict[str, dict[str, tuple[str, ...]]] = {}
        self._removed_text: dict[str, frozenset[str]] = {}
        self._ancestry: dict[tuple[str, str], bool] = {}
        self._read_ahead: dict[tuple[str, str, str], bytes | list[tuple[str, str | None, str | None]]] = {}
        self.promisor = self._promisor_remote()
        if overlay is None and self.promisor is not None:
            # A partial clone fetches what it lacks the moment a command needs it, into its object
            # store: git gets an object directory of miner's own to write those into instead.
            overlay = tempfile.mkdtemp(prefix="miner-objects-")
            weakref.finalize(self, shutil.rmtree, overlay, True)
            self.overlay = overlay
        if overlay and Path(overlay).is_dir():
            self._env.update({"GIT_OBJECT_DIRECTORY": overlay, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.git_dir / "objects")})
            if (Path(overlay) / "pack").is_dir():
                self._repo.odb.add_disk_alternate(overlay)  # objects fetched there, for libgit2's reads too

    # -- plumbing -----------------------------------------------------------------

    def _git(self, *args: str) -> list[str]:
        return ["git", f"--git-dir={self.git_dir}", *GIT_CONFIG, *args]

    def run(self, *args: str, stdin: bytes | None = None) -> bytes:
        proc = subprocess.run(self._git(*args), input=stdin, capture_output=True, env=self._env)
        if proc.returncode != 0:
            self._fail(args[0], proc.stderr, proc.returncode)
        return proc.stdout

    def _fail(self, command: str, stderr: bytes, code: int = 1) -> None:
        """Raise what a failed git command means. A missing object is a fact about the repository,
        which the build may keep (a fix or path left out); it is only said when git names objects and
        the repository indeed lacks them. Anything else, a git killed by a signal above all, is a
        failure of this run, never kept: the next run asks again."""
        if code < 0:
            raise TransientGitError(f"git {command} was stopped by signal {-code} in {self.path}; run the build again to resume")
        lines = stderr.decode("utf-8", "replace").strip().splitlines()
        last = lines[-1] if lines else "no message"
        if _MISSING.search(last):
            named = re.findall(r"\b[0-9a-f]{40}\b", "\n".join(lines))
            if named and any(not self.has_object(oid) for oid in named):
                raise MissingObjectError(f"git {command} in {self.path}: {last}")
            raise TransientGitError(
                f"git {command} failed in {self.path}: {last} (yet the repository holds what it names); run the build again"
            )
        raise MinerError(f"git {command} failed in {self.path}: {last}")

    def has_object(self, oid: str) -> bool:
        """Whether the object store holds ``oid`` (asked of libgit2, which no signal can cut short)."""
        try:
            return oid in self._repo
        except (ValueError, pygit2.GitError):
            return False

    def _pathspec(self) -> list[str]:
        """``--`` and, when some paths are excluded, the pathspec that leaves them out."""
        if not self.exclude:
            return ["--"]
        return ["--", ".", *(f":(exclude,literal){p}" for p in self.exclude)]

    def _promisor_remote(self) -> str | None:
        """The remote a partial clone (``git clone --filter``) gets the objects it lacks from, or None."""
        config = self._repo.config
        try:
            named = config["extensions.partialclone"]
        except (KeyError, pygit2.GitError):
            named = None
        if named:
            return str(named)
        for entry in config:
            if entry.name.startswith("remote.") and entry.name.endswith(".promisor") and entry.value == "true":
                return entry.name[len("remote.") : -len(".promisor")]
        return None

    def missing_objects(self, rev: str) -> list[str]:
        """The objects the history of ``rev`` names that the repository (and miner's overlay) lacks:
        listed, never fetched."""
        listing = self.run("rev-list", "--objects", "--missing=print", rev).decode("utf-8", "replace")
        return sorted({line[1:].strip() for line in listing.splitlines() if line.startswith("?")})

    def fetch_objects(self, oids: list[str], objects: Path) -> None:
        """Fetch ``oids`` from the promisor remote in one git process, into ``objects``: an object
        directory of miner's own, with the repository's as an alternate. Nothing is written to the
        repository: not its objects, not its refs, not FETCH_HEAD."""
        assert self.promisor is not None
        env = {
            **self._env,
            "GIT_OBJECT_DIRECTORY": str(objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.git_dir / "objects"),
        }
        proc = subprocess.run(
            self._git(
                "-c",
                "fetch.negotiationAlgorithm=noop",
                "-c",
                "gc.auto=0",
                "-c",
                "maintenance.auto=false",
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--recurse-submodules=no",
                "--filter=blob:none",
                "--stdin",
                self.promisor,
            ),
            input="\n".join(oids).encode() + b"\n",
            capture_output=True,
            env=env,
        )
        if proc.returncode < 0:
            self._fail("fetch", proc.stderr, proc.returncode)
        if proc.returncode != 0:
            lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise PromisorUnreachableError(lines[-1] if lines else f"git fetch exited with {proc.returncode}")

    def paths_with_missing_objects(self, rev: str) -> list[str]:
        """Paths whose history at ``rev`` names blobs this repository does not have (a snapshot
        without its largest files, a damaged store): reading their history would fail."""
        missing = set(self.missing_objects(rev))
        if not missing:
            return []
        paths: set[str] = set()
        raw = self.run("log", "--raw", "--no-abbrev", "--no-renames", "-c", "--format=", rev)
        for line in raw.decode("utf-8", "surrogateescape").splitlines():
            meta, _, path = line.partition("\t")
            if any(sha in missing for sha in meta.split()[2:-1]):
                paths.add(path)
        return sorted(paths)

    def _stream(self, *args: str, stdin: bytes | None = None) -> Iterator[bytes]:
        """Yield stdout in chunks; fail loudly if git fails."""
        proc = subprocess.Popen(
            self._git(*args),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
        )
        assert proc.stdout is not None
        if stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            proc.stdin.close()
        complete = False
        try:
            while chunk := proc.stdout.read(1 << 16):
                yield chunk
            complete = True
        finally:
            proc.stdout.close()
            stderr = proc.stderr.read() if proc.stderr else b""
            # A reader that stopped early makes git die of SIGPIPE: no failure. A git that died of a
            # signal while its whole output was read (killed, not piped shut) cut it short: a failure.
            if proc.wait() != 0 and (proc.returncode > 0 or complete):
                self._fail(args[0], stderr, proc.returncode)

    # -- revisions ----------------------------------------------------------------

    def resolve(self, rev: str) -> str:
        try:
            obj = self._repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise UnknownRevisionError(
                f"unknown revision {rev!r} in {self.path}; give a branch, tag or commit that exists (see `git branch -a`)"
            ) from exc
        return str(commit.id)

    def expand(self, prefix: str) -> str | None:
        """The full SHA of a commit named by a prefix, or None when it names no commit."""
        try:
            obj = self._repo.revparse_single(prefix)
            return str(obj.peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            return None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Cached: blame anchors ask the same pairs for fix after fix, and history does not change."""
        if ancestor == descendant:
            return True
        known = self._ancestry.get((ancestor, descendant))
        if known is None:
            if len(self._ancestry) >= 100_000:
                self._ancestry.clear()
            known = self._ancestry[(ancestor, descendant)] = bool(self._repo.descendant_of(descendant, ancestor))
        return known

    def _commit(self, sha: str) -> pygit2.Commit:
        """The commit ``sha`` as libgit2 reads it (KeyError when the repository lacks it)."""
        return self._repo[sha].peel(pygit2.Commit)

    def committer_date(self, sha: str) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.commit_time(sha), tz=dt.timezone.utc)

    def commit_time(self, sha: str) -> int:
        return int(self._commit(sha).commit_time)

    def message(self, sha: str) -> str:
        """The commit's message as its author wrote it."""
        return str(self._commit(sha).message)

    def root_commits(self, rev: str) -> list[str]:
        out = self.run("rev-list", "--max-parents=0", rev)
        return sorted(out.decode().split())

    def was_mined_as(self, head: str, identity: str) -> bool:
        """Whether this is the repository a build mined at ``head`` and named ``identity``."""
        return self.expand(head) == head and identity in self.root_commits(head)

    def identity(self, rev: str, known: str | None = None) -> str:
        """What names this repository: the root its first-parent line from ``rev`` ends at. A
        history merged in later adds roots beside it, never before it, so the name stays as the
        repository grows. ``known``, a name an earlier build gave it, is kept while it is still
        one of the roots (builds before 0.2.0 took the root that sorted first)."""
        if known and known in self.root_commits(rev):
            return known
        return self.run("rev-list", "--first-parent", "--max-parents=0", rev).decode().split()[0]

    # -- history ------------------------------------------------------------------

    def commits(self, rev: str, since: str | None = None, exclude: Iterable[str] = (), split: int = 1) -> Iterator[CommitMeta]:
        """Every non-merge commit reachable from ``rev`` (and not from ``exclude``), newest first,
        with per-file line counts.

        With ``split`` above 1, that many git processes diff the history at once, each a stretch of
        the commits ``git rev-list`` lists (diffing is nearly all of a walk's time); the records and
        their order are the same."""
        args = ["log", "-z", "--no-merges", "--numstat", "-M", "--no-ext-diff", "--no-textconv", f"--format={LOG_FORMAT}"]
        if split > 1 and not since and not self.exclude:  # a pathspec would also leave commits out: one walk
            listed = self.run("rev-list", "--no-merges", rev, *(f"^{sha}" for sha in exclude), "--").split()
            if len(listed) >= split * _SPLIT_WALK_LEAST:
                yield from self._commits_in_parts([sha.decode() for sha in listed], args, split)
                return
        if since:
            args.append(f"--since={since}")
        args += [rev, *(f"^{sha}" for sha in exclude), *self._pathspec()]
        buffer = b""
        for chunk in self._stream(*args):
            buffer += chunk
            *complete, buffer = buffer.split(b"\x01")
            for record in complete:
                if record:
                    yield parse_commit(record)
        if buffer:
            yield parse_commit(buffer)

    def _commits_in_parts(self, listed: list[str], args: list[str], parts: int) -> Iterator[CommitMeta]:
        """``git log`` of ``listed`` (in that order) by ``parts`` git processes at once.

        A history's cost is not spread evenly (on mocha the newer half takes eight times the older:
        lockfiles and bundles rewritten by every release), so it is cut in several stretches per
        process, each handed to the next process that is free. The records of a stretch are read as
        soon as it and those before it are done, while git works on the rest."""
        size = max(_SPLIT_WALK_LEAST // 2, -(-len(listed) // (parts * _STRETCHES_PER_PROCESS)))
        stretches = [listed[i : i + size] for i in range(0, len(listed), size)]
        outputs: list[bytes | BaseException | None] = [None] * len(stretches)
        done = [threading.Event() for _ in stretches]
        taken = iter(range(len(stretches)))
        lock = threading.Lock()
        stop = threading.Event()

        def work() -> None:
            while not stop.is_set():
                with lock:
                    n = next(taken, None)
                if n is None:
                    return
                try:
                    stdin = "\n".join(stretches[n]).encode() + b"\n"
                    outputs[n] = b"".join(self._stream(*args, "--no-walk=unsorted", "--stdin", "--", stdin=stdin))
                except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
                    outputs[n] = exc
                    stop.set()
                finally:
                    done[n].set()

        for _ in range(min(parts, len(stretches))):
            threading.Thread(target=work, daemon=True).start()
        try:
            for n in range(len(stretches)):
                done[n].wait()
                out, outputs[n] = outputs[n], None
                if isinstance(out, BaseException):
                    raise out
                for record in (out or b"").split(b"\x01"):
                    if record:
                        yield parse_commit(record)
        finally:
            stop.set()  # a reader that stops early leaves the stretches not yet begun undone

    def later_commits(self, sha: str, head: str, paths: list[str], until: int) -> list[CommitMeta]:
        """The non-merge commits after ``sha`` up to ``head`` that touched ``paths``, committed no later
        than ``until`` (seconds since the epoch), oldest first. Their records carry no files: which
        commits git shows does not depend on their diffs, and diffing each (a large file's every
        later version) took most of the time on nvme-cli."""
        if not paths:
            return []
        args = [
            "log",
            "-z",
            "--no-merges",
            "--reverse",
            f"--format={LOG_FORMAT}",
            f"--until={until}",
            head,
            f"^{sha}",
            "--",
            *(f":(literal){p}" for p in paths),
        ]
        return [parse_commit(record) for record in self.run(*args).split(b"\x01") if record]

    def since(self, old: str, new: str) -> tuple[dict[str, int], list[tuple[str, list[str]]]] | None:
        """What ``new`` has that ``old`` has not: each commit's committer time, and the merges on the
        first-parent chain from ``new`` down to ``old`` with their parents. None when ``old`` is
        not on that chain below ``new`` (history was rewritten, ``old`` came in by a side branch, or
        ``new`` is older)."""
        times = {}
        for line in self.run("rev-list", "--timestamp", new, f"^{old}").decode().split("\n"):
            if line:
                when, sha = line.split()
                times[sha] = int(when)
        listed = self.run("rev-list", "--first-parent", "--parents", new, f"^{old}").decode()
        chain = [line.split() for line in listed.split("\n") if line]
        if not chain or chain[-1][1:2] != [old]:  # ``new`` is no descendant of ``old`` by its first parents
            return None
        return times, [(row[0], row[1:]) for row in chain if len(row) > 2]

    def differing_paths(self, a: str, b: str) -> frozenset[str]:
        """Every path whose entry (mode or object) differs between commits ``a`` and ``b``, as git's
        pathspec-limited history compares them: no rename detection (a moved file is both its paths)."""
        return frozenset(
            p for d in self._repo.diff(self._commit(a), self._commit(b)).deltas for p in (d.old_file.path, d.new_file.path)
        )

    def meta(self, sha: str) -> CommitMeta | None:
        """One commit's record, as the walk gives it; None for a merge or unknown SHA.

        The last few thousand are cached: blame keeps landing on the same commits, but a
        worker that mines a large history must not keep every record it ever read.
        """
        if sha in self._metas:
            self._metas.move_to_end(sha)
            return self._metas[sha]
        meta = self._metas[sha] = self._meta(sha)
        if len(self._metas) > 4096:
            self._metas.popitem(last=False)
        return meta

    def _meta(self, sha: str) -> CommitMeta | None:
        try:
            return self._meta_in_process(sha)
        except (KeyError, pygit2.GitError):
            # The diff needs a blob the repository lacks: ask git, leaving out the paths whose
            # objects are missing, as the walk does.
            out = self.run(
                "show",
                "-z",
                "--numstat",
                "-M",
                "--no-ext-diff",
                "--no-textconv",
                f"--format={LOG_FORMAT}",
                sha,
                *self._pathspec(),
            )
            record = out.lstrip(b"\x01")
            return parse_commit(record) if record else None

    def _meta_in_process(self, sha: str) -> CommitMeta | None:
        # In-process (libgit2): a worker looks up every candidate blame reaches, and a
        # subprocess each cost more than the blame itself.
        try:
            commit = self._commit(sha)
        except (KeyError, ValueError):
            return None
        if not isinstance(commit, pygit2.Commit) or len(commit.parent_ids) > 1:
            return None
        if commit.parents:
            # Zero context: the same line counts and pairs as three lines of context (xdiff finds
            # the changes before it adds context), and the lines it removed come with them, which
            # the rewrite rules ask of the same commits next (``removed_lines``).
            diff = self._repo.diff(commit.parents[0], commit, context_lines=0, interhunk_lines=0)
        else:
            diff = commit.tree.diff_to_tree(swap=True)
        diff.find_similar()
        files: list[FileStat] = []
        gone: dict[str, list[str]] | None = {} if commit.parents and sha not in self._removed else None
        weigh = bool(commit.parents) and sha not in self._cosmetic
        balanced = True  # every file's lines, whitespace and blank lines left out, removed as often as added
        for patch in diff:
            if patch is None:
                continue
            delta = patch.delta
            if (gone is not None or weigh) and not delta.is_binary:
                minus, plus = _changed_in(patch)
                if gone is not None:
                    gone.setdefault(delta.new_file.path, []).extend(minus)
                if weigh and balanced and Counter(filter(None, map(squeeze, minus))) != Counter(filter(None, map(squeeze, plus))):
                    balanced = False
            _, added, removed = patch.line_stats
            binary = bool(delta.is_binary)
            renamed = delta.status == pygit2.enums.DeltaStatus.RENAMED
            files.append(
                FileStat(
                    path=delta.new_file.path,
                    old_path=delta.old_file.path if renamed else None,
                    added=0 if binary else added,
                    removed=0 if binary else removed,
                    binary=binary,
                )
            )
        if gone is not None:
            self._keep_removed(sha, gone)
        if not balanced:
            # A whitespace-only change leaves every file's other lines as they were: one that removed a
            # line it did not add back (ignoring whitespace) is none, and ``is_cosmetic`` need not diff it.
            self._cosmetic.setdefault(sha, False)
        author = commit.author
        text = _commit_text(commit.message_encoding)
        return CommitMeta(
            sha=str(commit.id),
            parents=tuple(str(p) for p in commit.parent_ids),
            author_name=text(author.raw_name),
            author_email=text(author.raw_email),
            author_time=author.time,
            committer_time=commit.committer.time,
            message=text(commit.raw_message),
            files=tuple(files),
        )

    def commit_patch_ids(self, shas: Iterable[str]) -> dict[str, str]:
        """``git patch-id --stable`` of each commit: equal for cherry-picks and backports of one change."""
        wanted = list(shas)
        if not wanted:
            return {}
        # The patches stream from git log straight into git patch-id: on a large history they
        # are hundreds of megabytes, which miner never needs to hold.
        with tempfile.TemporaryFile() as revs:
            revs.write("\n".join(wanted).encode() + b"\n")
            revs.seek(0)
            log = subprocess.Popen(
                self._git(
                    "log",
                    "--no-walk=unsorted",
                    "--stdin",
                    "-p",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--format=commit %H",
                    *self._pathspec(),
                ),
                stdin=revs,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
            )
            proc = subprocess.run(["git", "patch-id", "--stable"], stdin=log.stdout, capture_output=True, env=git_env())
            assert log.stdout is not None and log.stderr is not None
            log.stdout.close()
            error = log.stderr.read()
            if log.wait() != 0:
                self._fail("log", error)
        ids: dict[str, str] = {}
        for line in proc.stdout.decode().splitlines():
            patch_id, commit = line.split()
            ids[commit] = patch_id
        return ids

    def diffs(self, shas: Iterable[str]) -> Iterator[tuple[str, list[FileDiff]]]:
        """The line-level diff of each commit against its first parent, in the order given."""
        wanted = list(shas)
        if not wanted:
            return
        args = [
            "log",
            "--no-walk=unsorted",
            "--stdin",
            "-p",
            "-U1",
            "-M",
            "--first-parent",
            "-m",
            "--no-ext-diff",
            "--no-textconv",
            "--format=%x01%H",
            *self._pathspec(),
        ]
        lines: list[bytes] = []
        current: str | None = None
        pending = b""
        for chunk in self._stream(*args, stdin="\n".join(wanted).encode() + b"\n"):
            pending += chunk
            *ready, pending = pending.split(b"\n")
            for line in ready:
                if line.startswith(b"\x01") and len(line) == 41:
                    if current is not None:
                        yield current, parse_diff(lines)
                    current, lines = line[1:].decode(), []
                else:
                    lines.append(line)
        if pending:
            lines.append(pending)
        if current is not None:
            yield current, parse_diff(lines)

    # -- blame --------------------------------------------------------------------

    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]:
        """Blame the given lines of ``path`` as of ``rev``."""
        return self._blame(rev, path, lines, ignore)[0]

    def blame_from(
        self, base: str | None, rev: str, path: str, lines: Iterable[int] | None, ignore: Iterable[str] = ()
    ) -> tuple[list[BlameHit], set[str]]:
        """Blame ``path`` at ``rev`` (the given lines, or the whole file) only as far back as ``base``
        (with None, all the way).

        Lines older than ``base`` stop at a boundary commit (``base`` itself, or an ancestor of it
        reached through a side branch), with their line number there; the second value holds the
        boundary commits. Everything newer is blamed exactly as a full blame would.
        """
        if base is not None and base == rev:
            # git blame rev..rev has no commit to start from and would blame a working tree (miner
            # has none): every line is as old as ``base``, so it stops there, as it would at an older one.
            return self._at_boundary(rev, path, lines), {rev}
        return self._blame(f"{base}..{rev}" if base else rev, path, lines, ignore)

    def _at_boundary(self, rev: str, path: str, lines: Iterable[int] | None) -> list[BlameHit]:
        data = self.blob(rev, path)
        if data is None:
            raise MinerError(f"git blame failed in {self.path}: no such path {path} in {rev}")
        count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)  # lines as git counts them
        wanted = range(1, count + 1) if lines is None else sorted(set(lines))
        if any(not 0 < n <= count for n in wanted):
            raise MinerError(f"git blame failed in {self.path}: {path} has only {count} lines at {rev[:12]}")
        return [BlameHit(final_line=n, sha=rev, orig_path=path, orig_line=n) for n in wanted]

    def _blame(
        self, spec: str, path: str, lines: Iterable[int] | None, ignore: Iterable[str] = ()
    ) -> tuple[list[BlameHit], set[str]]:
        args = ["blame", "--porcelain"]
        for sha in sorted(set(ignore)):
            args += ["--ignore-rev", sha]
        if lines is not None:
            wanted = sorted(set(lines))
            if not wanted:
                return [], set()
            for start, end in runs(wanted):
                args += ["-L", f"{start},{end}"]
        boundary: set[str] = set()
        return parse_blame(self.run(*args, spec, "--", path), boundary), boundary

    def first_parent_touching(self, head: str, path: str) -> list[str]:
        """The first-parent commits up to ``head`` that changed ``path``, oldest first."""
        out = self.run("log", "--first-parent", "--no-renames", "--format=%H", head, "--", path)
        return out.decode().split()[::-1]

    def is_cosmetic(self, sha: str) -> bool:
        """True when the commit changes only whitespace (a reformat): blame looks through it. Cached.

        The commit's record is read first (blame's candidates need it anyway): reading it tells most
        commits that change more than whitespace, without a second diff."""
        if sha not in self._cosmetic:
            try:
                self.meta(sha)
            except MinerError:
                pass  # the diff below answers, as it did before
        if sha not in self._cosmetic:
            self._cosmetic[sha] = self._is_cosmetic(sha)
        return self._cosmetic[sha]

    def from_scratch(self, sha: str, path: str, lines: Iterable[int]) -> set[int]:
        """Of ``lines`` of ``path`` as commit ``sha`` left them, those it added in a run of new lines
        that replaced nothing (a pure insertion, or a new file): code it wrote from scratch.

        In-process (libgit2, zero context, git's indent heuristic): no subprocess per candidate.
        """
        wanted = set(lines)
        commit = self._commit(sha)
        if not commit.parents or not wanted:
            return wanted
        diff = self._repo.diff(
            commit.parents[0], commit, context_lines=0, interhunk_lines=0, flags=pygit2.enums.DiffOption.INDENT_HEURISTIC
        )
        if not any(d.new_file.path == path and d.status != pygit2.enums.DeltaStatus.ADDED for d in diff.deltas):
            diff.find_similar()  # the path may be a rename target: pair it with its old name
        for i, delta in enumerate(diff.deltas):
            if delta.new_file.path != path:
                continue
            if delta.status == pygit2.enums.DeltaStatus.ADDED:
                return wanted
            patch = diff[i]
            if patch is None:
                return set()
            return {n for h in patch.hunks if h.old_lines == 0 for n in range(h.new_start, h.new_start + h.new_lines)} & wanted
        return set()

    def removed_lines(self, sha: str) -> dict[str, tuple[str, ...]]:
        """The lines a commit removed or replaced, by the path the commit left (in-process, cached)."""
        if sha not in self._removed:
            commit = self._commit(sha)
            found: dict[str, list[str]] = {}
            if commit.parents:
                diff = self._repo.diff(commit.parents[0], commit, context_lines=0, interhunk_lines=0)
                diff.find_similar()
                for patch in diff:
                    if patch is None or patch.delta.is_binary:
                        continue
                    found.setdefault(patch.delta.new_file.path, []).extend(_changed_in(patch)[0])
            self._keep_removed(sha, found)
        return self._removed[sha]

    def _keep_removed(self, sha: str, found: dict[str, list[str]]) -> None:
        if len(self._removed) > 512:
            self._removed.clear()
        self._removed[sha] = {path: tuple(lines) for path, lines in found.items()}

    def removed_text(self, sha: str) -> frozenset[str]:
        """The lines a commit removed or replaced, in every file, each with its whitespace taken out:
        to tell a line the commit moved or re-indented from one it wrote."""
        if sha not in self._removed_text:
            if len(self._removed_text) > 512:
                self._removed_text.clear()
            squeezed = frozenset(squeeze(line) for lines in self.removed_lines(sha).values() for line in lines)
            self._removed_text[sha] = squeezed - {""}
        return self._removed_text[sha]

    def occurrences(self, revs: Iterable[str], words: Iterable[str]) -> dict[str, Counter[str]]:
        """How often each of ``words`` (identifiers) occurs as a word in each revision's tree, in
        every text file (one ``git grep`` over all of them)."""
        revs, words = sorted(set(revs)), sorted(set(words))
        found: dict[str, Counter[str]] = {rev: Counter() for rev in revs}
        asked = [rev for rev in revs if any((rev, word) not in self._counted for word in words)]
        if asked and words:  # a fix's labels ask about the same names at the same parent: counted once
            args = ["grep", "-I", "-o", "-w", "-F", "--no-color"]
            for word in words:
                args += ["-e", word]
            proc = subprocess.run(self._git(*args, *asked, *self._pathspec()), capture_output=True, env=self._env)
            if proc.returncode not in (0, 1):  # 1: nothing matched
                self._fail("grep", proc.stderr)
            counted: dict[str, Counter[str]] = {rev: Counter() for rev in asked}
            for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
                rev, _, rest = line.partition(":")
                word = rest.rsplit(":", 1)[-1]
                if rev in counted:
                    counted[rev][word] += 1
            for rev in asked:
                for word in words:
                    self._counted[(rev, word)] = counted[rev][word]
            while len(self._counted) > 65536:
                self._counted.popitem(last=False)
        for rev in revs:
            for word in words:
                if self._counted.get((rev, word)):
                    found[rev][word] = self._counted[(rev, word)]
        return found

    def same_lines(self, new: str, old: str, path: str, lines: Iterable[int]) -> dict[int, int]:
        """Of ``lines`` of ``path`` at commit ``new``, those unchanged since commit ``old``, with
        their line numbers there (in-process: a zero-context diff of the two versions)."""
        before, after = self.blob(old, path), self.blob(new, path)
        if before is None or after is None:
            return {}
        hunks = [(h.old_lines, h.new_start, h.new_lines) for h in pygit2.Patch.create_from(before, after, context_lines=0).hunks]
        found: dict[int, int] = {}
        for line in sorted(set(lines)):
            shift = 0
            for old_lines, start, new_lines in hunks:
                if new_lines and start <= line < start + new_lines:
                    break  # changed between the two
                if (start + new_lines if new_lines else start + 1) > line:
                    found[line] = line - shift  # every hunk from here on comes after the line
                    break
                shift += new_lines - old_lines
            else:
                found[line] = line - shift
        return found

    def _is_cosmetic(self, sha: str) -> bool:
        try:
            return self._is_cosmetic_unguarded(sha)
        except (KeyError, pygit2.GitError):  # an object the repository lacks: not a reformat we can prove
            return False

    def _is_cosmetic_unguarded(self, sha: str) -> bool:
        commit = self._commit(sha)
        if len(commit.parent_ids) != 1:
            return False
        flags = pygit2.enums.DiffOption.IGNORE_WHITESPACE | pygit2.enums.DiffOption.IGNORE_BLANK_LINES
        diff = self._repo.diff(commit.parents[0], commit, flags=flags)
        seen = False
        for patch in diff:
            if patch is None or patch.delta.status != pygit2.enums.DeltaStatus.MODIFIED or patch.delta.is_binary:
                return False
            _, added, removed = patch.line_stats
            if added or removed:
                return False
            seen = True
        return seen

    def authorship(self, head: str, path: str) -> dict[str, int] | None:
        """Commit -> how many lines of ``path`` at ``head`` blame gives it; None if the path is gone.

        Whole-file blame, on purpose: reverse blame (``--reverse``) is faster but pairs lines
        differently across merges and moved lines, and then disagrees with blame itself.
        """
        if self.blob(head, path) is None:
            return None
        counts: dict[str, int] = {}
        for hit in parse_blame(self.run("blame", "--porcelain", head, "--", path)):
            counts[hit.sha] = counts.get(hit.sha, 0) + 1
        return counts

    # -- objects ------------------------------------------------------------------

    def blob(self, sha: str, path: str) -> bytes | None:
        commit = self._commit(sha)
        try:
            entry = commit.tree[path]
        except KeyError:
            return None
        try:
            obj = self._repo[entry.id]
        except KeyError as exc:  # a partial or damaged clone: the tree names a blob that is absent
            raise MissingObjectError(f"{path} at {sha[:12]}: blob {entry.id} is missing from the repository") from exc
        if not isinstance(obj, pygit2.Blob):
            return None
        return bytes(obj.data)

    def first_parent(self, sha: str) -> str | None:
        parents = self._commit(sha).parent_ids
        return str(parents[0]) if parents else None

    def parents(self, sha: str) -> list[str]:
        return [str(p) for p in self._commit(sha).parent_ids]

    def read_ahead(self, heads: Iterable[str]) -> None:
        """Read ``patch`` and ``changes`` of many commits against their first parents with two git
        processes instead of two a commit (starting a git costs more than diffing a small change);
        each is then answered once from memory. What the batch cannot read (a root commit, a commit
        the repository lacks, a batch git that fails) is left to the calls one by one, which say what
        is wrong."""
        self._read_ahead.clear()
        wanted: list[tuple[str, str]] = []
        for head in sorted(set(heads)):
            try:
                base = self.first_parent(head)
            except (KeyError, ValueError, pygit2.GitError):
                continue
            if base is not None:
                wanted.append((base, head))
        if not wanted:
            return
        stdin = "".join(f"{head} {base}\n" for base, head in wanted).encode()
        common = ["diff-tree", "--stdin", "--always", "-M", "--no-ext-diff"]
        try:
            patches = self.run(*common, "-p", "-U3", "--no-textconv", "--full-index", *self._pathspec(), stdin=stdin)
            changes = self.run(*common, "-r", "-z", *self._pathspec(), stdin=stdin)
        except MinerError:
            return
        order = [head for _, head in wanted]
        try:
            texts, entries = _patches_of(patches, order), _changes_of(changes, order)
        except MinerError:
            return
        for (base, head), text, found in zip(wanted, texts, entries):
            self._read_ahead[("patch", base, head)] = text
            self._read_ahead[("changes", base, head)] = found

    def patch(self, base: str | None, head: str, paths: Sequence[str] = ()) -> bytes:
        """The unified diff of ``head`` against ``base`` (or the empty tree), as git prints it; of
        ``paths`` only, when given."""
        if not paths and base is not None:
            ahead = self._read_ahead.pop(("patch", base, head), None)
            if isinstance(ahead, bytes):
                return ahead
        args = ["diff-tree", "-p", "-M", "-U3", "--no-ext-diff", "--no-textconv", "--full-index", "--format="]
        if base is None:
            args += ["--root", head]
        else:
            args += [base, head]
        if paths:
            args += ["--", *(f":(literal){p}" for p in paths), *(f":(exclude,literal){p}" for p in self.exclude)]
        else:
            args += self._pathspec()
        return self.run(*args)

    def changes(self, base: str | None, head: str) -> list[tuple[str, str | None, str | None]]:
        """(status letter, old path, new path) for each file that differs."""
        if base is not None:
            ahead = self._read_ahead.pop(("changes", base, head), None)
            if isinstance(ahead, list):
                return ahead
        args = ["diff-tree", "-r", "-z", "-M", "--no-ext-diff", "--format="]
        args += (["--root", head] if base is None else [base, head]) + self._pathspec()
        return _changes(self.run(*args).split(b"\x00"))

    # -- what audit and materialize read ----------------------------------------------

    def all_commits(self) -> list[str]:
        """Every commit reachable from any ref, sorted (so a SHA prefix can be found by bisection)."""
        return sorted(self.run("rev-list", "--all").decode().split())

    def ancestors(self, sha: str) -> set[str]:
        """``sha`` and every commit reachable from it."""
        return set(self.run("rev-list", sha).decode().split())

    def graph(self, tips: Iterable[str]) -> list[tuple[str, list[str]]]:
        """Every commit reachable from ``tips`` with its parents, each after all of its parents."""
        revs = "".join(t + "\n" for t in tips).encode()
        out = self.run("rev-list", "--topo-order", "--reverse", "--parents", "--stdin", stdin=revs)
        return [(fields[0], fields[1:]) for fields in (line.split() for line in out.decode().splitlines()) if fields]

    def first_parents(self, head: str) -> list[str]:
        """``head``'s first-parent chain, its root first."""
        return self.run("rev-list", "--first-parent", "--reverse", head).decode().split()

    def has_replacements(self) -> bool:
        """Whether git reads this history through replace refs or grafts (libgit2 does not)."""
        return (self.git_dir / "info" / "grafts").exists() or any(r.startswith("refs/replace/") for r in self._repo.references)

    def tree_of(self, sha: str) -> str:
        return str(self._commit(sha).peel(pygit2.Tree).id)

    def entry(self, sha: str, path: str) -> tuple[int, str] | None:
        """(file mode, object id) of ``path`` in commit ``sha``, or None when it is absent."""
        try:
            entry = self._commit(sha).peel(pygit2.Tree)[path]
        except KeyError:
            return None
        return int(entry.filemode), str(entry.id)

    def object_data(self, oid: str) -> bytes:
        try:
            return bytes(self._repo[oid].read_raw())
        except KeyError as exc:
            raise MissingObjectError(f"object {oid} is missing from {self.path}; it cannot be copied") from exc

    def refs(self) -> dict[str, str]:
        out = self.run("for-each-ref", "--format=%(refname) %(objectname)").decode()
        return dict(_pair(line) for line in out.splitlines() if line)

    def objects(self) -> dict[str, str]:
        """Every object in the store, reachable or not: id -> type."""
        out = self.run("cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)").decode()
        return dict(_pair(line) for line in out.splitlines() if line)

    def reachable(self) -> set[str]:
        """Every object reachable from a ref or HEAD."""
        out = self.run("rev-list", "--objects", "--all").decode()
        return {line.split(" ", 1)[0] for line in out.splitlines() if line}

    def fsck(self, strict: bool = True) -> list[str]:
        """The problems ``git fsck`` reports (an empty list when the store is sound)."""
        args = ["fsck", "--full", "--no-progress", "--no-dangling", *(["--strict"] if strict else [])]
        proc = subprocess.run(self._git(*args), capture_output=True, env=git_env())
        if proc.returncode == 0:
            return []
        lines = (proc.stderr + proc.stdout).decode("utf-8", "replace").strip().splitlines()
        return [line for line in lines if not line.startswith("warning")] or [f"exit {proc.returncode}"]

    def objects_of(self, rev: str) -> set[str]:
        """Every object reachable from ``rev``."""
        return {line.split(" ", 1)[0] for line in self.run("rev-list", "--objects", rev).decode().splitlines() if line}


def _changes(fields: list[bytes]) -> list[tuple[str, str | None, str | None]]:
    """``git diff-tree -r -z`` output, split at NULs, as (status letter, old path, new path)."""
    return _entries(fields, 0, stop=False)[0]


def _entries(fields: list[bytes], i: int, stop: bool) -> tuple[list[tuple[str, str | None, str | None]], int]:
    """The entries from field ``i`` on, and where they end; with ``stop``, only up to the next field
    that is no entry (``--stdin``'s next head)."""
    out: list[tuple[str, str | None, str | None]] = []
    while i < len(fields) - 1:
        meta = fields[i]
        if not meta.startswith(b":"):
            if stop:
                break
            i += 1
            continue
        status = meta.split()[-1].decode()[0]
        if status in "RC":
            out.append(
                (status, fields[i + 1].decode("utf-8", "surrogateescape"), fields[i + 2].decode("utf-8", "surrogateescape"))
            )
            i += 3
        else:
            path = fields[i + 1].decode("utf-8", "surrogateescape")
            out.append((status, None if status == "A" else path, None if status == "D" else path))
            i += 2
    return out, i


def _changes_of(out: bytes, heads: list[str]) -> list[list[tuple[str, str | None, str | None]]]:
    """``git diff-tree --stdin --always -r -z`` output: each input line's head id, then its entries."""
    fields = out.split(b"\x00")
    found: list[list[tuple[str, str | None, str | None]]] = []
    i = 0
    for head in heads:
        if i >= len(fields) or fields[i] != head.encode():
            raise MinerError(f"git diff-tree --stdin printed no part for {head}")
        entries, i = _entries(fields, i + 1, stop=True)
        found.append(entries)
    return found


def _patches_of(out: bytes, heads: list[str]) -> list[bytes]:
    """``git diff-tree --stdin --always -p`` output cut into what each input line gave: each part
    begins with a line that is its head's id, as no line of a diff can be."""
    parts: list[bytes] = []
    at = 0
    for i, head in enumerate(heads):
        mark = head.encode() + b"\n"
        if not out.startswith(mark, at):
            raise MinerError(f"git diff-tree --stdin printed no part for {head}")
        start = at + len(mark)
        if i + 1 == len(heads):
            parts.append(out[start:])
            break
        # The next part's id line, right after this part's last line (or this part's own id line).
        at = out.find(b"\n" + heads[i + 1].encode() + b"\n", start - 1)
        if at < 0:
            raise MinerError(f"git diff-tree --stdin printed no part for {heads[i + 1]}")
        at += 1
        parts.append(out[start:at])
    return parts


def _pair(line: str) -> tuple[str, str]:
    key, _, value = line.partition(" ")
    return key, value
