"""The labelling decision, on blame results written here (no git)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import pytest
from samples import build_repo

from miner.core.config import load_config
from miner.core.records import CommitMeta, FileDiff, FileStat, FixCommit
from miner.git import BlameHit, Repo
from miner.stages.blame import FixText, Traced, beside, decide, trace
from miner.stages.walk import find_fixes

CONFIG = load_config()
A, B, ROOT, FIX = "a" * 40, "b" * 40, "c" * 40, "f" * 40


def meta(
    sha: str, parents: tuple[str, ...] = (ROOT,), lines: int = 10, author: str = "Ann", message: str = "Change things"
) -> CommitMeta:
    return CommitMeta(
        sha=sha,
        parents=parents,
        author_name=author,
        author_email="ann@example.com",
        author_time=0,
        committer_time=0,
        message=message,
        files=(FileStat(path="x.py", added=lines, removed=0),),
    )


METAS = {A: meta(A), B: meta(B), ROOT: meta(ROOT, parents=()), "d" * 40: meta("d" * 40, author="dependabot[bot]")}


class NoCosmetic:
    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]:
        return []

    def blob(self, sha: str, path: str) -> bytes | None:
        return None

    def is_cosmetic(self, sha: str) -> bool:
        return False

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return True

    def from_scratch(self, sha: str, path: str, lines: Iterable[int]) -> set[int]:
        return set(lines)  # every line written from scratch: the strongest evidence

    def removed_text(self, sha: str) -> frozenset[str]:
        return frozenset()

    def removed_lines(self, sha: str) -> dict[str, tuple[str, ...]]:
        return {}

    def occurrences(self, revs: Iterable[str], words: Iterable[str]) -> dict[str, Counter[str]]:
        return {rev: Counter() for rev in revs}

    def same_lines(self, new: str, old: str, path: str, lines: Iterable[int]) -> dict[int, int]:
        return {}


def traced(*pairs: tuple[str, int], added_only: bool = False) -> list[Traced]:
    return [
        Traced(BlameHit(final_line=i, sha=sha, orig_path="x.py", orig_line=line), added_only, ())
        for i, (sha, line) in enumerate(pairs, 1)
    ]


def fix(link: str = "keyword", named: tuple[str, ...] = ()) -> FixCommit:
    return FixCommit(meta=meta(FIX, parents=(A,), message="Fix it"), link=link, named=named)


def run(f: FixCommit, t: list[Traced]):
    return decide(f, t, METAS.get, CONFIG, NoCosmetic())


def test_unanimous_blame_is_the_blame_tier_with_merged_line_ranges() -> None:
    (label,) = run(fix(), traced((A, 4), (A, 5), (A, 9)))
    assert (label.intro, label.tier) == (A, "blame")
    assert [(d.line_start, d.line_end) for d in label.defects] == [(4, 5), (9, 9)]
    assert label.defects[0].evidence.lines_agreeing == 3


def test_plurality_and_ties() -> None:
    (label,) = run(fix(), traced((A, 1), (A, 2), (B, 7)))
    assert (label.intro, label.tier) == (A, "plurality")
    assert [c.sha for c in label.defects[0].evidence.candidates] == [A, B]
    (tie,) = run(fix(), traced((A, 1), (B, 7)))  # a tie goes to the newer candidate, in the weak tier
    assert (tie.intro, tie.tier) == (B, "weak")
    strict = CONFIG.with_overrides(labels={"break_ties_by_recency": False})
    (tie,) = decide(fix(), traced((A, 1), (B, 7)), METAS.get, strict, NoCosmetic())
    assert tie.intro is None and tie.dropped == "ambiguous_candidates"


def test_a_much_older_candidate_is_the_weak_tier() -> None:
    year = 365 * 86400
    old = {**METAS, FIX: meta(FIX, parents=(A,))}
    late = FixCommit(
        meta=meta(FIX, parents=(A,), message="Fix it").model_copy(update={"committer_time": 3 * year}), link="keyword"
    )
    (label,) = decide(late, traced((A, 4), (A, 5)), old.get, CONFIG, NoCosmetic())
    assert (label.intro, label.tier) == (A, "weak")  # three years old: maybe a victim line
    soon = late.model_copy(update={"meta": late.meta.model_copy(update={"committer_time": year})})
    (label,) = decide(soon, traced((A, 4), (A, 5)), old.get, CONFIG, NoCosmetic())
    assert (label.intro, label.tier) == (A, "blame")


def test_initial_import_and_bots_are_never_candidates() -> None:
    (label,) = run(fix(), traced((ROOT, 1), (ROOT, 2)))
    assert label.intro is None and label.dropped == "initial_import"
    (label,) = run(fix(), traced(("d" * 40, 1)))
    assert label.dropped == "bot_author"
    (label,) = run(fix(), traced((ROOT, 1), (A, 3)))
    assert (label.intro, label.tier) == (A, "plurality")  # a rejected candidate lowers the tier


def test_explicit_link_needs_blame_to_agree() -> None:
    (label,) = run(fix("trailer", (B,)), traced((A, 1), (B, 2)))
    assert (label.intro, label.tier) == (B, "explicit")
    assert [(d.line_start, d.evidence.link) for d in label.defects] == [(2, "trailer")]
    (label,) = run(fix("revert", (B,)), traced((A, 1)))
    assert label.dropped == "link_not_blamed"
    assert set(label.blamed) == {A, B}  # still both kept out of the clean sample


def test_added_only_is_the_heuristic_tier() -> None:
    (label,) = run(fix(), traced((A, 12), added_only=True))
    assert (label.intro, label.tier, label.defects[0].evidence.link) == (A, "heuristic", "added-only")
    (label,) = run(fix(), traced((A, 12), (B, 30), added_only=True))
    assert label.dropped == "added_only_ambiguous"


def test_no_lines_no_label() -> None:
    (label,) = run(fix(), [])
    assert label.dropped == "no_code_lines"


class Rewrites(NoCosmetic):
    """A history where the candidate only rewrote lines; blaming past it finds ``prior``."""

    def __init__(self, prior: str) -> None:
        self.prior = prior
        self.calls: list[tuple[str, str, tuple[int, ...], tuple[str, ...]]] = []

    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]:
        wanted = tuple(lines)
        self.calls.append((rev, path, wanted, tuple(ignore)))
        return [BlameHit(final_line=n, sha=self.prior, orig_path=path, orig_line=n) for n in wanted]

    def from_scratch(self, sha: str, path: str, lines: Iterable[int]) -> set[int]:
        return set()


DAY = 86400
OLD, NEW = "e" * 40, "9" * 40


def dated(sha: str, day: int) -> CommitMeta:
    return meta(sha).model_copy(update={"committer_time": day * DAY})


def test_unanimous_and_written_from_scratch_is_blame_with_its_evidence() -> None:
    (label,) = run(fix(), traced((A, 4), (A, 5)))
    ev = label.defects[0].evidence
    assert (label.tier, ev.reasons, ev.lines_authored, ev.prior, ev.age_days) == ("blame", ("unanimous", "authored"), 2, (), 0)


def test_a_rewrite_of_lines_written_shortly_before_is_plurality() -> None:
    # A rewrote, on day 200, lines that B wrote on day 150: blame cannot tell which of the two the fix repairs.
    metas = {A: dated(A, 200), B: dated(B, 150), OLD: dated(OLD, 1)}
    late = fix().model_copy(update={"meta": fix().meta.model_copy(update={"committer_time": 300 * DAY})})
    history = Rewrites(B)
    (label,) = decide(late, traced((A, 4), (A, 5)), metas.get, CONFIG, history)
    ev = label.defects[0].evidence
    assert (label.intro, label.tier, ev.reasons, ev.lines_authored, ev.prior) == (
        A,
        "plurality",
        ("unanimous", "rewrote", "recent_prior"),
        0,
        (B,),
    )
    # The second blame ran where the candidate left the lines, looking past it.
    assert history.calls == [(A, "x.py", (4, 5), (A,))]
    # Lines that had stood for years before A rewrote them: A changed them, the evidence is strong.
    (label,) = decide(late, traced((A, 4), (A, 5)), metas.get, CONFIG, Rewrites(OLD))
    assert (label.tier, label.defects[0].evidence.reasons) == ("blame", ("unanimous", "rewrote", "old_prior"))
    # The window is data: with recent_carry_days 30, 50 days between the two writes is long enough.
    short = CONFIG.with_overrides(labels={"recent_carry_days": 30})
    (label,) = decide(late, traced((A, 4), (A, 5)), metas.get, short, Rewrites(B))
    assert label.tier == "blame"


def test_authorship_is_not_measured_for_old_or_ambiguous_answers() -> None:
    history = Rewrites(B)
    old = {A: dated(A, 0)}
    late = fix().model_copy(update={"meta": fix().meta.model_copy(update={"committer_time": 1000 * DAY})})
    (label,) = decide(late, traced((A, 4)), old.get, CONFIG, history)
    assert (label.tier, label.defects[0].evidence.reasons) == ("weak", ("unanimous", "old"))
    (label,) = decide(fix(), traced((A, 1), (A, 2), (B, 7)), METAS.get, CONFIG, history)
    assert (label.tier, label.defects[0].evidence.reasons) == ("plurality", ("most_lines",))
    assert history.calls == []  # no extra blame where it could not change the tier


SPEC = """
author: Ann <ann@example.com>
commits:
  - id: root
    date: 2020-01-06T10:00:00Z
    message: Import
    changes:
      - {write: calc.py, content: "def area(w, h):\\n    return w * h\\n\\n\\ndef half(x):\\n    return x / 2\\n"}
  - id: c_base
    date: 2021-03-01T10:00:00Z
    message: Add perimeter
    changes:
      - {edit: calc.py, append: "\\n\\ndef perimeter(w, h):\\n    return 2 * w + h\\n"}
  - id: c_area
    date: 2023-05-01T10:00:00Z
    message: Area of squares too
    changes:
      - {edit: calc.py, replace: "    return w * h", with: "    return w * (h or w) + 1"}
  - id: c_half
    date: 2023-05-02T10:00:00Z
    message: Halve integers
    changes:
      - {edit: calc.py, replace: "    return x / 2", with: "    return x // 2"}
  - id: c_half2
    date: 2023-05-20T10:00:00Z
    message: Halve towards zero
    changes:
      - {edit: calc.py, replace: "    return x // 2", with: "    return int(x / 3)"}
  - id: fix_perimeter
    date: 2023-06-01T10:00:00Z
    message: Fix the perimeter
    changes:
      - {edit: calc.py, replace: "    return 2 * w + h", with: "    return 2 * (w + h)"}
  - id: fix_area
    message: Fix the area of squares
    changes:
      - {edit: calc.py, replace: "    return w * (h or w) + 1", with: "    return w * (h or w)"}
  - id: fix_half
    message: Fix halving
    changes:
      - {edit: calc.py, replace: "    return int(x / 3)", with: "    return int(x / 2)"}
