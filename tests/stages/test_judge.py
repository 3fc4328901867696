"""The optional judge, played by scripts: what it refuses is dropped and counted, what it says is kept
in the answers, a candidate it does not answer is never passed as screened, and verdicts are cached
like labels."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import Sample

from miner.commands.build import BuildOptions, JudgeCommand, build, summary_table
from miner.commands.explain import explain
from miner.core.config import Config, load_config
from miner.core.errors import MissingObjectError
from miner.core.records import CommitMeta
from miner.stages.clean import MISSING
from miner.stages.judge import STOP_AFTER, Asked, Judge, JudgeCounts, JudgedClean, Keep, command_runner

# Keeps everything but the range-end fix and the capacity change; logs every packet it reads.
JUDGE = """
import json, sys
packet = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(packet["kind"] + " " + packet["change"] + "\\n")
if packet["kind"] == "bug":
    good = "range end" not in packet["fix"]["message"]
    print(json.dumps({"fix_is_bugfix": "yes" if good else "no", "defect_in_change": "introduced",
                      "lines_right": "yes", "reason": "scripted"}))
else:
    print(json.dumps({"plausible_pr": "no" if "capacity" in packet["message"] else "yes",
                      "later_fixed": "no", "real_defect": "no"}))
"""


def every_clean() -> Config:
    return load_config().with_overrides(
        labels={"min_tier": "weak"}, clean={"ratio": 100.0, "min_count": 1000, "fix_window_days": 0}
    )


def answers(out: Path) -> dict[str, dict]:
    manifest = json.loads((out / "manifest.json").read_text())
    found = {}
    for entry in manifest["fixtures"]:
        answer = json.loads((out / entry["answer"]).read_text())
        found[answer["head"]] = answer
    return found


@pytest.fixture()
def judge(tmp_path: Path) -> tuple[str, Path]:
    script, log = tmp_path / "judge.py", tmp_path / "asked.log"
    script.write_text(JUDGE)
    return f"{sys.executable} {script} {log}", log


def test_the_judge_refuses_and_its_verdicts_are_kept(samples: dict[str, Sample], tmp_path: Path, judge: tuple[str, Path]) -> None:
    shelf = samples["shelf"]
    command, log = judge
    out = tmp_path / "out"
    result = build([shelf.path], out, every_clean(), BuildOptions(judge=JudgeCommand(command)), progress=False)
    found = answers(out)
    assert shelf.sha("inclusive-end") not in found  # its only fix: "not a bug fix"
    assert shelf.sha("add-capacity") not in found  # "not a plausible pull request"
    victim = found[shelf.sha("add-stock-report")]
    (defect,) = victim["defects"]
    assert defect["evidence"]["judge"]["status"] == "ok" and defect["evidence"]["judge"]["reason"] == "scripted"
    clean = found[shelf.sha("rename-count")]
    assert clean["judge"]["plausible_pr"] == "yes"
    dropped = result.reports[0].dropped
    assert dropped["judge"] == {"judge_not_bugfix": 1}
    assert dropped["clean"]["judge_not_plausible"] == 1  # counted where the sample refuses candidates
    visible = (out / "visible" / f"{clean['id']}.json").read_text()
    assert "judge" not in visible and "scripted" not in (out / "visible" / f"{victim['id']}.json").read_text()
    # A person reading the evidence sees what the judge said.
    assert "  judge: fix_is_bugfix yes, defect_in_change introduced, lines_right yes: 'scripted'" in explain(out, victim["id"])
    assert "  judge: plausible_pr yes, later_fixed no, real_defect no" in explain(out, clean["id"])
    asked = len(log.read_text().splitlines())
    # A rebuild asks nothing it asked before: the verdicts come from the cache.
    build([shelf.path], out, every_clean(), BuildOptions(judge=JudgeCommand(command)), progress=False, force=True)
    assert len(log.read_text().splitlines()) == asked
    assert answers(out) == found


@pytest.mark.parametrize(
    "script,error",
    [
        ("import sys; sys.exit(2)", "exit 2"),
        ("print('not json')", "unreadable answer"),
        ("import time; time.sleep(5)", "timed out"),
    ],
)
def test_a_judge_that_fails_passes_nothing_as_screened(
    samples: dict[str, Sample], tmp_path: Path, script: str, error: str
) -> None:
    """No answer is no pass: every candidate is left out and counted; with --keep-unjudged the set is the
    one without a judge, each fixture marked unjudged with the error; nothing is cached, so a rerun asks again."""
    shelf = samples["shelf"]
    path = tmp_path / "judge.py"
    path.write_text(script)
    command = f"{sys.executable} {path}"
    plain = tmp_path / "plain"
    build([shelf.path], plain, every_clean(), progress=False)
    out = tmp_path / "out"
    result = build([shelf.path], out, every_clean(), BuildOptions(judge=JudgeCommand(command, timeout=1.0)), progress=False)
    report = result.reports[0]
    assert answers(out) == {}
    assert report.judge is not None and report.judge.failed == report.judge.asked > 0 and report.judge.answered == 0
    assert report.dropped["judge"]["judge_unanswered"] == len(answers(plain)) - report.dropped["clean"]["judge_unanswered"] - (
        report.dropped["clean"].get("judge_unasked", 0)
    )
    assert not (out / "cache" / "judge.jsonl").read_text().strip()  # a failure is the run's, not an answer

    kept = tmp_path / "kept"
    keep = JudgeCommand(command, timeout=1.0, keep=Keep(unjudged=True))
    build([shelf.path], kept, every_clean(), BuildOptions(judge=keep), progress=False)
    found = answers(kept)
    assert set(found) == set(answers(plain))
    assert {a["screen"] for a in found.values()} == {"unjudged"}
    bug = found[shelf.sha("inclusive-end")]
    verdict = bug["defects"][0]["evidence"]["judge"]
    assert verdict["status"] in ("error", "unasked") and (error in verdict["error"] or "in a row" in verdict["error"])
    assert "kept unjudged (--keep-unjudged)" in explain(kept, bug["id"])


def test_a_judge_that_keeps_failing_is_no_longer_asked(samples: dict[str, Sample], tmp_path: Path) -> None:
    """After STOP_AFTER failures in a row the build stops asking (a judge that is down would cost an hour of
    retries); the rest go unasked, and the summary says why. A judge's "no answer yet" (exit 3) is no fault."""
    ledger = samples["pyledger"]
    down, later = tmp_path / "down.py", tmp_path / "later.py"
    down.write_text("import sys; sys.exit(1)")
    later.write_text("import sys; sys.exit(3)")
    result = build(
        [ledger.path], tmp_path / "a", every_clean(), BuildOptions(judge=JudgeCommand(f"{sys.executable} {down}", jobs=1))
    )
    counts = result.reports[0].judge
    assert counts is not None and counts.failed == STOP_AFTER and counts.unasked > 0
    assert result.judge_stopped is not None and "10 times in a row" in result.judge_stopped
    assert "the build stopped asking" in summary_table(result)
    deferred = build([ledger.path], tmp_path / "b", every_clean(), BuildOptions(judge=JudgeCommand(f"{sys.executable} {later}")))
    counts = deferred.reports[0].judge
    assert counts is not None and counts.unasked == 0 and counts.failed == counts.asked > STOP_AFTER


SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def test_a_judge_answered_in_batches_from_a_folder(samples: dict[str, Sample], tmp_path: Path) -> None:
    """scripts/queue_judge.py: the first build queues every packet and keeps every candidate; answers
    written beside them are read by the next build."""
    shelf = samples["shelf"]
    folder, out, plain = tmp_path / "judge", tmp_path / "out", tmp_path / "plain"
    command = JudgeCommand(f"{sys.executable} {SCRIPTS / 'queue_judge.py'} {folder}")
    first = build([shelf.path], out, every_clean(), BuildOptions(judge=command), progress=False)
    build([shelf.path], plain, every_clean(), progress=False)
    assert answers(out) == {}  # nothing answered yet: nothing passed as screened
    queued = {p.stem: json.loads(p.read_text()) for p in (folder / "packets").glob("*.json")}
    assert first.reports[0].judge is not None and first.reports[0].judge.failed == len(queued) > 0
    (folder / "answers").mkdir()
    for name, packet in queued.items():
        if packet["kind"] == "bug":
            keep = "range end" not in packet["fix"]["message"]
            answer = {"fix_is_bugfix": "yes" if keep else "no", "defect_in_change": "introduced", "lines_right": "yes"}
        else:
            answer = {"plausible_pr": "yes", "later_fixed": "no", "real_defect": "no"}
        (folder / "answers" / f"{name}.json").write_text(json.dumps(answer))
    second = build([shelf.path], out, every_clean(), BuildOptions(judge=command), progress=False, force=True)
    assert second.reports[0].dropped["judge"] == {"judge_not_bugfix": 1}
    assert shelf.sha("inclusive-end") not in answers(out)
    assert set(answers(out)) == set(answers(plain)) - {shelf.sha("inclusive-end")}


def test_recorded_answers_are_replayed_by_commit(samples: dict[str, Sample], tmp_path: Path) -> None:
    """scripts/replay_judge.py answers the packets its file names by commit ids; the rest have no answer."""
    shelf = samples["shelf"]
    record = {
        "kind": "clean",
        "change": shelf.sha("add-capacity"),
        "plausible_pr": "no",
        "later_fixed": "no",
        "real_defect": "no",
        "reason": "recorded",
    }
    file = tmp_path / "judge.jsonl"
    file.write_text(json.dumps(record) + "\n")
    out = tmp_path / "out"
    command = JudgeCommand(f"{sys.executable} {SCRIPTS / 'replay_judge.py'} {file}", keep=Keep(unjudged=True))
    result = build([shelf.path], out, every_clean(), BuildOptions(judge=command), progress=False)
    found = answers(out)
    assert shelf.sha("add-capacity") not in found and shelf.sha("rename-count") in found
    assert found[shelf.sha("rename-count")]["screen"] == "unjudged"
    report = result.reports[0]
    assert report.dropped["clean"]["judge_not_plausible"] == 1
    assert report.judge is not None and report.judge.failed == len(found)  # every other candidate, kept marked


