"""The clean stage's rules and its seeded sample, on records written here; the reuse of earlier checks on a
small history made with git."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from test_messy import commit, git

from miner.core.config import load_config
from miner.core.records import CommitMeta, FileDiff, FileStat
from miner.git import BlameHit, Repo
from miner.stages.clean import (
    Checked,
    Known,
    Quota,
    corrected_by,
    fixes_digest,
    later_changes,
    pick_clean,
    reads_as_correction,
    rewrote,
    still_answered,
    unreviewable,
    why_not_clean,
)

CONFIG = load_config()
DAY = 86400
NOW = 1000 * DAY


def meta(
    sha: str,
    *,
    days_old: int = 400,
    paths: tuple[str, ...] = ("src/a.py",),
    lines: int = 10,
    author: str = "Ann",
    parents: tuple[str, ...] = ("p" * 40,),
) -> CommitMeta:
    return CommitMeta(
        sha=sha,
        parents=parents,
        author_name=author,
        author_email="a@example.com",
        author_time=NOW - days_old * DAY,
        committer_time=NOW - days_old * DAY,
        message="Work",
        files=tuple(FileStat(path=p, added=lines, removed=0) for p in paths),
    )


def reason(m: CommitMeta, blamed: set[str] = frozenset(), fixes: set[str] = frozenset()) -> str | None:  # type: ignore[assignment]
    return why_not_clean(m, CONFIG, NOW, set(blamed), set(fixes))


def test_each_rule() -> None:
    assert reason(meta("a")) is None
    assert reason(meta("a", parents=())) == "initial_import"
    assert reason(meta("a", author="renovate[bot]")) == "bot_author"
    assert reason(meta("a"), fixes={"a"}) == "is_fix"
    assert reason(meta("a"), blamed={"a"}) == "blamed_by_fix"
    assert reason(meta("a", paths=("docs/x.md", "tests/test_a.py"))) == "no_source_change"
    assert reason(meta("a", lines=801)) == "too_large"
    deletion = meta("a").model_copy(
        update={"files": (FileStat(path="src/a.py", added=0, removed=9), FileStat(path="tests/test_a.py", added=4, removed=0))}
    )
    assert reason(deletion) == "deletion_only"
    assert reason(meta("a", paths=("src/a.py", "src/caf\udce9.py"))) == "non_utf8_path"  # b"caf\xe9.py"
    assert reason(meta("a", days_old=364)) == "too_young"
    shorter = CONFIG.with_overrides(clean={"wait_days": 30})
    assert why_not_clean(meta("a", days_old=364), shorter, NOW, set(), set()) is None


def test_sample_is_seeded_and_counts_what_it_leaves() -> None:
    commits = [meta(f"{i:040x}") for i in range(50)]
    dropped: Counter[str] = Counter()
    first = pick_clean(commits, Quota(5), CONFIG, Known(NOW, set(), set()), lambda m: None, dropped)
    again = pick_clean(list(reversed(commits)), Quota(5), CONFIG, Known(NOW, set(), set()), lambda m: None, Counter())
    assert [p.sha for p in first] == [p.sha for p in again]
    assert dropped["not_sampled"] == 45
    other = pick_clean(
        commits, Quota(5), CONFIG.model_copy(update={"seed": 1}), Known(NOW, set(), set()), lambda m: None, Counter()
    )
    assert [p.sha for p in other] != [p.sha for p in first]
    assert all(p.observed_days == 400 for p in first)


def test_reformats_are_skipped_in_the_sample() -> None:
    commits = [meta(f"{i:040x}") for i in range(10)]
    dropped: Counter[str] = Counter()
    picks = pick_clean(
        commits,
        Quota(10),
        CONFIG,
        Known(NOW, set(), set()),
        lambda m: "whitespace_only" if m.sha.endswith("3") else None,
        dropped,
    )
    assert len(picks) == 9 and dropped["whitespace_only"] == 1


def test_allocate_is_proportional_and_exact() -> None:
    from miner.stages.clean import allocate

    quotas = allocate(Counter({("1-5", "1", "py"): 6, ("6-20", "1", "py"): 3, ("201+", "4+", "c"): 1}), 5)
    assert sum(quotas.values()) == 5
    assert quotas == {("1-5", "1", "py"): 3, ("6-20", "1", "py"): 2, ("201+", "4+", "c"): 0}


def test_stratified_sample_matches_the_bug_strata() -> None:
    from miner.stages.clean import stratum

    small = [meta(f"a{i:039x}", lines=2) for i in range(30)]
    large = [meta(f"b{i:039x}", lines=300) for i in range(30)]
    bugs = [stratum(m, CONFIG) for m in large[:3]] + [stratum(small[0], CONFIG)]
    picks = pick_clean(small + large, Quota(8, bugs), CONFIG, Known(NOW, set(), set()), lambda m: None, Counter())
    sizes = Counter(p.stratum.split("/")[0] for p in picks)
    assert sizes == {"201+": 6, "1-5": 2}
    again = pick_clean(
        list(reversed(small + large)), Quota(8, list(reversed(bugs))), CONFIG, Known(NOW, set(), set()), lambda m: None, Counter()
    )
    assert [p.sha for p in again] == [p.sha for p in picks]


def test_a_check_asked_in_batches_picks_what_one_at_a_time_picks_and_asks_nothing_more() -> None:
    """The judged sample asks every stratum's round at once (the judge's calls run side by side); with
    refusals scattered over the strata, its picks, its counts of refusals and the candidates it asks are
    those of asking one at a time."""
    from miner.stages.clean import stratum

    commits = [meta(f"{i:040x}", lines=[2, 40, 300][i % 3], paths=(f"src/m{i % 4}.py",)) for i in range(90)]
    bugs = [stratum(commits[i], CONFIG) for i in (0, 1, 2, 3, 4, 5, 7)]
    refuse = {m.sha for m in random.Random(3).sample(commits, 30)}

    def one(m: CommitMeta) -> str | None:
        asked_one.append(m.sha)
        return "judge_real_defect" if m.sha in refuse else None

    class Batched:
        def __call__(self, m: CommitMeta) -> str | None:
            raise AssertionError("asked one at a time")

        def many(self, ms: list[CommitMeta]) -> list[str | None]:
            rounds.append(len(ms))
            asked_many.extend(m.sha for m in ms)
            return ["judge_real_defect" if m.sha in refuse else None for m in ms]

    asked_one: list[str] = []
    asked_many: list[str] = []
    rounds: list[int] = []
    dropped_one: Counter[str] = Counter()
    dropped_many: Counter[str] = Counter()
    known = Known(NOW, set(), set())
    singly = pick_clean(commits, Quota(12, bugs), CONFIG, known, one, dropped_one)
    batched = pick_clean(commits, Quota(12, bugs), CONFIG, known, Batched(), dropped_many)
    assert [p.sha for p in batched] == [p.sha for p in singly] and len(singly) == 12
    assert dropped_many == dropped_one and dropped_one["judge_real_defect"] > 0
    assert sorted(asked_many) == sorted(asked_one)
    assert rounds[0] == 12  # the first round asks every stratum its share at once


def test_strata_short_of_candidates_are_filled_from_the_rest() -> None:
    from miner.stages.clean import stratum

    small = [meta(f"a{i:039x}", lines=2) for i in range(10)]
    bugs = [stratum(meta("z" * 40, lines=300), CONFIG)] * 4
    picks = pick_clean(small, Quota(4, bugs), CONFIG, Known(NOW, set(), set()), lambda m: None, Counter())
    assert len(picks) == 4


def test_a_fix_soon_after_in_the_same_file_is_a_reason() -> None:
    from miner.stages.clean import FixTouches

    change = meta("c" * 40, days_old=800, paths=("src/a.py",))
    fix = meta("f" * 40, days_old=700, paths=("src/a.py",))  # 100 days later, same file
    other = meta("e" * 40, days_old=700, paths=("src/b.py",))  # same time, another file
    late = meta("d" * 40, days_old=300, paths=("src/a.py",))  # 500 days later
    assert reason(change) is None
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([fix])) == "fix_followed_nearby"
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([late])) is None
    # The same directory counts by default; with scope "file" only the same file does.
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([other])) == "fix_followed_nearby"
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([other]), "file") is None
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([fix]), "file") == "fix_followed_nearby"
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([fix]), "lines") is None
    elsewhere = meta("b" * 40, days_old=700, paths=("lib/b.py",))
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([elsewhere])) is None
    off = CONFIG.with_overrides(clean={"fix_window_days": 0})
    assert why_not_clean(change, off, NOW, set(), set(), FixTouches([fix])) is None


def test_fix_touches_tell_how_near_a_fix_followed_and_which() -> None:
    from miner.stages.clean import FixTouches

    change = meta("c" * 40, days_old=800, paths=("src/a.py", "src/lib/b.py"))
    same_file = meta("1" * 40, days_old=700, paths=("src/a.py", "docs/a.md"))
    same_dir = meta("2" * 40, days_old=750, paths=("src/c.py",))
    deeper = meta("3" * 40, days_old=760, paths=("src/lib/sub/d.py",))  # another directory, below the change's
    before = meta("4" * 40, days_old=900, paths=("src/a.py",))
    late = meta("5" * 40, days_old=300, paths=("src/a.py",))
    touches = FixTouches([same_file, same_dir, deeper, before, late])
    assert touches.nearest(change, ["src/a.py"], 365) == "file"
    assert touches.nearest(change, ["src/lib/b.py"], 365) is None
    assert FixTouches([same_dir, deeper]).nearest(change, ["src/a.py", "src/lib/b.py"], 365) == "directory"
    assert touches.nearest(change, ["src/a.py"], 40) is None  # the window ends before the first fix
    # The fixes in the window, oldest first, each with its files in the change's directories.
    assert touches.followed(change, ["src/a.py", "src/lib/b.py"], 365) == [("2" * 40, ("src/c.py",)), ("1" * 40, ("src/a.py",))]


def near(sha: str, tier: str) -> CommitMeta:
    """A candidate that no fix followed (``far``), one a fix followed in its directory (``dir``) or in its file (``file``)."""
    return meta(sha, days_old=800, paths={"far": ("far/a.py",), "dir": ("near/a.py",), "file": ("near/b.py",)}[tier])


# Fixes 100 days after the candidates, in near/b.py: a fix in the files of the "file" candidates, in the
# directory of the "dir" ones, nowhere near the "far" ones.
FIXES = [meta("f" * 40, days_old=700, paths=("near/b.py",))]


def tiered(far: int, dir_: int, file: int) -> list[CommitMeta]:
    return (
        [near(f"a{i:039x}", "far") for i in range(far)]
        + [near(f"b{i:039x}", "dir") for i in range(dir_)]
        + [near(f"c{i:039x}", "file") for i in range(file)]
    )


def test_the_sample_goes_past_the_fix_window_only_as_far_as_it_must() -> None:
    """With a fallback, the candidates a fix followed nearby are drawn only when those it did not are too
    few, the nearer ones last; a sample that needs none of them is the one without a fallback."""
    from miner.stages.clean import FixTouches

    known = Known(NOW, set(), {"f" * 40}, FixTouches(FIXES))
    commits = tiered(3, 4, 4)
    every = ("directory", "file", "lines")

    def pick(count: int, scopes: tuple[str, ...] = every, check=lambda m: None) -> tuple[list, Counter[str]]:
        dropped: Counter[str] = Counter()
        return pick_clean(commits, Quota(count), CONFIG, known, check, dropped, scopes), dropped  # type: ignore[arg-type]

    strict, strict_dropped = pick(2, ("directory",))
    enough, dropped = pick(2)
    assert [p.sha for p in enough] == [p.sha for p in strict] and dropped == strict_dropped
    assert dropped == {"fix_followed_nearby": 8, "not_sampled": 1}
    assert all(p.fix_nearby is None for p in enough)
    five, dropped = pick(5)
    assert Counter(p.fix_nearby for p in five) == {None: 3, "directory": 2}
    assert dropped == {"not_sampled": 2, "fix_followed_nearby": 4}  # the file tier was never reached
    every_one, dropped = pick(20)
    assert Counter(p.fix_nearby for p in every_one) == {None: 3, "directory": 4, "file": 4} and not dropped
    # Without "lines", a fix in its own file keeps a candidate out whatever the quota.
    _, dropped = pick(20, ("directory", "file"))
    assert dropped == {"fix_followed_nearby": 4}
    # A candidate the checks refuse makes room for one of the next tier.
    refused, dropped = pick(3, check=lambda m: "corrected_later" if m.sha == "a" + "0" * 39 else None)
    assert Counter(p.fix_nearby for p in refused) == {None: 2, "directory": 1} and dropped["corrected_later"] == 1


def test_a_fallback_sample_keeps_to_the_strata_of_the_bug_fixtures() -> None:
    from miner.stages.clean import FixTouches, stratum

    known = Known(NOW, set(), {"f" * 40}, FixTouches(FIXES))

    def sized(sha: str, tier: str, path: str, lines: int) -> CommitMeta:
        return near(sha, tier).model_copy(update={"files": (FileStat(path=path, added=lines, removed=0),)})

    small = [sized(f"a{i:039x}", "far", "far/a.py", 2) for i in range(2)]
    large = [sized(f"b{i:039x}", "dir", "near/a.py", 300) for i in range(6)]
    wide = [near(f"c{i:039x}", "dir") for i in range(6)]  # 10 lines: a stratum no bug fixture has
    bugs = [stratum(large[0], CONFIG)] * 3 + [stratum(small[0], CONFIG)]
    picks = pick_clean(small + large + wide, Quota(4, bugs), CONFIG, known, lambda m: None, Counter(), ("directory", "file"))
    # Both small ones (the first tier, whatever their stratum's share), then the large stratum's share from the next.
    assert Counter(p.stratum.split("/")[0] for p in picks) == {"1-5": 2, "201+": 2}


def test_what_a_short_clean_sample_says_of_itself() -> None:
    from miner.stages.clean import clean_quota

    dropped = Counter({"is_fix": 40, "no_source_change": 30, "fix_followed_nearby": 25, "too_young": 3, "layout_only": 1})
    quota = clean_quota(10, 1, 100, dropped)
    assert quota.model_dump() == {
        "wanted": 10,
        "found": 1,
        "reached": False,
        "candidates": 30,  # 100 offered, 70 of them no change a clean fixture may be made of
        "too_few_changes": False,
        "stopped_most": "fix_followed_nearby",
        "stopped_most_count": 25,
    }
    few = clean_quota(10, 4, 100, Counter({"is_fix": 60, "no_source_change": 34, "layout_only": 2, "not_sampled": 0}))
    assert few.too_few_changes and few.candidates == 6 and few.stopped_most == "layout_only"
    assert clean_quota(3, 3, 10, Counter({"not_sampled": 7})).reached


def diff(path: str, added: list[str], removed: list[str] = (), *, link: bool = False) -> FileDiff:  # type: ignore[assignment]
    return FileDiff(
        old_path=path, new_path=path, link=link, added=tuple(enumerate(added, 1)), removed=tuple(enumerate(removed, 1))
    )


def sides(before: str, after: str):
    return lambda d: (before.encode(), after.encode())


def test_unreviewable_changes() -> None:
    code = "def f(x):\n    return x + 1\n"
    two = "def f(x):\n    y = x * 2\n    return y + 1\n"
    assert (
        unreviewable([diff("src/a.py", ["    y = x * 2", "    return y + 1"], ["    return x + 1"])], sides(code, two), CONFIG)
        is None
    )
    # One line of code changed is no pull request a reviewer judges (clean.min_code_lines).
    assert unreviewable([diff("src/a.py", ["    return x + 2"])], sides(code, code.replace("1", "2")), CONFIG) == "too_small"
    assert (
        unreviewable(
            [diff("src/a.py", ["    return x + 2"])],
            sides(code, code.replace("1", "2")),
            CONFIG.with_overrides(clean={"min_code_lines": 1}),
        )
        is None
    )
    commented = code.replace("def f(x):", "def f(x):\n    # add one")
    assert unreviewable([diff("src/a.py", ["    # add one"])], sides(code, commented), CONFIG) == "layout_only"
    requoted = ("x = 'a'\n", 'x = "a"\n')
    assert unreviewable([diff("src/a.py", ['x = "a"'], ["x = 'a'"])], sides(*requoted), CONFIG) == "layout_only"
    typed = ("def f(x):\n    return x\n", "def f(x: int) -> int:\n    return x\n")
    assert unreviewable([diff("src/a.py", ["def f(x: int) -> int:"], ["def f(x):"])], sides(*typed), CONFIG) == "types_only"
    assert unreviewable([diff("vendor/x", ["Subproject commit 1"], link=True)], sides("", ""), CONFIG) == "no_source_change"
    assert (
        unreviewable([diff("lib/sub", ["Subproject commit 2"], ["Subproject commit 1"], link=True)], sides("", ""), CONFIG)
        == "submodule_only"
    )
    bump = [diff("src/version.py", ['__version__ = "1.2.4"'], ['__version__ = "1.2.3"'])]
    assert unreviewable(bump, sides('__version__ = "1.2.3"\n', '__version__ = "1.2.4"\n'), CONFIG) == "bump_only"
    year = [diff("src/a.c", ["/* (c) 2024 */ int y = 2024;"], ["/* (c) 2023 */ int y = 2023;"])]
    assert unreviewable(year, sides("int y = 2023;\n", "int y = 2024;\n"), CONFIG) == "bump_only"
    # A release: the version and its checksums change, and the notes in a docs file do not count.
    tap = [
        diff("pkg/tap.py", ['VERSION = "0.9.1"', 'SHA = "' + "b" * 64 + '"'], ['VERSION = "0.9.0"', 'SHA = "' + "a" * 64 + '"']),
        diff("CHANGES.md", ["## 0.9.1", "- Faster search"]),
    ]
    assert unreviewable(tap, sides('VERSION = "0.9.0"\n', 'VERSION = "0.9.1"\n'), CONFIG) == "bump_only"
    # A pin moved from a release candidate to the release, in a requirements file and setup.py.
    pins = [
        diff("requirements-dev.txt", ["pytest-httpbin==2.1.0"], ["pytest-httpbin==2.1.0rc1"]),
        diff("setup.py", ['    "pytest-httpbin==2.1.0",'], ['    "pytest-httpbin==2.1.0rc1",']),
    ]
    pinned = sides('x = ["pytest-httpbin==2.1.0rc1"]\n', 'x = ["pytest-httpbin==2.1.0"]\n')
    assert unreviewable(pins, pinned, CONFIG) == "bump_only"


def test_a_rename_is_unreviewable_only_when_no_old_name_is_left() -> None:
    before = "def count_of(item):\n    return LEVELS[item]\n\n\ndef total(items):\n    return sum(count_of(i) for i in items)\n"
    after = before.replace("count_of", "quantity_of")
    renamed = [
        diff(
            "src/stock.py",
            ["def quantity_of(item):", "    return sum(quantity_of(i) for i in items)"],
            ["def count_of(item):", "    return sum(count_of(i) for i in items)"],
        )
    ]
    asked: list[set[str]] = []

    def nowhere(names: set[str]) -> bool:
        asked.append(names)
        return False

    assert unreviewable(renamed, sides(before, after), CONFIG, nowhere) == "rename_only"
    assert asked == [{"count_of"}]
    # A caller elsewhere still uses the old name: the rename broke it, a reviewer should see it.
    assert unreviewable(renamed, sides(before, after), CONFIG, lambda names: True) is None
    # Renaming one use but not the definition changes behaviour.
    half = before.replace("sum(count_of", "sum(quantity_of")
    assert unreviewable(renamed, sides(before, half), CONFIG, lambda names: False) is None


def test_a_release_commit_is_not_clean() -> None:
    for subject in (
        "v2.32.3",
        "Release jq-1.6",
        "Bump version to 0.8.9",
        "libmultipath: bump version to 0.14.3",
        "Prepare for 1.2 release",
    ):
        assert reason(meta("c" * 40, days_old=800).model_copy(update={"message": subject + "\n"})) == "release_commit", subject
    for subject in ("Add release notes", "Update version handling in cli", "Fix crash in the 1.2 parser"):
        assert reason(meta("c" * 40, days_old=800).model_copy(update={"message": subject + "\n"})) != "release_commit", subject


def test_a_change_typed_as_docs_style_or_chore_is_not_clean() -> None:
    def why(subject: str) -> str | None:
        return reason(meta("c" * 40, days_old=800).model_copy(update={"message": subject + "\n"}))

    typed = ("doc: clarify the --glob help", "docs(api): document the all type", "style: reorder imports", "chore: bump marked")
    for subject in typed:
        assert why(subject) == "not_review_type", subject
    # Other types, no type at all, and a type named in the body only, stay candidates.
    for subject in ("feat: add a frobnicator", "refactor(core): split the parser", "Document the docs: directory"):
        assert why(subject) is None, subject


def test_corrections_are_read_from_the_message() -> None:
    def msg(text: str) -> CommitMeta:
        return meta("f" * 40).model_copy(update={"message": text})

    assert reads_as_correction(msg("Bump year in the golden files"), CONFIG, set())
    assert reads_as_correction(msg("Correct the release condition"), CONFIG, set())
    assert reads_as_correction(msg("Fix the workflow"), CONFIG, set())
    assert reads_as_correction(msg('Revert "x"\n\nThis reverts commit ' + "a" * 40 + "."), CONFIG, set())
    assert reads_as_correction(msg("Tidy up"), CONFIG, {"f" * 40})  # a fix by the walk's rules
    assert not reads_as_correction(msg("Add a search box"), CONFIG, set())


class LaterHistory:
    """Later commits of a change C, each with the diff it made and what blame says of its lines."""

    def __init__(self, later: list[tuple[CommitMeta, list[FileDiff], str]]) -> None:
        self.later = later

    def later_commits(self, sha: str, head: str, paths: list[str], until: int) -> list[CommitMeta]:
        return [m for m, _, _ in self.later if m.committer_time <= until]

    def diffs(self, shas: Iterable[str]) -> Iterator[tuple[str, list[FileDiff]]]:
        found = {m.sha: d for m, d, _ in self.later}
        for sha in shas:
            yield sha, found[sha]

    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]:
        owner = next(o for m, _, o in self.later if m.parents[0] == rev)
        return [BlameHit(final_line=n, sha=owner, orig_path=path, orig_line=n) for n in lines]

    def blame_from(
        self, base: str | None, rev: str, path: str, lines: Iterable[int] | None, ignore: Iterable[str] = ()
    ) -> tuple[list[BlameHit], set[str]]:
        return self.blame(rev, path, lines or []), set()


def test_a_later_correction_of_the_changes_lines_in_any_file_disqualifies_it() -> None:
    change = meta("c" * 40, days_old=800, paths=("src/a.py", ".github/workflows/ci.yml"))
    mine = [diff("src/a.py", ["x = 1"]), diff(".github/workflows/ci.yml", ["if: x == false"])]

    def later(sha: str, days_old: int, message: str, owner: str) -> tuple[CommitMeta, list[FileDiff], str]:
        m = meta(sha, days_old=days_old, parents=(sha[:-1] + "0",)).model_copy(update={"message": message})
        return m, [diff(".github/workflows/ci.yml", ["if: x != 'true'"], ["if: x == false"])], owner

    fixed = LaterHistory([later("1" * 40, 790, "Fix the release condition", change.sha)])
    assert corrected_by(change, mine, fixed, "h" * 40, CONFIG, set()) == "1" * 40
    # A correction of someone else's lines, a change that reads as no correction, or one after the
    # waiting window do not count.
    assert corrected_by(change, mine, LaterHistory([later("2" * 40, 790, "Fix it", "e" * 40)]), "h" * 40, CONFIG, set()) is None
    assert (
        corrected_by(change, mine, LaterHistory([later("3" * 40, 790, "Run on tags too", change.sha)]), "h" * 40, CONFIG, set())
        is None
    )
    assert corrected_by(change, mine, LaterHistory([later("4" * 40, 100, "Fix it", change.sha)]), "h" * 40, CONFIG, set()) is None


def test_the_later_changes_a_judge_is_shown_are_every_rewrite_of_the_changes_lines_in_the_window() -> None:
    change = meta("c" * 40, days_old=800, paths=("src/a.py",))
    mine = [diff("src/a.py", ["x = 1"])]

    def later(sha: str, days_old: int, message: str, owner: str) -> tuple[CommitMeta, list[FileDiff], str]:
        m = meta(sha, days_old=days_old, parents=(sha[:-1] + "0",)).model_copy(update={"message": message})
        return m, [diff("src/a.py", ["x = 2"], ["x = 1"])], owner

    history = LaterHistory(
        [
            later("1" * 40, 795, "Tidy the setup", change.sha),  # no correction by its words: shown all the same
            later("2" * 40, 790, "Use the new name", "e" * 40),  # someone else's lines
            later("3" * 40, 100, "Fix x", change.sha),  # after the waiting window
        ]
    )
    found = later_changes(change, mine, history, "h" * 40, CONFIG)
    assert [(m.sha, paths) for m, paths in found] == [("1" * 40, ["src/a.py"])]
    assert corrected_by(change, mine, history, "h" * 40, CONFIG, set()) is None
    assert (
        later_changes(
            change,
            mine,
            LaterHistory([later(str(n) * 40, 799 - n, "x", change.sha) for n in range(1, 6)]),
            "h" * 40,
            CONFIG,
            limit=3,
        )[-1][0].sha
        == "3" * 40
    )


# -- clean checks an earlier build answered: which still hold at a newer head ----------------------


def test_an_earlier_clean_check_holds_only_while_nothing_new_can_change_its_answer(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"README": b"readme\n"}, "Change", "2024-01-01T00:00:00Z")
    a = commit(repo, {"a.py": b"def a():\n    return 1\n"}, "Change", "2024-01-02T00:00:00Z")
    c = commit(repo, {"c.py": b"def c():\n    return 3\n"}, "Change", "2024-01-03T00:00:00Z")
    old = commit(repo, {"b.py": b"def b():\n    return 2\n"}, "Change", "2024-01-04T00:00:00Z")
    # A side branch, long after the waiting window, changes a.py; its merge differs from main there.
    git(repo, "checkout", "-q", "-b", "side", c)
    commit(repo, {"a.py": b"def a():\n    return 10\n"}, "Change", "2026-01-01T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge side", "side", date="2026-01-02T00:00:00Z")
    new = git(repo, "rev-parse", "HEAD").strip()
    r = Repo(repo)
    config = load_config()
    commits = {sha: m for sha in (a, c) if (m := r.meta(sha)) is not None}
    earlier = {sha: Checked(old, fixes_digest(()), None) for sha in (a, c)}
    # At the same head every answer holds; at the new head only c's: the merge takes a.py from the
    # side branch, so for a.py git's simplified history follows that branch alone, not main.
    assert still_answered(r, old, config, commits, set(), earlier) == {a: None, c: None}
    assert still_answered(r, new, config, commits, set(), earlier) == {c: None}
    # A merge that is like none of its parents in c.py keeps both in that history: c's answer holds.
    git(repo, "checkout", "-q", "-b", "other", c)
    commit(repo, {"c.py": b"def c():\n    return 30\n"}, "Change", "2026-02-01T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "-X", "theirs", "other", date="2026-02-02T00:00:00Z")
    evil = commit(repo, {"c.py": b"def c():\n    return 300\n"}, "Change", "2026-02-02T00:00:00Z")
    assert still_answered(r, evil, config, commits, set(), earlier) == {c: None}
    # What git follows is decided by the files the candidate added lines to, not every file it touched:
    # x adds to p.py and only deletes from q.py; a merge takes p.py from its side branch (so git follows
    # that branch alone for p.py) while it differs from both parents in q.py.
    git(repo, "checkout", "-q", "main")
    commit(repo, {"q.py": b"one = 1\ntwo = 2\n"}, "Change", "2024-01-05T00:00:00Z")
    x = commit(repo, {"p.py": b"p = 1\n", "q.py": b"one = 1\n"}, "Change", "2024-01-06T00:00:00Z")
    before = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "third", x)
    commit(repo, {"p.py": b"p = 2\n", "q.py": b"one = 10\n"}, "Change", "2026-03-01T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    commit(repo, {"q.py": b"one = 100\n"}, "Change", "2026-03-02T00:00:00Z")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "-X", "theirs", "third", date="2026-03-03T00:00:00Z")
    after = commit(repo, {"q.py": b"one = 1000\n"}, "Change", "2026-03-03T00:00:00Z")
    meta_x = r.meta(x)
    assert meta_x is not None
    asked = {x: Checked(before, fixes_digest(()), None), c: Checked(before, fixes_digest(()), "whitespace_only")}
    # c's answer is about the change alone: it holds at any head.
    assert still_answered(r, after, config, {x: meta_x}, set(), asked) == {c: "whitespace_only"}
    # That an object was missing is asked again, even at the same head (it may have been fetched since).
    missing = {a: Checked(old, fixes_digest(()), "clean_missing_object")}
    assert still_answered(r, old, config, commits, set(), missing) == {}
    # A new commit within the waiting window (dated back, as a rebased branch may be) stops them all.
    recent = commit(repo, {"d.py": b"def d():\n    return 4\n"}, "Change", "2024-02-01T00:00:00Z")
    assert still_answered(r, recent, config, commits, set(), earlier) == {}
    # An old commit that became a fix, a head that is not below the new one on its first parents,
    # and a new head older than the old one: asked again.
    assert still_answered(r, new, config, commits, {a}, earlier) == {}
    assert (
        still_answered(
            r, new, config, commits, set(), {c: Checked(git(repo, "rev-parse", "side").strip(), fixes_digest(()), None)}
        )
        == {}
    )
    assert still_answered(r, old, config, commits, set(), {c: Checked(new, fixes_digest(()), None)}) == {}


def _line_history(repo: Path, seed: int) -> list[str]:
    """Two files of a dozen lines edited a few lines at a time on several branches, merged now and
    then (a line may come back to an older text, so a merge can match either parent)."""
    rng = random.Random(seed)
    git(repo, "init", "-q", "-b", "main")
    texts = {name: [f"{name} {i} start" for i in range(12)] for name in ("a.py", "b.py")}
    made = [commit(repo, {n: ("\n".join(t) + "\n").encode() for n, t in texts.items()}, "Start", "2024-01-01T00:00:00Z")]
    branches = ["main"]
    for step in range(45):
        date = f"2024-01-{1 + step // 2:02d}T{step % 2 + 1:02d}:00:00Z"
        roll = rng.random()
        if roll < 0.15:
            name = f"b{step}"
            git(repo, "checkout", "-q", "-b", name, rng.choice(made))
            branches.append(name)
            continue
        if roll < 0.3 and len(branches) > 1:
            git(repo, "checkout", "-q", "main")
            other = rng.choice(branches[1:])
            merge = ["git", "-C", str(repo), "merge", "-q", "--no-edit", other]
            done = subprocess.run(merge, capture_output=True, env=_env(date))
            if done.returncode != 0:  # a conflict: keep ours
                git(repo, "checkout", "-q", "--ours", ".")
                git(repo, "add", "-A")
                git(repo, "commit", "-q", "--no-edit", date=date)
            made.append(git(repo, "rev-parse", "HEAD").strip())
            continue
        git(repo, "checkout", "-q", rng.choice(branches))
        files = {}
        for name in rng.sample(sorted(texts), rng.randint(1, 2)):
            lines = (repo / name).read_text().splitlines()
            for i in rng.sample(range(len(lines)), rng.randint(1, 3)):
                lines[i] = rng.choice([f"{name} {i} step {step}", f"{name} {i} start"])
            files[name] = ("\n".join(lines) + "\n").encode()
        made.append(commit(repo, files, f"Change {step}", date))
    return made


def _env(date: str) -> dict[str, str]:
    fields = (("NAME", "Ann"), ("EMAIL", "a@b"), ("DATE", date))
    return {**os.environ, **{f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER") for what, value in fields}}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_later_commit_rewrote_the_changes_lines_as_a_full_blame_says(tmp_path: Path, seed: int) -> None:
    """``rewrote`` blames only as far back as the change's parent: it finds the same files as blame
    over the whole history would, across branches and merges, for every commit ``later_commits`` can
    give it: descendants of the change, and commits of other branches (a sibling among them, whose
    parent is the change's own)."""
    path = tmp_path / "r"
    path.mkdir()
    made = _line_history(path, seed)
    repo = Repo(path)
    metas = {sha: repo.meta(sha) for sha in made}
    diffs = dict(repo.diffs(made))
    rng = random.Random(seed)
    checked = found = siblings = 0
    for change in made:
        cm = metas[change]
        if cm is None or len(cm.parents) != 1:
            continue
        for later_sha in rng.sample(made, 20):
            lm = metas[later_sha]
            if lm is None or not lm.parents or repo.is_ancestor(later_sha, change):
                continue  # later_commits lists only commits the change cannot reach
            full = [
                d.old_path
                for d in diffs[later_sha]
                if d.old_path
                and d.removed
                and any(h.sha == change for h in repo.blame(lm.parents[0], d.old_path, [n for n, _ in d.removed]))
            ]
            assert rewrote(cm, lm, diffs[later_sha], repo) == full, (change, later_sha)
            checked += 1
            found += bool(full)
            siblings += lm.parents[0] == cm.parents[0]
    assert checked > 40 and found > 8 and siblings > 0, (checked, found, siblings)


# -- a build short of clean fixtures: what it says, and what a judged build does ---------------------

# Keeps every clean candidate and writes each packet it reads to the folder it is given.
KEEPER = """
import json, pathlib, sys
packet = json.load(sys.stdin)
pathlib.Path(sys.argv[1], packet["change"] + ".json").write_text(json.dumps(packet))
print(json.dumps({"plausible_pr": "yes", "later_fixed": "no", "real_defect": "no"}))
"""


def _one_directory(repo: Path) -> dict[str, str]:
    """A project whose code is one directory: three changes that a fix followed within months (in the
    file of the first, beside the others), and one in another directory that none did."""
    git(repo, "init", "-q", "-b", "main")
    code = {name: f"def {name}(x):\n    return x\n".encode() for name in ("a", "b", "c")}
    commit(repo, {f"pkg/{n}.py": text for n, text in code.items()}, "Import", "2020-01-01T10:00:00Z")
    made = {}
    for n, name in enumerate(("a", "b", "c"), 2):
        code[name] += f"\n\ndef {name}2(y):\n    z = y * {n}\n    return z + 1\n".encode()
        made[name] = commit(repo, {f"pkg/{name}.py": code[name]}, f"Add {name}2", f"2020-0{n}-01T10:00:00Z")
    made["fix"] = commit(
        repo, {"pkg/a.py": code["a"].replace(b"return x\n", b"return x or 0\n", 1)}, "Fix crash on None", "2020-06-01T10:00:00Z"
    )
    tool = b"def main():\n    value = 1\n    return value + 1\n"
    made["far"] = commit(repo, {"tools/run.py": tool}, "Add a runner", "2022-01-01T10:00:00Z")
    commit(repo, {"README.md": b"pkg\n"}, "Readme", "2023-06-01T10:00:00Z")
    return made


def test_a_build_short_of_clean_fixtures_says_why_and_a_judged_build_reaches_the_ratio(tmp_path: Path) -> None:
    from miner.commands.build import BuildOptions, JudgeCommand, build, summary_table

    repo = tmp_path / "repo"
    repo.mkdir()
    made = _one_directory(repo)
    plain = build([repo], tmp_path / "plain", CONFIG, progress=False)
    (report,) = plain.reports
    assert report.clean == 1 and report.clean_quota is not None
    assert report.clean_quota.model_dump() == {
        "wanted": 3,
        "found": 1,
        "reached": False,
        "candidates": 4,
        "too_few_changes": False,
        "stopped_most": "fix_followed_nearby",
        "stopped_most_count": 3,
    }
    assert report.to_json()["clean_quota"]["stopped_most"] == "fix_followed_nearby"
    summary = summary_table(plain, CONFIG)
    assert "repo clean: 1 of 3 wanted (clean.ratio); of 4 changes a clean fixture may be made of, kept out most: " in summary
    assert "fix_followed_nearby 3; relax it with clean.fix_window_fallback" in summary
    # Wanting more than there are changes a clean fixture may be made of is no rule's choice.
    more = CONFIG.with_overrides(clean={"min_count": 10})
    summary = summary_table(build([repo], tmp_path / "more", more, progress=False), more)
    assert "repo clean: 1 of 10 wanted (clean.ratio); too few changes exist: 4 commits change source code" in summary

    packets = tmp_path / "packets"
    packets.mkdir()
    script = tmp_path / "keeper.py"
    script.write_text(KEEPER)
    judge = JudgeCommand(f"{sys.executable} {script} {packets}")
    judged = build([repo], tmp_path / "judged", CONFIG, BuildOptions(judge=judge), progress=False)
    (report,) = judged.reports
    assert report.clean == 3 and report.clean_quota is not None and report.clean_quota.reached
    assert "wanted (clean.ratio)" not in summary_table(judged, CONFIG)
    answers = {a["head"]: a for a in _answers(tmp_path / "judged") if a["kind"] == "clean"}
    # The change no fix followed, then the two a fix followed beside them (not in their own file).
    assert set(answers) == {made["far"], made["b"], made["c"]}
    assert answers[made["far"]]["fix_nearby"] is None and answers[made["far"]]["clean_confidence"] == "high"
    assert answers[made["b"]]["fix_nearby"] == "directory" and answers[made["b"]]["clean_confidence"] == "medium"
    from miner.commands.explain import explain

    told = explain(tmp_path / "judged", answers[made["b"]]["id"])
    assert "a fix followed it elsewhere in its directories within clean.fix_window_days" in told
    assert "fix_window" not in explain(tmp_path / "judged", answers[made["far"]]["id"])
    # The judge read the fix that followed beside each: its message and its diff of their directory.
    far, near_b = (json.loads((packets / f"{made[k]}.json").read_text()) for k in ("far", "b"))
    assert "nearby" not in far and far["version"] == 4
    (fix,) = near_b["nearby"]
    assert fix["commit"] == made["fix"] and fix["message"].startswith("Fix crash on None")
    assert "+++ b/pkg/a.py" in fix["diff"] and near_b["nearby_left_out"] == 0
    # Without a fallback, a judged build keeps to the blanket window as a plain one does.
    strict = CONFIG.with_overrides(clean={"judged_fix_window_fallback": []})
    (report,) = build([repo], tmp_path / "strict", strict, BuildOptions(judge=judge), progress=False).reports
    assert report.clean == 1


def _answers(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "answers").glob("*.json"))]


def test_the_fallback_scopes_are_those_narrower_than_the_fix_window_scope() -> None:
    """A user who narrows clean.fix_window_scope to file keeps the judged fallback's lines, and a
    fallback scope no narrower than the one before it is passed over rather than refused."""
    from miner.core.config import load_config
    from miner.stages.clean import fix_window_scopes

    config = load_config()
    assert config.clean.judged_fix_window_fallback == ["file", "lines"] and config.clean.fix_window_fallback == []
    assert fix_window_scopes(config) == ("directory",)
    assert fix_window_scopes(config, judged=True) == ("directory", "file", "lines")
    narrowed = config.with_overrides(clean={"fix_window_scope": "file"})
    assert fix_window_scopes(narrowed, judged=True) == ("file", "lines")
    odd = config.with_overrides(clean={"fix_window_scope": "file", "fix_window_fallback": ["directory", "file", "lines"]})
    assert fix_window_scopes(odd) == ("file", "lines")