"""


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory, _isolated_git: None) -> tuple[Repo, dict[str, str]]:
    root = tmp_path_factory.mktemp("authorship")
    (root / "spec").mkdir()
    (root / "spec" / "spec.yaml").write_text(SPEC)
    shas = build_repo(root / "spec", root / "calc")
    return Repo(root / "calc"), shas


def test_from_scratch_tells_appended_lines_from_rewritten_ones(calc: tuple[Repo, dict[str, str]]) -> None:
    repo, shas = calc
    assert repo.from_scratch(shas["c_base"], "calc.py", [7, 8, 9, 10]) == {7, 8, 9, 10}  # appended
    assert repo.from_scratch(shas["c_area"], "calc.py", [1, 2]) == set()  # line 2 rewritten in place
    assert repo.from_scratch(shas["root"], "calc.py", [2]) == {2}  # a root commit wrote everything


def test_tiers_on_a_generated_repository(calc: tuple[Repo, dict[str, str]]) -> None:
    repo, shas = calc
    config = CONFIG.with_overrides(labels={"max_blame_age_days": 3650})
    metas = {m.sha: m for m in repo.commits("HEAD")}
    fixes = {f.meta.sha: f for f in find_fixes(metas.values(), config, repo.expand, Counter())}
    diffs = dict(repo.diffs(list(fixes)))
    got = {}
    for name in ("fix_perimeter", "fix_area", "fix_half"):
        f = fixes[shas[name]]
        (label,) = decide(f, trace(f, diffs[f.meta.sha], repo, config, Counter()), metas.get, config, repo)
        ev = label.defects[0].evidence
        got[name] = (label.intro, label.tier, ev.reasons, ev.prior)
    assert got == {
        # c_base appended the perimeter: it wrote the line from scratch.
        "fix_perimeter": (shas["c_base"], "blame", ("unanimous", "authored"), ()),
        # c_area rewrote a line the initial import wrote: that import could never be the one, so it
        # does not compete (and the line had stood for three years).
        "fix_area": (shas["c_area"], "blame", ("unanimous", "rewrote", "prior_not_candidate"), (shas["root"],)),
        # c_half2 rewrote a line c_half had written 18 days before: which one broke it?
        "fix_half": (shas["c_half2"], "plurality", ("unanimous", "rewrote", "recent_prior"), (shas["c_half"],)),
    }


class Texts(NoCosmetic):
    """A history that also knows file contents and what each commit removed."""

    def __init__(self, files: dict[tuple[str, str], str], removed: dict[str, dict[str, tuple[str, ...]]]) -> None:
        self.files, self.removed = files, removed

    def blob(self, sha: str, path: str) -> bytes | None:
        text = self.files.get((sha, path))
        return None if text is None else text.encode()

    def from_scratch(self, sha: str, path: str, lines: Iterable[int]) -> set[int]:
        return set() if self.removed.get(sha) else set(lines)

    def removed_lines(self, sha: str) -> dict[str, tuple[str, ...]]:
        return self.removed.get(sha, {})

    def removed_text(self, sha: str) -> frozenset[str]:
        return frozenset("".join(t.split()) for lines in self.removed_lines(sha).values() for t in lines)


def test_lines_a_change_only_moved_are_not_its_defects() -> None:
    history = Texts({(A, "x.py"): "a = compute(x)\nb = fresh(y)\n"}, {A: {"y.py": ("a = compute(x)",)}})
    (label,) = decide(fix(), traced((A, 1), (A, 2)), METAS.get, CONFIG, history)
    assert [(d.line_start, d.line_end) for d in label.defects] == [(2, 2)]
    assert "moved_lines_left_out" in label.defects[0].evidence.reasons
    moved = Texts({(A, "x.py"): "a = compute(x)\n"}, {A: {"y.py": ("    a = compute(x)",)}})
    (label,) = decide(fix(), traced((A, 1)), METAS.get, CONFIG, moved)
    assert (label.tier, label.defects[0].evidence.reasons[-1]) == ("weak", "carried")


def test_a_rewrite_that_kept_what_the_fix_changed_is_inherited() -> None:
    # A rewrote "if n > 0:" into "if n > 0 and ready:"; the fix changes the "n > 0" it kept.
    history = Texts({(A, "x.py"): "if n > 0 and ready:\n"}, {A: {"x.py": ("if n > 0:",)}})
    kept = FixText(
        removed=("if n > 0 and ready:",), added=("if n >= 0 and ready:",), added_at=(("x.py", ("if n >= 0 and ready:",)),)
    )
    t = [Traced(BlameHit(final_line=1, sha=A, orig_path="x.py", orig_line=1), False, (), "x.py")]
    (label,) = decide(fix(), t, METAS.get, CONFIG, history, kept)
    assert (label.tier, label.defects[0].evidence.reasons) == ("weak", ("unanimous", "rewrote", "inherited"))
    # The fix changes what A wrote: A's.
    own = FixText(
        removed=("if n > 0 and ready:",), added=("if n > 0 and ready():",), added_at=(("x.py", ("if n > 0 and ready():",)),)
    )
    (label,) = decide(fix(), t, METAS.get, CONFIG, history, own)
    assert label.tier in ("blame", "plurality") and "inherited" not in label.defects[0].evidence.reasons


def test_a_fix_that_restores_the_replaced_text_is_strong_evidence() -> None:
    history = Texts({(A, "x.py"): "return start + size - 1\n"}, {A: {"x.py": ("return start + size",)}})
    back = FixText(
        removed=("return start + size - 1",), added=("return start + size",), added_at=(("x.py", ("return start + size",)),)
    )
    t = [Traced(BlameHit(final_line=1, sha=A, orig_path="x.py", orig_line=1), False, (), "x.py")]
    (label,) = decide(fix(), t, METAS.get, CONFIG, history, back)
    assert (label.tier, label.defects[0].evidence.reasons) == ("blame", ("unanimous", "rewrote", "restores"))


def test_a_label_spanning_many_lines_is_diffuse() -> None:
    (label,) = run(fix(), traced(*((A, n) for n in range(1, 40))))
    assert (label.tier, label.defects[0].evidence.reasons[-1]) == ("diffuse", "diffuse")
    (label,) = run(fix(), traced(*((A, n) for n in range(1, 40, 2))))  # 20 lines, 20 ranges
    assert label.tier == "diffuse"


def test_a_fix_with_the_changes_own_subject_is_no_fix() -> None:
    same = FixCommit(meta=meta(FIX, parents=(A,), message="Change things"), link="keyword")
    (label,) = run(same, traced((A, 1)))
    assert (label.intro, label.dropped) == (None, "fix_repeats_change")


class Counts(NoCosmetic):
    def __init__(self, counts: dict[str, Counter[str]]) -> None:
        self.counts = counts

    def occurrences(self, revs: Iterable[str], words: Iterable[str]) -> dict[str, Counter[str]]:
        return {rev: Counter({w: self.counts[rev][w] for w in words}) for rev in revs}


def test_a_name_the_repository_dropped_after_the_change_marks_a_victim_line() -> None:
    # A used count_of, defined elsewhere; by the fix's parent only A's line still uses it.
    text = FixText(removed=("n = stock.count_of(item)",), added=("n = stock.quantity_of(item)",))
    history = Counts({A: Counter(count_of=3, stock=4, item=9), FIX[:-1] + "0": Counter(count_of=1, stock=4, item=9)})
    f = FixCommit(meta=meta(FIX, parents=(FIX[:-1] + "0",), message="Fix crash in the report"), link="keyword")
    (label,) = decide(f, traced((A, 1)), METAS.get, CONFIG, history, text)
    assert (label.tier, label.defects[0].evidence.reasons[-1]) == ("weak", "victim")
    still = Counts({A: Counter(count_of=3), FIX[:-1] + "0": Counter(count_of=2)})  # still used elsewhere
    (label,) = decide(f, traced((A, 1)), METAS.get, CONFIG, still, text)
    assert label.tier == "blame"


class CountsAndFiles(Counts):
    """A history that says how often names occur in whole trees, holds the fix's file at its parent,
    and records each tree search."""

    def __init__(self, counts: dict[str, Counter[str]], files: dict[tuple[str, str], bytes]) -> None:
        super().__init__(counts)
        self.files = files
        self.searched: list[tuple[str, ...]] = []

    def blob(self, sha: str, path: str) -> bytes | None:
        return self.files.get((sha, path))

    def occurrences(self, revs: Iterable[str], words: Iterable[str]) -> dict[str, Counter[str]]:
        self.searched.append(tuple(sorted(words)))
        return super().occurrences(revs, words)


def test_a_name_the_fixs_own_file_still_uses_needs_no_tree_search() -> None:
    parent = FIX[:-1] + "0"
    f = FixCommit(meta=meta(FIX, parents=(parent,), message="Fix crash in the report"), link="keyword")
    text = FixText(
        removed=("n = stock.count_of(item)  # the count", "total = count_of(item)"),
        added=("n = stock.quantity_of(item)",),
        added_at=(("x.py", ("n = stock.quantity_of(item)",)),),
    )
    # count_of: removed twice, and the file at the parent holds it three times (a third use stays), so
    # it is still used and no tree is searched for it; `total` is removed once and the file holds it
    # once, so the tree is searched for it, and only for it.
    source = b"n = stock.count_of(item)  # the count\ntotal = count_of(item)\nprint(count_of)\n"
    history = CountsAndFiles({A: Counter(count_of=5, total=4), parent: Counter(count_of=3, total=1)}, {(parent, "x.py"): source})
    (label,) = decide(f, traced((A, 1)), METAS.get, CONFIG, history, text)
    assert history.searched[0] == ("total",)
    assert (label.tier, label.defects[0].evidence.reasons[-1]) == ("weak", "victim")  # `total`, gone since A
    # A binary file's bytes are not counted (git grep -I passes over it): the tree is searched for both.
    binary = CountsAndFiles(
        {A: Counter(count_of=5, total=4), parent: Counter(count_of=3, total=1)}, {(parent, "x.py"): b"\0" + source}
    )
    decide(f, traced((A, 1)), METAS.get, CONFIG, binary, text)
    assert binary.searched[0] == ("count_of", "total")


class Around(NoCosmetic):
    """A fix's parent whose x.py holds ``text``; blame gives every line it is asked for to ``sha``."""

    def __init__(self, text: str, sha: str) -> None:
        self.text, self.sha = text, sha
        self.asked: list[tuple[int, ...]] = []

    def blob(self, sha: str, path: str) -> bytes | None:
        return self.text.encode()

    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]:
        self.asked.append(tuple(lines))
        return [BlameHit(final_line=n, sha=self.sha, orig_path=path, orig_line=n) for n in self.asked[-1]]


