"""What earlier builds already mined, kept in the output directory (``cache/``).

Blame at a fix's parent never changes once the fix exists, so a fix's labels are valid
for as long as the settings that made them are: each entry carries the digest of those
settings, and an entry with another digest is ignored. The commit walk is cached with the
heads it reached, so a rebuild walks only the commits added since. Labels are appended
as they are made, so an interrupted build leaves them in its staging directory and the
next build picks them up: that is how a run resumes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from miner import __version__
from miner.core.config import Config
from miner.core.records import CommitMeta, Defect, Evidence, Label, Verdict
from miner.runner.engine import LabelResult
from miner.stages import redact, strip
from miner.stages.anchors import Anchor
from miner.stages.clean import Checked

CACHE = "cache"
CLEAN_CHECKS = "clean_checks.jsonl"
JUDGE = "judge.jsonl"


def labels_key(config: Config) -> str:
    """The settings a fix's labels depend on, and the miner version that made them (a newer
    miner may label differently: its rebuild labels afresh)."""
    parts = {k: config.model_dump(mode="json")[k] for k in ("fixes", "vet", "paths", "bots", "labels")}
    parts["miner"] = __version__
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def clean_key(config: Config, excluded: Iterable[str] = ()) -> str:
    """The settings a clean check depends on (all of them: the checks read paths, bots, fixes, the
    vet's rules and the clean stage's), the paths the walk left out for their missing objects, and
    the miner version that made it."""
    parts = config.model_dump(mode="json")
    parts["excluded"] = sorted(excluded)
    parts["miner"] = __version__
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def visible_key(config: Config) -> str:
    """The settings a visible file depends on (besides its commit), and the miner version and the
    stripping code that wrote it: a newer miner may strip more, and must not hand on what an older
    one let through; the code's own digest makes a change to the rules re-make visible parts even
    before the version moves."""
    parts = {k: config.model_dump(mode="json")[k] for k in ("strip", "output", "paths")}
    parts["salt"] = config.split.salt
    parts["miner"] = __version__
    parts["rules"] = _rules_digest()
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def _rules_digest() -> str:
    """A digest of the modules that decide what a visible part shows of a message and a comment."""
    digest = hashlib.sha256()
    for module in (strip, redact):
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()[:16]


def _json_line(meta: CommitMeta) -> str:
    """A commit as one JSON line. A path that is not UTF-8 reaches miner as a string with
    surrogate escapes (the way Python decodes file names); those are written as ``\\udcXX``
    escapes, which read back to the same string and so to the same bytes."""
    try:
        return meta.model_dump_json()
    except PydanticSerializationError:
        return json.dumps(meta.model_dump(mode="json"), separators=(",", ":"))


def _pack(label: Label) -> dict[str, Any]:
    """A label as the cache keeps it: the evidence its defects share written once, not once per
    defect (a fix whose lines fall in many ranges repeated it for each; numpy's labels took 59 MB)."""
    data = label.model_dump(mode="json")
    if label.defects and all(d.evidence == label.defects[0].evidence for d in label.defects):
        data["evidence"] = data["defects"][0]["evidence"]
        for defect in data["defects"]:
            del defect["evidence"]
    return data


def _unpack(data: dict[str, Any]) -> Label:
    """The label ``_pack`` wrote (or one written whole, as before it existed)."""
    if "evidence" not in data:
        return Label.model_validate(data)
    evidence = Evidence.model_validate(data["evidence"])
    defects = tuple(Defect.model_validate({**d, "evidence": evidence}) for d in data["defects"])
    return Label.model_validate({k: v for k, v in data.items() if k != "evidence"} | {"defects": defects})


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    """JSON lines of a file; a last line cut short by an interruption is skipped."""
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue
    except FileNotFoundError:
        return


class Cache:
    """Reads the caches of earlier builds; writes this build's into the staging directory."""

    def __init__(self, sources: Iterable[Path], staging: Path) -> None:
        self.sources = [s / CACHE for s in sources if (s / CACHE).is_dir()]
        self.dir = staging / CACHE
        self._open: dict[Path, TextIO] = {}
        self._lock = threading.Lock()

    # -- reading ------------------------------------------------------------------

    def commits(self, identity: str) -> tuple[list[CommitMeta], list[str], list[str]]:
        """The cached walk of a repository, the heads it covered and the paths it left out for their
        missing objects (from the newest source)."""
        for source in self.sources:
            heads_file = source / identity / "heads.json"
            if not heads_file.is_file():
                continue
            try:
                heads = json.loads(heads_file.read_text(encoding="utf-8"))
                excluded_file = source / identity / "excluded.json"
                excluded = json.loads(excluded_file.read_text(encoding="utf-8")) if excluded_file.is_file() else []
                metas = [CommitMeta.model_validate(d) for d in _lines(source / identity / "commits.jsonl")]
            except (OSError, ValueError, ValidationError):
                continue
            return metas, list(heads), list(excluded)
        return [], [], []

    def labels(self, identity: str, key: str) -> dict[str, LabelResult]:
        found: dict[str, LabelResult] = {}
        for source in self.sources:
            for entry in _lines(source / identity / "labels.jsonl"):
                if entry.get("key") != key or entry.get("fix") in found:
                    continue
                try:
                    found[entry["fix"]] = LabelResult(
                        fix=entry["fix"],
                        labels=tuple(_unpack(x) for x in entry["labels"]),
                        dropped=dict(entry["dropped"]),
                        vetted=entry.get("vetted"),
                    )
                except (KeyError, TypeError, ValidationError):
                    continue
        return found

    def clean_checks(self, identity: str, key: str) -> dict[str, Checked]:
        """The clean checks earlier builds asked for, with the head each was asked at."""
        found: dict[str, Checked] = {}
        for source in self.sources:
            for entry in _lines(source / identity / CLEAN_CHECKS):
                if entry.get("key") != key or entry.get("sha") in found:
                    continue
                try:
                    found[entry["sha"]] = Checked(head=entry["head"], fixes=entry["fixes"], reason=entry["reason"])
                except (KeyError, TypeError):
                    continue
        return found

    def _newest(self, identity: str, name: str) -> Path | None:
        """``name`` in the repository's folder of the newest source that has it."""
        return next((f for s in self.sources if (f := s / identity / name).exists()), None)

    def tip_anchors(self, identity: str) -> dict[str, Anchor]:
        """The newest blame anchor of each much-fixed path, as the last build left them: history
        does not change, so a rebuild blames its new fixes from there (see miner.stages.anchors)."""
        file = self._newest(identity, "anchors.jsonl")
        try:
            return {e["path"]: Anchor.from_json(e) for e in _lines(file)} if file else {}
        except (KeyError, TypeError, ValueError, OverflowError):
            return {}

    def commit_graphs(self, identity: str) -> Path | None:
        """The commit-graph chain an earlier build kept, for the overlay to extend (see miner.git.overlay)."""
        chain = self._newest(identity, "commit-graphs/commit-graph-chain")
        return chain.parent if chain else None

    def patch_ids(self, identity: str, key: str) -> dict[str, str]:
        """Commit -> ``git patch-id`` from an earlier build that read the same paths (``key``)."""
        file = self._newest(identity, "patch_ids.json")
        try:
            data = json.loads(file.read_text(encoding="utf-8")) if file else {}
            return {str(k): str(v) for k, v in data["ids"].items()} if data.get("key") == key else {}
        except (OSError, ValueError, KeyError, AttributeError):
            return {}

    def judge_verdicts(self) -> dict[str, Verdict]:
        """The judge's verdicts of earlier builds, by the digest of command and packet (miner.stages.judge)."""
        found: dict[str, Verdict] = {}
        for source in reversed(self.sources):  # the newest source wins
            for entry in _lines(source / JUDGE):
                try:
                    found[entry["key"]] = Verdict.model_validate(entry["verdict"])
                except (KeyError, TypeError, ValidationError):
                    continue
        return found

    # -- writing ------------------------------------------------------------------

    def add_judge_verdict(self, key: str, verdict: Verdict) -> None:
        """One verdict as the judge gives it, on disk at once: an answer costs money, and an interrupted
        build's answers are read back by the next."""
        path = self.dir / JUDGE
        self._append(path, json.dumps({"key": key, "verdict": verdict.model_dump(mode="json")}, sort_keys=True))
        with self._lock:
            handle = self._open[path]
            handle.flush()
            os.fsync(handle.fileno())

    def save_judge_verdicts(self, verdicts: dict[str, Verdict]) -> None:
        """Every verdict known, sorted (the file ``add_judge_verdict`` appended to is written anew)."""
        with self._lock:
            handle = self._open.pop(self.dir / JUDGE, None)
            if handle is not None:
                handle.close()
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / JUDGE, "w", encoding="utf-8") as handle:
            for key in sorted(verdicts):
                handle.write(json.dumps({"key": key, "verdict": verdicts[key].model_dump(mode="json")}, sort_keys=True) + "\n")

    def _folder(self, identity: str) -> Path:
        folder = self.dir / identity
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def save_patch_ids(self, identity: str, key: str, ids: dict[str, str]) -> None:
        text = json.dumps({"key": key, "ids": dict(sorted(ids.items()))}) + "\n"
        (self._folder(identity) / "patch_ids.json").write_text(text, encoding="utf-8")

    def keep_commit_graphs(self, identity: str, graphs: Path) -> None:
        if (graphs / "commit-graph-chain").is_file():
            target = self._folder(identity) / "commit-graphs"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(graphs, target)

    def save_tip_anchors(self, identity: str, tips: dict[str, Anchor]) -> None:
        with open(self._folder(identity) / "anchors.jsonl", "w", encoding="utf-8") as handle:
            for path in sorted(tips):
                handle.write(json.dumps({"path": path, **tips[path].to_json()}) + "\n")

    def _append(self, path: Path, line: str) -> None:
        with self._lock:  # the judge's threads append verdicts while the build appends checks
            handle = self._open.get(path)
            if handle is None:
                path.parent.mkdir(parents=True, exist_ok=True)
                handle = self._open[path] = open(path, "a", encoding="utf-8")
            handle.write(line + "\n")

    def add_labels(self, identity: str, key: str, results: Iterable[LabelResult]) -> None:
        path = self.dir / identity / "labels.jsonl"
        for r in results:
            entry = {
                "fix": r.fix,
                "key": key,
                "labels": [_pack(lab) for lab in r.labels],
                "dropped": dict(sorted(r.dropped.items())),
                **({"vetted": r.vetted} if r.vetted else {}),
            }
            self._append(path, json.dumps(entry, sort_keys=True))
        handle = self._open.get(path)
        if handle is not None:
            handle.flush()
            os.fsync(handle.fileno())

    def add_clean_check(self, identity: str, key: str, sha: str, checked: Checked) -> None:
        """One clean check as it is answered (not flushed each time: a lost one is asked again)."""
        entry = {"sha": sha, "key": key, "head": checked.head, "fixes": checked.fixes, "reason": checked.reason}
        self._append(self.dir / identity / CLEAN_CHECKS, json.dumps(entry, sort_keys=True))

    def save_commits(self, identity: str, metas: Iterable[CommitMeta], heads: list[str], excluded: Iterable[str] = ()) -> None:
        folder = self._folder(identity)
        with open(folder / "commits.jsonl", "w", encoding="utf-8") as handle:
            for meta in metas:
                handle.write(_json_line(meta) + "\n")
        (folder / "excluded.json").write_text(json.dumps(sorted(set(excluded))) + "\n", encoding="utf-8")
        (folder / "heads.json").write_text(json.dumps(sorted(set(heads))) + "\n", encoding="utf-8")

    def close(self) -> None:
        with self._lock:
            for handle in self._open.values():
                handle.close()
            self._open.clear()

    def sort_labels(self) -> None:
        """Rewrite each labels file sorted by fix (and each clean checks file by commit), so the
        finished output is byte-identical across runs."""
        self.close()
        for path in sorted(self.dir.glob(f"*/{CLEAN_CHECKS}")):
            entries = {entry["sha"]: entry for entry in _lines(path) if isinstance(entry, dict) and "sha" in entry}
            tmp = path.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(entries[sha], sort_keys=True) + "\n" for sha in sorted(entries)), encoding="utf-8")
            os.replace(tmp, path)
        for path in sorted(self.dir.glob("*/labels.jsonl")):
            # Lines were written with sorted keys: copy each fix's last line as it is, found by its
            # offset, rather than holding every entry parsed (numpy's 59 MB of labels took the parent
            # from 400 to 710 MB that way).
            where: dict[str, tuple[int, int]] = {}
            with open(path, "rb") as handle:
                offset = 0
                for line in handle:
                    try:
                        where[json.loads(line)["fix"]] = (offset, len(line))
                    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
                        pass  # a last line cut short by an interruption
                    offset += len(line)
                tmp = path.with_suffix(".tmp")
                with open(tmp, "wb") as out:
                    for fix in sorted(where):
                        start, size = where[fix]
                        handle.seek(start)
                        out.write(handle.read(size).rstrip(b"\n") + b"\n")
            tmp.replace(path)
