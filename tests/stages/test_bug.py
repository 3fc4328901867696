"""The bug stage on its own: which labels become bug candidates, and the cut of each defect to the
lines its change added."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from miner.core.config import load_config
from miner.core.errors import MissingObjectError
from miner.core.records import CommitMeta, Defect, Evidence, FileStat, Label, Tier
from miner.stages.bug import added_in, bug_heads, on_added_lines

WHEN = 1_700_000_000  # 2023-11-14


def _meta(sha: str, added: int = 10, path: str = "src/a.py", when: int = WHEN) -> CommitMeta:
    return CommitMeta(
        sha=sha,
        parents=("p" + sha,),
        author_name="Ana",
        author_email="ana@example.org",
        author_time=when,
        committer_time=when,
        message="Add a thing\n",
        files=(FileStat(path=path, added=added, removed=0),),
    )


def _defect(start: int, end: int, path: str = "src/a.py", fix: str = "f1") -> Defect:
    evidence = Evidence(link="blame", tier="blame", lines_blamed=1, lines_agreeing=1, candidates=())
    return Defect(path=path, line_start=start, line_end=end, fix=fix, fix_date="2024-01-01", summary="Fix it", evidence=evidence)


def _label(intro: str | None, tier: Tier | None, *defects: Defect, fix: str = "f1") -> Label:
    return Label(fix=fix, intro=intro, tier=tier, defects=defects)


def test_only_labels_that_clear_the_bar_become_candidates_and_every_refusal_is_counted() -> None:
    config = load_config()  # min_tier: blame; max_intro_changed_lines: 2000
    metas = {
        "ok": _meta("ok"),
        "old": _meta("old", when=WHEN - 400 * 86400),
        "huge": _meta("huge", added=5000),
        "latin": _meta("latin", path="src/caf\udce9.py"),
    }
    labels = [
        _label("ok", "blame", _defect(5, 6, fix="f2"), fix="f2"),
        _label("ok", "explicit", _defect(1, 2)),
        _label("ok", "weak", _defect(9, 9, fix="f3"), fix="f3"),
        _label(None, None),
        _label("gone", "blame", _defect(1, 1)),
        _label("old", "blame", _defect(1, 1)),
        _label("huge", "blame", _defect(1, 1)),
        _label("latin", "blame", _defect(1, 1)),
    ]
    dropped: Counter[str] = Counter()
    since = dt.datetime.fromtimestamp(WHEN - 30 * 86400, tz=dt.timezone.utc)
    heads = bug_heads(labels, metas.get, config, lambda when: when >= since, dropped)
    # Two fixes' defects on one change are gathered under it, sorted by path and line.
    assert heads == {"ok": (_defect(1, 2), _defect(5, 6, fix="f2"))}
    assert dropped == Counter(below_min_tier_weak=1, intro_unreadable=1, outside_window=1, intro_too_large=1, non_utf8_path=1)


_PATCH = b"\n".join(
    [
        b"diff --git a/src/a.py b/src/a.py",
        b"index 0000001..0000002 100644",
        b"--- a/src/a.py",
        b"+++ b/src/a.py",
        b"@@ -1,4 +1,6 @@",
        b" def a():",
        b"+    x = 1",
        b"+    y = 2",
        b"     return 0",
        b" ",
        b" ",
        b"@@ -10,2 +12,2 @@ def b():",
        b"     pass",
        b"+    return None",
        b"",
    ]
)


class _Repo:
    """The two reads the cut needs: a change's first parent and its diff."""

    def __init__(self, missing: set[str] = set()) -> None:
        self.missing = missing

    def first_parent(self, sha: str) -> str:
        return "p" + sha

    def patch(self, base: str | None, head: str) -> bytes:
        if head in self.missing:
            raise MissingObjectError(f"object of {head} is missing")
        return _PATCH


def test_each_defect_is_cut_to_the_lines_its_change_added() -> None:
    dropped: Counter[str] = Counter()
    bugs = {
        # Lines 1-4: 2 and 3 were added, 1 and 4 are context. Lines 12-14: only 13 was added.
        "c1": (_defect(1, 4), _defect(12, 14), _defect(20, 22)),
        "c2": (_defect(4, 5), _defect(2, 3, path="src/other.py")),  # nothing it names was added
    }
    kept = on_added_lines(added_in(_Repo()), bugs, dropped)  # type: ignore[arg-type]
    assert kept == {"c1": (_defect(2, 3), _defect(13, 13))}
    assert dropped == Counter(defect_lines_not_added=1)


def test_a_change_whose_diff_cannot_be_read_keeps_its_defects_for_the_fixture_stage_to_count() -> None:
    dropped: Counter[str] = Counter()
    bugs = {"c1": (_defect(1, 4),)}
    assert on_added_lines(added_in(_Repo(missing={"c1"})), bugs, dropped) == bugs  # type: ignore[arg-type]
    assert not dropped