def test_beside_blames_the_code_lines_around_what_the_fix_changed() -> None:
    text = "import os\nx = 1\n\ndef f(a):\n    b = a + 1\n    return b\n"
    text += "def g():\n    # why\n    return 2\ny = g()\nz = f(y)\nprint(z)\n"
    # The fix changes lines 5-6 and inserts a block before line 11: three lines either side of each,
    # less the changed ones, the blank line 3, the comment on line 8 and what lies past the end.
    diff = FileDiff(old_path="x.py", new_path="x.py", removed=((5, "    b = a + 1"), (6, "    return b")), insertions=(11,))
    history = Around(text, NEW)
    hits = beside(fix(), [diff], history, CONFIG)
    assert history.asked == [(2, 4, 7, 9, 10, 11, 12)]
    assert {h.sha for h in hits} == {NEW}
    off = CONFIG.with_overrides(labels={"disturbed_lines": 0})
    assert beside(fix(), [diff], Around(text, NEW), off) == []
    # A test file next to the fix is not read at all.
    test = diff.model_copy(update={"old_path": "tests/test_x.py", "new_path": "tests/test_x.py"})
    history = Around(text, NEW)
    assert beside(fix(), [test], history, CONFIG) == [] and history.asked == []


class Rewrote(NoCosmetic):
    """``NEW`` rewrote every line it has (with ``cosmetic``, only their whitespace); everyone else wrote
    theirs from scratch."""

    def __init__(self, cosmetic: bool = False) -> None:
        self.cosmetic = cosmetic

    def from_scratch(self, sha: str, path: str, lines: Iterable[int]) -> set[int]:
        return set() if sha == NEW else set(lines)

    def is_cosmetic(self, sha: str) -> bool:
        return self.cosmetic and sha == NEW


