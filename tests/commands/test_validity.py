"""``miner validity``: a stratified seeded draw, reading pages that hold what a reader needs, and a score that
matches a hand count, with the judge's agreement; bad verdict lines are one clear error each."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import Sample
from fake_endpoint import answer_for, serve

from miner.cli import main
from miner.commands.build import BuildOptions, JudgeCommand, build
from miner.commands.validity import Kind, Rate, allot, draw, is_valid, sample, score
from miner.core.config import Config, load_config
from miner.core.errors import MinerError, TargetDirError
from miner.core.output import open_output
from miner.core.records import Answer
from miner.stages.judge import Keep


def every_clean() -> Config:
    return load_config().with_overrides(labels={"min_tier": "weak"}, clean={"ratio": 100.0, "min_count": 1000})


@pytest.fixture(scope="module")
def judged(samples: dict[str, Sample], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pyledger and gokv, judged by the stand-in model with refusals kept and marked (to measure the judge):
    it refuses the bug fixtures whose change id starts with 0-7."""

    def picky(packet: dict[str, Any]) -> dict[str, str]:
        said = answer_for(packet)
        return {**said, "fix_is_bugfix": "no"} if packet["kind"] == "bug" and packet["change"] < "8" else said

    out = tmp_path_factory.mktemp("validity") / "out"
    repos = [samples["pyledger"].path, samples["gokv"].path]
    with serve(respond=picky) as endpoint:
        command = JudgeCommand(f"miner judge --url {endpoint.url} --model m", keep=Keep(refused=True))
        build(repos, out, every_clean(), BuildOptions(judge=command), progress=False)
    return out


def test_the_draw_is_stratified_by_kind_and_repository_and_stable() -> None:
    sizes: dict[tuple[Kind, str], int] = {("bug", "a"): 60, ("bug", "b"): 30, ("clean", "a"): 9, ("clean", "b"): 1}
    got = allot(sizes, 20)
    assert sum(got.values()) == 20 and got[("clean", "b")] == 1  # every stratum is read
    assert got[("bug", "a")] > got[("bug", "b")] > got[("clean", "a")]
    assert allot(sizes, 500) == sizes and allot(sizes, 2) == {
        ("bug", "a"): 1,
        ("bug", "b"): 1,
        ("clean", "a"): 0,
        ("clean", "b"): 0,
    }

    def answer(n: int, kind: str = "bug", repo: str = "a") -> Answer:
        sha = f"{n:040x}"
        fields = {"split": "dev", "base": None, "head_date": "2024-01-01T00:00:00Z", "author_date": "2024-01-01T00:00:00Z"}
        return Answer(id=f"fx-{n}", kind=kind, repository=repo, head=sha, fresh={}, description_mode="original", **fields)

    answers = [answer(n) for n in range(40)] + [answer(100 + n, "clean", "b") for n in range(10)]
    first = draw(answers, 10, "s")
    assert Counter((a.kind, a.repository) for a in first) == {("bug", "a"): 8, ("clean", "b"): 2}
    assert draw(list(reversed(answers)), 10, "s") == first  # the order given does not matter
    assert draw(answers, 10, "other") != first
    # A rebuild that lost one drawn fixture keeps the rest of the draw and draws the next one in.
    fewer = [a for a in answers if a.id != first[0].id]
    assert len(set(a.id for a in draw(fewer, 10, "s")) & set(a.id for a in first)) == 9


def test_sample_writes_a_page_per_fixture_and_lines_to_fill(judged: Path, samples: dict[str, Sample], tmp_path: Path) -> None:
    fixtures = open_output(judged)
    to = tmp_path / "reading"
    repos = [samples["pyledger"].path, samples["gokv"].path]
    done = sample(fixtures, to, 12, "t", every_clean(), repos)
    lines = [json.loads(line) for line in (to / "verdicts.jsonl").read_text().splitlines()]
    assert len(lines) == done.fixtures == 12 and {line["kind"] for line in lines} == {"bug", "clean"}
    assert {line["repository"] for line in lines} == {"pyledger", "gokv"}
    bug = next(line for line in lines if line["kind"] == "bug")
    assert bug["fix_is_bugfix"] == "" and bug["reviewable"] == "" and bug["fixes"]
    text = (to / "pages" / f"{bug['id']}.md").read_text()
    answer = fixtures[bug["id"]].answer
    fix = bug["fixes"][0]
    # What a reader needs: the change as the reviewer sees it, the marked lines, the fix's message and diff.
    assert fixtures[bug["id"]].visible.diff.strip() in text
    assert f"### The fix `{fix}`" in text and f"lines {answer.defects[0].line_start}-" in text  # type: ignore[index]
    assert "- `defect_in_change`:" in text
    clean = next(line for line in lines if line["kind"] == "clean")
    assert "Later commits that rewrote or removed its lines" in (to / "pages" / f"{clean['id']}.md").read_text()
    with pytest.raises(TargetDirError):
        sample(fixtures, to, 12, "t", every_clean(), repos)
    with pytest.raises(MinerError, match="give --repo for"):
        sample(fixtures, tmp_path / "norepo", 12, "t", every_clean(), [samples["pyledger"].path])


