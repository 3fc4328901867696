"""Scoring a reviewer: the matching rule, per-fixture averaging, errors apart, honest intervals,
paired comparisons; and `miner review` running reviewers that work, crash and get interrupted."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import miner
from miner.cli import main
from miner.commands.review import ReviewerCommand, read_runs, review
from miner.commands.score import holm, interval, match, paired, score, score_fixture, slices
from miner.core.errors import MinerError
from miner.core.findings import ReviewFinding, RunRecord, parse_output, schema
from miner.core.records import Answer, Defect, Evidence, Verdict

REVIEWERS = Path(__file__).resolve().parents[2] / "scripts" / "reviewers"


def finding(path: str, start: int, end: int | None = None, severity: str | None = None) -> ReviewFinding:
    return ReviewFinding(path=path, line_start=start, line_end=end, severity=severity)


def defect(path: str, start: int, end: int | None = None) -> Defect:
    evidence = Evidence(link="blame", tier="blame", lines_blamed=1, lines_agreeing=1, candidates=())
    return Defect(
        path=path,
        line_start=start,
        line_end=end or start,
        fix="f" * 40,
        fix_date="2024-01-01T00:00:00Z",
        summary="Fix it",
        evidence=evidence,
    )


def answer(kind: str, defects: list[Defect] | None = None) -> Answer:
    return Answer(
        id="fx-a",
        kind=kind,
        repository="r",
        split="dev",
        base="b" * 40,
        head="c" * 40,
        head_date="2024-01-01T00:00:00Z",
        author_date="2024-01-01T00:00:00Z",
        defects=tuple(defects) if defects is not None else None,
        fresh={},
        description_mode="original",
    )


def record(findings: list[ReviewFinding], status: str = "ok", repeat: int = 0) -> RunRecord:
    return RunRecord(fixture_id="fx-a", reviewer="r", repeat=repeat, status=status, seconds=1.0, findings=tuple(findings))


# -- matching --------------------------------------------------------------------------------------


def test_two_findings_competing_for_one_defect_earn_one_hit() -> None:
    assert match([finding("a.py", 10), finding("a.py", 11)], [defect("a.py", 10)], 3) == [(0, 0, 0)]


def test_maximal_matching_where_a_greedy_rule_loses_a_pair() -> None:
    # Finding 0 is nearest defect 0 but also near defect 1; finding 1 is near defect 0 only. Greedy
    # (each finding takes its nearest free defect, in order) pairs 0-0 and leaves finding 1 with
    # nothing: one catch. The maximal rule pairs 0-1 and 1-0: two.
    findings = [finding("a.py", 10), finding("a.py", 8)]
    defects = [defect("a.py", 10), defect("a.py", 13)]
    assert sorted(match(findings, defects, 3)) == [(0, 1, 3), (1, 0, 2)]


def test_of_equally_many_pairs_the_nearest_are_taken() -> None:
    findings = [finding("a.py", 10), finding("a.py", 20)]
    defects = [defect("a.py", 11), defect("a.py", 19)]
    assert sorted(match(findings, defects, 10)) == [(0, 0, 1), (1, 1, 1)]


def test_one_finding_near_two_defects_takes_one() -> None:
    assert len(match([finding("a.py", 10, 12)], [defect("a.py", 9), defect("a.py", 13)], 3)) == 1


def test_another_file_and_the_tolerance_edges() -> None:
    assert match([finding("b.py", 10)], [defect("a.py", 10)], 10) == []
    assert match([finding("a.py", 13)], [defect("a.py", 10)], 3) == [(0, 0, 3)]
    assert match([finding("a.py", 14)], [defect("a.py", 10)], 3) == []
    assert match([finding("a.py", 5, 9)], [defect("a.py", 9, 12)], 0) == [(0, 0, 0)]  # overlapping ranges


# -- per fixture -----------------------------------------------------------------------------------


def test_recall_is_per_fixture_and_repeats_are_averaged() -> None:
    bug = answer("bug", [defect("a.py", 10), defect("a.py", 30)])
    one = score_fixture(bug, [record([finding("a.py", 10), finding("a.py", 11), finding("c.py", 1)])], 3)
    assert one.recall == 0.5 and one.detected == 1.0 and one.duplicates == 1 and one.unlabeled == 1
    two = score_fixture(bug, [record([finding("a.py", 10)]), record([finding("a.py", 10), finding("a.py", 30)], repeat=1)], 3)
    assert two.recall == pytest.approx(0.75)


def test_false_alarms_count_warnings_or_worse_on_clean_fixtures() -> None:
    clean = answer("clean")
    got = score_fixture(
        clean, [record([finding("a.py", 1), finding("a.py", 2, severity="nit"), finding("a.py", 3, severity="error")])], 3
    )
    assert got.false_alarms == 2 and got.flagged == 1.0


# -- statistics ------------------------------------------------------------------------------------


def test_the_interval_covers_a_known_recall_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(7)
    truth, sets, covered = 0.4, 200, 0
    for n in range(sets):
        values = rng.binomial(1, truth, size=60).astype(float)
        found = interval(values, seed=n, resamples=1000)
        assert found is not None
        covered += found["low"] <= truth <= found["high"]
    assert 0.90 <= covered / sets <= 0.99, covered


def test_a_paired_comparison_finds_a_real_difference_and_invents_none() -> None:
    rng = np.random.default_rng(3)
    a = rng.binomial(1, 0.6, size=80).astype(float)
    b = np.where(rng.random(80) < 0.5, 0.0, a)  # b misses half of what a catches
    real = paired(a, b, resamples=2000)
    assert real is not None and real["p"] < 0.01 and real["low"] > 0
    same = paired(a, a, resamples=2000)
    assert same is not None and same["p"] == 1.0 and same["low"] == same["high"] == 0.0
    noise = paired(a, rng.permutation(a), resamples=2000)
    assert noise is not None and noise["low"] <= 0 <= noise["high"]


def test_holm() -> None:
    assert holm([0.01, 0.04, None, 0.03]) == [0.03, 0.06, None, 0.06]


# -- the format ------------------------------------------------------------------------------------


def test_findings_take_the_common_aliases_and_refuse_the_rest() -> None:
    found, usage = parse_output(
        json.dumps({"findings": [{"file": "a.py", "line": 3, "body": "off by one"}], "usage": {"cost_usd": 0.01}})
    )
    assert found[0].path == "a.py" and found[0].line_start == 3 and found[0].message == "off by one"
    assert usage is not None and usage.cost_usd == 0.01
    with pytest.raises(MinerError, match="unknown field 'colour'"):
        parse_output('[{"path": "a.py", "line_start": 1, "colour": "red"}]')
    with pytest.raises(MinerError, match="not JSON"):
        parse_output("looks fine to me")
    assert "fixture_id" in schema()["properties"]


# -- end to end: review, then score ----------------------------------------------------------------


def first_lines_reviewer(tmp_path: Path, out: Path) -> str:
    """A reviewer that reports every defect's first line: it cheats (reads the answers) to prove the
    scorer gives it recall 1 at every tolerance."""
    script = tmp_path / "oracle.py"
    script.write_text(
        "import json, os, sys\n"
        f"out = {str(out)!r}\n"
        "fid = os.environ['MINER_FIXTURE_ID']\n"
        "answer = json.load(open(os.path.join(out, 'answers', fid + '.json')))\n"
        "print(json.dumps([{'path': d['path'], 'line_start': d['line_start']} for d in answer['defects'] or []]))\n"
    )
    return f"{sys.executable} {script}"


def test_reference_reviewers_score_as_they_must(samples: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    miner.build([samples["pyledger"].path], out, miner.load_config(), progress=False)
    runner = CliRunner()
    for name, command in (
        ("silent", f"{sys.executable} {REVIEWERS / 'silent.py'}"),
        ("oracle", first_lines_reviewer(tmp_path, out)),
    ):
        ran = runner.invoke(main, ["review", str(out), "--cmd", command, "--name", name, "-j", "2", "-q"])
        assert ran.exit_code == 0, ran.output
    runs = [str(out / "runs" / f"{n}.jsonl") for n in ("silent", "oracle")]
    scored = runner.invoke(main, ["score", str(out), *runs, "--json"])
    assert scored.exit_code == 0, scored.output
    report = json.loads(scored.stdout)
    silent, oracle = report["reviewers"]["silent"], report["reviewers"]["oracle"]
    assert silent["recall"]["value"] == 0 and silent["fp_per_clean"]["value"] == 0
    assert oracle["recall"]["value"] == 1 and all(oracle["recall_at_tolerance"][t]["value"] == 1 for t in ("0", "10"))
    assert report["paired"][0]["recall_diff"]["value"] == -1.0
    assert "recall per bug fixture" in runner.invoke(main, ["score", str(out), *runs]).stdout


def test_a_crashing_reviewer_is_counted_apart_and_a_rerun_resumes(samples: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    miner.build([samples["pyledger"].path], out, miner.load_config(), progress=False)
    ids = [e.id for e in miner.open_output(out).manifest.fixtures]
    log = tmp_path / "calls.txt"
    script = tmp_path / "flaky.py"
    script.write_text(
        "import os, sys\n"
        f"open({str(log)!r}, 'a').write(os.environ['MINER_FIXTURE_ID'] + '\\n')\n"
        f"if os.environ['MINER_FIXTURE_ID'] in {ids[:3]!r} and not os.path.exists({str(tmp_path / 'healed')!r}):\n"
        "    sys.exit('boom')\n"
        "print('[]')\n"
    )
    command = f"{sys.executable} {script}"
    first = review(out, ReviewerCommand(command, "flaky"), jobs=2)
    records = read_runs(first.path)
    assert first.errors == 3 and {r.fixture_id for r in records if r.status == "error"} == set(ids[:3])
    assert all(r.error and r.error.startswith("exit 1: boom") for r in records if r.status == "error")
    scored = score(miner.open_output(out), [(first.path, records)], resamples=500)
    assert scored["reviewers"]["flaky"]["fixtures"]["errors"] == 3
    assert sum(scored["reviewers"]["flaky"]["fixtures"][k] for k in ("bug", "clean")) == len(ids) - 3
    (tmp_path / "healed").write_text("")
    log.write_text("")
    again = review(out, ReviewerCommand(command, "flaky"), jobs=2)
    assert sorted(log.read_text().split()) == sorted(ids[:3])  # only what had failed was asked again
    assert again.done == len(ids) - 3 and again.errors == 0


def test_a_rebuild_keeps_the_reviewer_runs_beside_the_fixtures(samples: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    miner.build([samples["pyledger"].path], out, miner.load_config(), progress=False)
    review(out, ReviewerCommand(f"{sys.executable} {REVIEWERS / 'silent.py'}", "silent"))
    kept = (out / "runs" / "silent.jsonl").read_bytes()
    miner.build([samples["pyledger"].path], out, miner.load_config(), progress=False, force=True)
    assert (out / "runs" / "silent.jsonl").read_bytes() == kept


def test_a_reviewer_can_ask_for_a_checkout_of_the_change(samples: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    miner.build([samples["pyledger"].path], out, miner.load_config(), progress=False)
    script = tmp_path / "look.py"
    script.write_text(
        "import json, os, subprocess\n"
        "where = os.environ['MINER_CHECKOUT']\n"
        "branches = subprocess.run(['git', '-C', where, 'branch', '--format=%(refname:short)'],\n"
        "                          capture_output=True, text=True, check=True).stdout.split()\n"
        "print(json.dumps([{'path': 'branches', 'line_start': 1, 'message': ' '.join(sorted(branches))}]))\n"
    )
    run = review(out, ReviewerCommand(f"{sys.executable} {script}", "look", checkout_from=samples["pyledger"].path))
    records = read_runs(run.path)
    assert run.errors == 0 and {r.findings[0].message for r in records} == {"base pr"}


def test_each_fixture_is_checked_out_from_its_own_repository(two_splits: Path, samples: dict, tmp_path: Path) -> None:
    """An output of two repositories: one --checkout each, and a review sees its fixture's base; one
    missing is one line and exit 2 before any review runs (each would fail the same way)."""
    out = tmp_path / "out"
    shutil.copytree(two_splits, out)
    script = tmp_path / "base.py"
    script.write_text(
        "import json, os, subprocess\n"
        "head = subprocess.run(['git', '-C', os.environ['MINER_CHECKOUT'], 'rev-parse', 'base'],\n"
        "                      capture_output=True, text=True, check=True).stdout.strip()\n"
        "print(json.dumps([{'path': 'base', 'line_start': 1, 'message': head}]))\n"
    )
    cmd = ["review", str(out), "--cmd", f"{sys.executable} {script}", "--name", "base", "-q"]
    ran = CliRunner().invoke(main, [*cmd, "--checkout", str(samples["gokv"].path)])
    assert ran.exit_code == 2 and "not for 'pyledger'" in ran.output and ran.output.count("\n") == 1
    assert not (out / "runs" / "base.jsonl").exists()
    both = [a for name in ("pyledger", "gokv") for a in ("--checkout", f"{name}={samples[name].path}")]
    ran = CliRunner().invoke(main, [*cmd, *both])
    assert ran.exit_code == 0, ran.output
    fixtures = miner.open_output(out)
    seen = {r.fixture_id: r.findings[0].message for r in read_runs(out / "runs" / "base.jsonl")}
    assert seen == {f.id: f.answer.base for f in fixtures if f.answer.base}


def test_recall_is_sliced_by_how_reviewable_the_judge_said_the_defect_is() -> None:
    """The judge's ``reviewable`` answer (the most visible of a fixture's pairs) names a slice; a fixture
    nobody judged is in none of them."""

    def judged(level: str | None, fid: str) -> Answer:
        said = None if level is None else Verdict(status="ok", fix="f" * 40, reviewable=level)
        d = defect("a.py", 10)
        d = d.model_copy(update={"evidence": d.evidence.model_copy(update={"judge": said})})
        return answer("bug", [d]).model_copy(update={"id": fid})

    answers = {"fx-1": judged("yes", "fx-1"), "fx-2": judged("hard", "fx-2"), "fx-3": judged(None, "fx-3")}
    two = judged("no", "fx-4")
    hard_and_no = two.model_copy(update={"defects": (*(two.defects or ()), *(answers["fx-2"].defects or ()))})
    answers["fx-4"] = hard_and_no
    found = slices(answers)
    assert found["reviewable:yes"] == {"fx-1"} and found["reviewable:hard"] == {"fx-2", "fx-4"}
    assert "reviewable:no" not in found
    assert not any("fx-3" in ids for name, ids in found.items() if name.startswith("reviewable:"))
