"""The clean stage's rules and its seeded sample, on records written here (no git)."""

from __future__ import annotations

from collections import Counter

from miner.clean import pick_clean, why_not_clean
from miner.config import load_config
from miner.records import CommitMeta, FileStat

CONFIG = load_config()
DAY = 86400
NOW = 1000 * DAY


def meta(sha: str, *, days_old: int = 400, paths: tuple[str, ...] = ("src/a.py",), lines: int = 10,
         author: str = "Ann", parents: tuple[str, ...] = ("p" * 40,)) -> CommitMeta:
    return CommitMeta(sha=sha, parents=parents, author_name=author, author_email="a@example.com",
                      author_time=NOW - days_old * DAY, committer_time=NOW - days_old * DAY, message="Work",
                      files=tuple(FileStat(path=p, added=lines, removed=0) for p in paths))


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
    assert reason(meta("a", paths=("src/a.py", "src/caf\udce9.py"))) == "non_utf8_path"  # b"caf\xe9.py"
    assert reason(meta("a", days_old=364)) == "too_young"
    shorter = CONFIG.with_overrides(clean={"wait_days": 30})
    assert why_not_clean(meta("a", days_old=364), shorter, NOW, set(), set()) is None


def test_sample_is_seeded_and_counts_what_it_leaves() -> None:
    commits = [meta(f"{i:040x}") for i in range(50)]
    dropped: Counter[str] = Counter()
    first = pick_clean(commits, 5, CONFIG, NOW, set(), set(), lambda s: False, dropped)
    again = pick_clean(list(reversed(commits)), 5, CONFIG, NOW, set(), set(), lambda s: False, Counter())
    assert [p.sha for p in first] == [p.sha for p in again]
    assert dropped["not_sampled"] == 45
    other = pick_clean(commits, 5, CONFIG.model_copy(update={"seed": 1}), NOW, set(), set(), lambda s: False, Counter())
    assert [p.sha for p in other] != [p.sha for p in first]
    assert all(p.observed_days == 400 for p in first)


def test_reformats_are_skipped_in_the_sample() -> None:
    commits = [meta(f"{i:040x}") for i in range(10)]
    dropped: Counter[str] = Counter()
    picks = pick_clean(commits, 10, CONFIG, NOW, set(), set(), lambda s: s.endswith("3"), dropped)
    assert len(picks) == 9 and dropped["whitespace_only"] == 1


def test_allocate_is_proportional_and_exact() -> None:
    from miner.clean import allocate

    quotas = allocate(Counter({("1-5", "1", "py"): 6, ("6-20", "1", "py"): 3, ("201+", "4+", "c"): 1}), 5)
    assert sum(quotas.values()) == 5
    assert quotas == {("1-5", "1", "py"): 3, ("6-20", "1", "py"): 2, ("201+", "4+", "c"): 0}


def test_stratified_sample_matches_the_bug_strata() -> None:
    from miner.clean import stratum

    small = [meta(f"a{i:039x}", lines=2) for i in range(30)]
    large = [meta(f"b{i:039x}", lines=300) for i in range(30)]
    bugs = [stratum(m, CONFIG) for m in large[:3]] + [stratum(small[0], CONFIG)]
    picks = pick_clean(small + large, 8, CONFIG, NOW, set(), set(), lambda s: False, Counter(), match=bugs)
    sizes = Counter(p.stratum.split("/")[0] for p in picks)
    assert sizes == {"201+": 6, "1-5": 2}
    again = pick_clean(list(reversed(small + large)), 8, CONFIG, NOW, set(), set(), lambda s: False, Counter(),
                       match=list(reversed(bugs)))
    assert [p.sha for p in again] == [p.sha for p in picks]


def test_strata_short_of_candidates_are_filled_from_the_rest() -> None:
    from miner.clean import stratum

    small = [meta(f"a{i:039x}", lines=2) for i in range(10)]
    bugs = [stratum(meta("z" * 40, lines=300), CONFIG)] * 4
    picks = pick_clean(small, 4, CONFIG, NOW, set(), set(), lambda s: False, Counter(), match=bugs)
    assert len(picks) == 4


def test_a_fix_soon_after_in_the_same_file_is_a_reason() -> None:
    from miner.clean import FixTouches

    change = meta("c" * 40, days_old=800, paths=("src/a.py",))
    fix = meta("f" * 40, days_old=700, paths=("src/a.py",))        # 100 days later, same file
    other = meta("e" * 40, days_old=700, paths=("src/b.py",))      # same time, another file
    late = meta("d" * 40, days_old=300, paths=("src/a.py",))       # 500 days later
    assert reason(change) is None
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([fix])) == "fix_followed_nearby"
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([late])) is None
    # The same directory counts by default; with scope "file" only the same file does.
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([other])) == "fix_followed_nearby"
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([other], "file")) is None
    elsewhere = meta("b" * 40, days_old=700, paths=("lib/b.py",))
    assert why_not_clean(change, CONFIG, NOW, set(), set(), FixTouches([elsewhere])) is None
    off = CONFIG.with_overrides(clean={"fix_window_days": 0})
    assert why_not_clean(change, off, NOW, set(), set(), FixTouches([fix])) is None