def test_a_newer_commit_that_rewrote_a_line_beside_the_fixed_ones_makes_blame_plurality() -> None:
    # A wrote the fixed lines on day 100; the fix came on day 300.
    late = fix().model_copy(update={"meta": fix().meta.model_copy(update={"committer_time": 300 * DAY})})
    metas = {A: dated(A, 100), OLD: dated(OLD, 1), NEW: dated(NEW, 200), ROOT: meta(ROOT, parents=())}

    def near(sha: str) -> Callable[[], list[BlameHit]]:
        return lambda: [BlameHit(final_line=3, sha=sha, orig_path="x.py", orig_line=3)]

    # NEW rewrote the line above them on day 200: it may be what made them wrong.
    (label,) = decide(late, traced((A, 4), (A, 5)), metas.get, CONFIG, Rewrote(), around=near(NEW))
    assert (label.tier, label.defects[0].evidence.reasons) == ("plurality", ("unanimous", "authored", "disturbed"))
    # Only added it, rewrote it only in whitespace, wrote it before A, or on A's own day: no sign.
    (label,) = decide(late, traced((A, 4), (A, 5)), metas.get, CONFIG, NoCosmetic(), around=near(NEW))
    assert label.tier == "blame"
    (label,) = decide(late, traced((A, 4), (A, 5)), metas.get, CONFIG, Rewrote(cosmetic=True), around=near(NEW))
    assert label.tier == "blame"
    (label,) = decide(late, traced((A, 4), (A, 5)), metas.get, CONFIG, Rewrote(), around=near(OLD))
    assert label.tier == "blame"
    same_day = {**metas, NEW: dated(NEW, 100)}
    (label,) = decide(late, traced((A, 4), (A, 5)), same_day.get, CONFIG, Rewrote(), around=near(NEW))
    assert label.tier == "blame"
    # A trailer naming A is the developer's word, and labels below `blame` never ask.
    named = late.model_copy(update={"link": "trailer", "named": (A,)})
    (label,) = decide(named, traced((A, 4), (A, 5)), metas.get, CONFIG, Rewrote(), around=near(NEW))
    assert label.tier == "explicit"
    asked: list[int] = []

    def counting() -> list[BlameHit]:
        asked.append(1)
        return near(NEW)()

    (label,) = decide(late, traced((A, 4), (B, 5)), {**metas, B: dated(B, 100)}.get, CONFIG, Rewrote(), around=counting)
    assert label.tier in ("plurality", "weak") and asked == []