def test_a_clean_packet_shows_the_later_commits_that_rewrote_its_lines(samples: dict[str, Sample], tmp_path: Path) -> None:
    """Whatever their messages say: a reader decides whether they corrected the change."""
    ledger = samples["pyledger"]
    folder = tmp_path / "judge"
    command = JudgeCommand(f"{sys.executable} {SCRIPTS / 'queue_judge.py'} {folder}")
    build([ledger.path], tmp_path / "out", every_clean(), BuildOptions(judge=command), progress=False)
    packets = [json.loads(p.read_text()) for p in (folder / "packets").glob("*.json")]
    clean = {p["change"]: p for p in packets if p["kind"] == "clean"}
    (later,) = clean[ledger.sha("add-fr-locale")]["later"]
    assert later["commit"] == ledger.sha("fr-negative-parentheses")
    assert later["message"].startswith("Show negative French amounts in parentheses")
    assert later["diff"].startswith("diff --git") and "+++ b/" in later["diff"]
    assert sum(not p["later"] for p in clean.values()) > 0  # changes whose lines stood through the window show none
    assert all(p["version"] == 4 for p in packets)


def test_a_bug_packet_shows_the_commits_between_the_change_and_the_fix_that_changed_the_marked_files(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a reader needs to tell a defect the change made from one a later commit made: the commits
    after the change and before the fix that touched the marked lines' files, oldest first, each with
    its diff of those files only; the newest few when there are more."""
    kv = samples["gokv"]

    def packets(folder: Path) -> dict[tuple[str, str], dict]:
        command = JudgeCommand(f"{sys.executable} {SCRIPTS / 'queue_judge.py'} {folder}")
        build([kv.path], tmp_path / f"out-{folder.name}", every_clean(), BuildOptions(judge=command), progress=False)
        found = [json.loads(p.read_text()) for p in (folder / "packets").glob("*.json")]
        return {(p["change"], p["fix"]["commit"]): p for p in found if p["kind"] == "bug"}

    bugs = packets(tmp_path / "all")
    packet = bugs[(kv.sha("add-delete"), kv.sha("fix-delete-result"))]
    assert {d["path"] for d in packet["defect_lines"]} == {"internal/store/store.go"}
    between = [b["commit"] for b in packet["between"]]
    assert between == [kv.sha(c) for c in ("add-wal", "add-snapshot", "fix-key-length", "add-range")]
    assert packet["between_left_out"] == 0
    wal = packet["between"][0]
    assert wal["message"].startswith("Add a write-ahead log")
    assert "+++ b/internal/store/store.go" in wal["diff"] and "wal.go" not in wal["diff"]  # the marked file only
    assert any(not p["between"] for p in bugs.values())  # a fix right after its change shows none

    monkeypatch.setattr("miner.stages.judge.BETWEEN", 2)
    packet = packets(tmp_path / "two")[(kv.sha("add-delete"), kv.sha("fix-delete-result"))]
    assert [b["commit"] for b in packet["between"]] == [kv.sha("fix-key-length"), kv.sha("add-range")]
    assert packet["between_left_out"] == 2


def test_a_clean_candidate_whose_later_history_cannot_be_read_is_refused_as_missing(tmp_path: Path) -> None:
    """Not a judge failure (which would keep it): the packet cannot be shown whole, so the candidate is
    refused as the clean check refuses one with missing objects, and the judge is not asked."""

    class Checks:
        def __call__(self, meta: CommitMeta) -> str | None:
            return None

        def plan(self, order: list[CommitMeta]) -> None:
            pass

    class Damaged:
        def diffs(self, shas: object) -> object:
            raise MissingObjectError("blob 1234 is missing from the repository")

    log = tmp_path / "asked.log"
    script = tmp_path / "judge.py"
    script.write_text(JUDGE)
    meta = CommitMeta(
        sha="c" * 40,
        parents=("p" * 40,),
        author_name="a",
        author_email="a@x",
        author_time=0,
        committer_time=0,
        message="Add a thing\n",
        files=(),
    )
    command = f"{sys.executable} {script} {log}"
    counts = JudgeCounts()
    check = JudgedClean(
        Checks(),
        Judge(command, command_runner(command, 10.0)),
        Asked(Damaged(), "r", counts),  # type: ignore[arg-type]
        {},
        {},
        load_config(),
    )
    assert check(meta) == MISSING
    assert not log.exists() and counts == JudgeCounts()