def test_score_matches_a_hand_count_and_measures_the_judge(judged: Path, samples: dict[str, Sample], tmp_path: Path) -> None:
    fixtures = open_output(judged)
    to = tmp_path / "reading"
    sample(fixtures, to, 30, "t", every_clean(), [samples["pyledger"].path, samples["gokv"].path])
    lines = [json.loads(line) for line in (to / "verdicts.jsonl").read_text().splitlines()]
    # A reader who finds a bug fixture valid when its change id ends in an even digit or a-f... as a rule
    # the test can count by hand, and leaves the last line unread.
    for line in lines[:-1]:
        good = line["change"][-1] in "02468ace"
        if line["kind"] == "bug":
            line.update(fix_is_bugfix="yes", defect_in_change="introduced" if good else "carried", lines_right="partly")
        else:
            line.update(plausible_pr="yes", later_fixed="no", real_defect="no" if good else "unsure")
    (to / "verdicts.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = score(fixtures, to / "verdicts.jsonl")
    read = lines[:-1]
    for kind in ("bug", "clean"):
        mine = [line for line in read if line["kind"] == kind]
        valid = [line for line in mine if line["change"][-1] in "02468ace"]
        assert (report[kind]["read"], report[kind]["valid"]) == (len(mine), len(valid)) and mine
        low, high = Rate(len(valid), len(mine)).interval or (0, 0)
        assert report[kind]["validity"] == {"value": len(valid) / len(mine), "low": low, "high": high}
        for repo in ("pyledger", "gokv"):
            here = [line for line in mine if line["repository"] == repo]
            if here:
                assert report[kind]["by_repository"][repo]["read"] == len(here)
    assert report["unread"] == 1
    # The judge kept the bug fixtures whose change starts with 8-f and refused the rest.
    bugs = {line["id"]: line for line in read if line["kind"] == "bug"}
    kept = {fid for fid, line in bugs.items() if line["change"] >= "8"}
    valid_ids = {fid for fid, line in bugs.items() if line["change"][-1] in "02468ace"}
    judge = report["judge"]["bug"]
    assert judge["read"] == len(bugs) and 0 < len(kept) < len(bugs)
    assert judge["kept_valid"] == len(kept & valid_ids) and judge["refused_valid"] == len(valid_ids - kept)
    assert judge["kept_invalid"] + judge["kept_valid"] == len(kept)
    assert judge["agree"] == judge["kept_valid"] + judge["refused_invalid"]


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda line: {**line, "id": "fx-nothere"}, "line 1: fx-nothere is not a fixture of"),
        (lambda line: {**line, "fix_is_bugfix": "maybe"}, "line 1: fix_is_bugfix is 'maybe', not one of yes|no|unsure"),
        (lambda line: {**line, "kind": "clean"}, "line 1: fx-.* is a bug fixture, not clean"),
    ],
)
def test_a_bad_line_is_one_error_naming_it(
    judged: Path, samples: dict[str, Sample], tmp_path: Path, edit: Any, words: str
) -> None:
    fixtures = open_output(judged)
    to = tmp_path / "reading"
    sample(fixtures, to, 4, "t", every_clean(), [samples["pyledger"].path, samples["gokv"].path], kinds=("bug",))
    first = json.loads((to / "verdicts.jsonl").read_text().splitlines()[0])
    (to / "bad.jsonl").write_text(json.dumps(edit(first)) + "\n")
    with pytest.raises(MinerError, match=words):
        score(fixtures, to / "bad.jsonl")
    result = CliRunner().invoke(main, ["validity", "score", str(judged), str(to / "bad.jsonl")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "line 1" in result.stderr


def test_the_command_line_round_trip(judged: Path, samples: dict[str, Sample], tmp_path: Path) -> None:
    to = tmp_path / "reading"
    args = ["validity", "sample", str(judged), "--n", "6", "--seed", "x", "--to", str(to), "--kind", "clean"]
    args += ["--repo", str(samples["pyledger"].path), "--repo", str(samples["gokv"].path)]
    drawn = CliRunner().invoke(main, args)
    assert drawn.exit_code == 0, drawn.output
    lines = [json.loads(line) for line in (to / "verdicts.jsonl").read_text().splitlines()]
    assert {line["kind"] for line in lines} == {"clean"}
    for line in lines:
        line.update(plausible_pr="yes", later_fixed="no", real_defect="no")
    (to / "verdicts.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    scored = CliRunner().invoke(main, ["validity", "score", str(judged), str(to / "verdicts.jsonl"), "--json"])
    report = json.loads(scored.stdout)
    assert report["clean"]["read"] == report["clean"]["valid"] == len(lines) and report["bug"]["read"] == 0
    assert is_valid("clean", lines[0]) and not is_valid("bug", {"fix_is_bugfix": "yes"})
