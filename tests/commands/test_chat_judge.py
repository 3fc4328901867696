"""``miner judge`` against a stand-in chat-completions endpoint on loopback (tests/fake_endpoint.py): what it
sends, how it reads the reply, how it survives rate limits, server errors, garbled replies and stalls, what
it counts, and that every failure is one line and exit 2."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import Sample
from fake_endpoint import Endpoint, Faults, answer_for, serve

from miner.cli import main
from miner.commands.build import BuildOptions, JudgeCommand, build, plan_table, summary_table
from miner.commands.chat_judge import ChatModel, answer, command_model, trimmed
from miner.core.config import Config, load_config
from miner.core.errors import INTERRUPTED, JudgeError, MinerError
from miner.stages.judge import Keep

FIX = {"commit": "f" * 40, "message": "Fix the range", "diff": "-    return start + size - 1\n+    return start + size\n"}
BUG: dict[str, object] = {
    "version": 4,
    "kind": "bug",
    "repository": "shelf",
    "change": "c" * 40,
    "message": "Add a range",
    "diff": "+    return start + size - 1\n",
    "defect_lines": [{"path": "shelf.py", "line_start": 3, "line_end": 3, "text": "    return start + size - 1"}],
    "fix": FIX,
}
GOOD = {"fix_is_bugfix": "yes", "defect_in_change": "introduced", "lines_right": "yes", "reviewable": "yes", "reason": "stand-in"}


def run(endpoint: Endpoint, packet: object, *extra: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["judge", "--url", endpoint.url, "--model", "m1", *extra], input=json.dumps(packet), env=env)


def test_it_asks_with_the_rubric_and_the_packet_and_prints_the_answer_and_its_cost() -> None:
    seen: list[dict[str, Any]] = []

    def respond(packet: dict[str, Any]) -> dict[str, str]:
        seen.append(packet)
        return answer_for(packet)

    with serve(respond=respond) as endpoint:
        result = run(endpoint, BUG, "--key-env", "JUDGE_KEY", env={"JUDGE_KEY": "sekrit"})
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed == {
        **GOOD,
        "usage": {"input_tokens": endpoint.billed_input, "output_tokens": endpoint.billed_output},
        "retries": 0,
    }
    assert seen == [BUG] and endpoint.requests == 1


def test_the_answer_is_found_in_prose_and_fences() -> None:
    reply = "Here is my verdict:\n```json\n" + json.dumps({**GOOD, "lines_right": "Partly"}) + "\n```\nThanks."
    assert answer(reply, "bug") == {**GOOD, "lines_right": "partly"}
    without = {k: v for k, v in GOOD.items() if k != "reviewable"}  # an instruction of one's own may not ask it
    assert answer(json.dumps(without), "bug") == without
    clean = answer('{"plausible_pr": "yes", "later_fixed": "no", "real_defect": "unsure"}', "clean")
    assert clean == {"plausible_pr": "yes", "later_fixed": "no", "real_defect": "unsure", "reason": ""}


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ("I cannot tell.", "no JSON object"),
        (json.dumps({**GOOD, "defect_in_change": "maybe"}), "defect_in_change='maybe'"),
        (json.dumps({"fix_is_bugfix": "yes"}), "defect_in_change"),
        (json.dumps({**GOOD, "reviewable": "sometimes"}), "reviewable='sometimes'"),
    ],
)
def test_a_reply_that_is_not_the_rubrics_answer_is_refused(reply: str, words: str) -> None:
    with pytest.raises(JudgeError, match=words):
        answer(reply, "bug")


def test_a_reply_that_is_not_the_rubrics_answer_is_asked_again_then_is_one_line_and_exit_2() -> None:
    with serve(respond=lambda packet: {"verdict": "looks buggy"}) as endpoint:
        result = run(endpoint, BUG, "--reasks", "2")
    assert result.exit_code == 2 and endpoint.requests == 3
    assert result.stderr.count("\n") == 1 and "fix_is_bugfix" in result.stderr and "asked 3 times" in result.stderr
    # What it cost is said all the same: three completions were billed.
    printed = json.loads(result.stdout)
    assert printed["usage"] == {"input_tokens": endpoint.billed_input, "output_tokens": endpoint.billed_output}
    assert printed["retries"] == 2 and endpoint.billed_output > 0


@pytest.mark.parametrize(
    "faults",
    [
        Faults(rate_limit=1.0),
        Faults(server_error=1.0),
        Faults(garbled=1.0),
        Faults(prose=1.0),
        Faults(stall=1.0, stall_seconds=1.5),
    ],
    ids=["rate-limit", "server-error", "garbled", "prose", "stall"],
)
def test_every_fault_of_a_first_try_is_survived_and_counted(faults: Faults) -> None:
    """A 429 is waited out as its Retry-After says, a 500 and a body that is not JSON are sent again, a reply
    that is not the rubric's answer is asked again, a stalled request times out and is sent again."""
    with serve(faults) as endpoint:
        started = time.monotonic()
        result = run(endpoint, BUG, "--timeout", "0.5")
        took = time.monotonic() - started
        while endpoint.inflight and time.monotonic() - started < 10:  # the stalled reply, sent to no one
            time.sleep(0.05)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert {k: printed[k] for k in GOOD} == GOOD
    assert printed["retries"] == 1 and endpoint.requests == 2
    if faults.stall:  # the stalled completion was sent after the client hung up: billed, but never seen by it
        assert printed["usage"]["input_tokens"] < endpoint.billed_input
    else:
        assert printed["usage"] == {"input_tokens": endpoint.billed_input, "output_tokens": endpoint.billed_output}
    if faults.rate_limit:
        assert took >= 1.0  # Retry-After: 1


def test_an_endpoint_that_refuses_the_key_names_the_variable_and_is_not_asked_again() -> None:
    with serve() as endpoint:
        endpoint.status = 401
        result = run(endpoint, BUG, "--key-env", "MY_KEY")
    assert result.exit_code == 2 and endpoint.requests == 1
    assert "HTTP 401" in result.stderr and "MY_KEY" in result.stderr and result.stderr.count("\n") == 1


def test_an_unreachable_endpoint_and_a_bad_packet_are_one_line() -> None:
    gone = CliRunner().invoke(
        main, ["judge", "--url", "http://127.0.0.1:9/v1", "--model", "m", "--retries", "0"], input=json.dumps(BUG)
    )
    assert gone.exit_code == 2 and "cannot reach" in gone.stderr and gone.stderr.count("\n") == 1
    with serve() as endpoint:
        bad = CliRunner().invoke(main, ["judge", "--url", endpoint.url, "--model", "m"], input="not json")
        assert bad.exit_code == 2 and "not JSON" in bad.stderr
        odd = run(endpoint, {"kind": "other"})
        assert odd.exit_code == 2 and "no kind bug or clean" in odd.stderr
    assert endpoint.requests == 0


def test_long_diffs_are_cut_before_they_are_sent() -> None:
    between = [{"commit": "2" * 40, "message": "m", "diff": "w" * 1300}, {"commit": "3" * 40, "message": "m", "diff": "+b\n"}]
    packet = {**BUG, "diff": "x" * 5000, "fix": {**FIX, "diff": "y" * 1500}, "between": between}
    cut = trimmed(packet, 1000)
    assert cut["diff"].startswith("x" * 1000) and "4000 more characters cut" in cut["diff"]
    assert "500 more characters cut" in cut["fix"]["diff"]
    assert "300 more characters cut" in cut["between"][0]["diff"] and cut["between"][1]["diff"] == "+b\n"
    assert packet["diff"] == "x" * 5000  # the packet itself is left alone
    clean = {"kind": "clean", "diff": "+a\n", "later": [{"commit": "1" * 40, "message": "m", "diff": "z" * 1200}]}
    assert "200 more characters cut" in trimmed(clean, 1000)["later"][0]["diff"]
    assert trimmed(clean, 1000)["diff"] == "+a\n"


def test_a_miner_judge_command_is_asked_in_the_builds_own_process() -> None:
    model = command_model("miner judge --url http://h/v1 --model m --retries 3 --timeout 9")
    assert model == ChatModel(model="m", url="http://h/v1", retries=3, timeout=9.0)
    assert command_model("/usr/bin/python3.11 -m miner judge --model m") == ChatModel(model="m")
    assert command_model("python my_judge.py") is None
    with pytest.raises(MinerError, match="--judge 'miner judge ...': .*--retries"):
        command_model("miner judge --model m --retries many")


# -- the judged road through miner build ---------------------------------------------------------------------


def every_clean() -> Config:
    return load_config().with_overrides(labels={"min_tier": "weak"}, clean={"ratio": 100.0, "min_count": 1000})


def judged(endpoint: Endpoint, **options: Any) -> BuildOptions:
    command = f"miner judge --url {endpoint.url} --model m1 --timeout 2"
    return BuildOptions(judge=JudgeCommand(command, **options))


def fixtures(out: Path) -> dict[str, dict[str, Any]]:
    manifest = json.loads((out / "manifest.json").read_text())
    return {e["id"]: json.loads((out / e["answer"]).read_text()) for e in manifest["fixtures"]}


def test_a_judged_build_against_a_faulty_endpoint_matches_the_faultless_one_and_counts_what_was_billed(
    samples: dict[str, Sample], tmp_path: Path
) -> None:
    """The issue's bar, small: 429 with Retry-After on 30% of first tries, 500 on 10%, a body that is not
    JSON on 5%, a stall past the timeout on 5%: nothing fails, the same fixtures are kept, and the report's
    tokens are the endpoint's bill (stalls here are longer than the timeout, so their late replies are billed
    unseen: the faultless share is compared)."""
    ledger = samples["pyledger"]
    with serve() as clean:
        plain = build([ledger.path], tmp_path / "plain", every_clean(), judged(clean), progress=False)
    faults = Faults(rate_limit=0.3, server_error=0.1, garbled=0.05, stall=0.05, stall_seconds=2.5)
    with serve(faults) as faulty:
        result = build([ledger.path], tmp_path / "faulty", every_clean(), judged(faulty), progress=False)
    counts, before = result.reports[0].judge, plain.reports[0].judge
    assert counts is not None and before is not None
    assert counts.failed == 0 and counts.unasked == 0 and counts.answered == before.answered > 10
    assert sum(faulty.met.values()) > 0 and counts.retries == faulty.requests - counts.answered
    assert set(fixtures(tmp_path / "faulty")) == set(fixtures(tmp_path / "plain"))
    assert (before.input_tokens, before.output_tokens) == (clean.billed_input, clean.billed_output)
    assert counts.input_tokens == before.input_tokens and counts.output_tokens == before.output_tokens
    # Each verdict keeps what it cost; the manifest keeps what the whole set's screening cost.
    manifest = json.loads((tmp_path / "faulty" / "manifest.json").read_text())
    assert manifest["judge"]["input_tokens"] == counts.input_tokens and manifest["judge"]["verdicts"] == counts.answered
    assert manifest["repositories"][0]["judge"]["retries"] == counts.retries
    verdicts = [d["evidence"]["judge"] for a in fixtures(tmp_path / "faulty").values() for d in a["defects"] or []]
    assert verdicts and all(v["input_tokens"] > 0 and v["reviewable"] in ("yes", "no") for v in verdicts)
    assert "judge: asked" in summary_table(result)


def test_judge_calls_run_side_by_side(samples: dict[str, Sample], tmp_path: Path) -> None:
    def slow(packet: dict[str, Any]) -> dict[str, str]:
        time.sleep(0.3)
        return answer_for(packet)

    with serve(respond=slow) as endpoint:
        build([samples["pyledger"].path], tmp_path / "out", every_clean(), judged(endpoint, jobs=4), progress=False)
    assert endpoint.most_inflight == 4
    with serve(respond=slow) as endpoint:
        build([samples["pyledger"].path], tmp_path / "one", every_clean(), judged(endpoint, jobs=1), progress=False)
    assert endpoint.most_inflight == 1


def test_a_budget_stops_the_asking_and_a_rerun_asks_only_the_rest(samples: dict[str, Sample], tmp_path: Path) -> None:
    ledger = samples["pyledger"]
    out = tmp_path / "out"
    with serve() as endpoint:
        full = build([ledger.path], tmp_path / "full", every_clean(), judged(endpoint), progress=False)
    total = full.reports[0].judge
    assert total is not None
    budget = (total.input_tokens + total.output_tokens) // 4
    with serve() as endpoint:
        result = build([ledger.path], out, every_clean(), judged(endpoint, jobs=1, budget=budget), progress=False)
        counts = result.reports[0].judge
        assert counts is not None and counts.unasked > 0 and counts.failed == 0
        spent = endpoint.billed_input + endpoint.billed_output
        assert spent >= budget and (spent - budget) < (total.input_tokens + total.output_tokens) / total.asked * 3
        assert result.judge_stopped is not None and f"budget of {budget:,} tokens" in result.judge_stopped
        assert f"{counts.unasked} went unasked (the judge budget of {budget:,} tokens was spent" in summary_table(result)
        assert len(fixtures(out)) < len(fixtures(tmp_path / "full"))
        assert result.reports[0].dropped["judge"].get("judge_unasked", 0) > 0
        asked_before = endpoint.requests
        again = build([ledger.path], out, every_clean(), judged(endpoint), progress=False, force=True)
    counts = again.reports[0].judge
    assert counts is not None and counts.cached == asked_before and counts.unasked == 0
    assert set(fixtures(out)) == set(fixtures(tmp_path / "full"))


def test_unanswered_candidates_are_left_out_and_asked_again_by_the_next_build(samples: dict[str, Sample], tmp_path: Path) -> None:
    ledger = samples["pyledger"]
    out = tmp_path / "out"
    with serve() as endpoint:
        build([ledger.path], tmp_path / "full", every_clean(), judged(endpoint), progress=False)
    with serve() as endpoint:
        endpoint.status = 503
        command = f"miner judge --url {endpoint.url} --model m1 --retries 0"
        down = build([ledger.path], out, every_clean(), BuildOptions(judge=JudgeCommand(command, jobs=1)), progress=False)
    counts = down.reports[0].judge
    assert counts is not None and counts.failed == 10 and counts.answered == 0
    assert fixtures(out) == {}
    with serve() as endpoint:
        build([ledger.path], out, every_clean(), judged(endpoint), progress=False, force=True)
    assert set(fixtures(out)) == set(fixtures(tmp_path / "full"))


def test_a_plan_asks_nothing_writes_nothing_and_counts_the_packets(samples: dict[str, Sample], tmp_path: Path) -> None:
    ledger = samples["pyledger"]
    out = tmp_path / "out"
    with serve() as endpoint:
        plan = build([ledger.path], out, every_clean(), BuildOptions(judge=judged(endpoint).judge, plan=True), progress=False)
        assert endpoint.requests == 0
    assert plan.planned and not out.exists() and not list(tmp_path.glob(".miner-*"))
    planned = plan.reports[0].judge
    assert planned is not None
    with serve(
        respond=lambda p: {**answer_for(p), "fix_is_bugfix": "yes", "later_fixed": "no", "plausible_pr": "yes"}
    ) as endpoint:
        real = build([ledger.path], out, every_clean(), judged(endpoint), progress=False)
        sent = sum(len(json.dumps(p)) for p in endpoint.packets)
        asked = endpoint.requests
        # A plan beside an earlier output counts what its verdicts already answer.
        again = build([ledger.path], out, every_clean(), BuildOptions(judge=judged(endpoint).judge, plan=True), progress=False)
    counts = real.reports[0].judge
    assert counts is not None
    assert (planned.asked, planned.characters) == (counts.asked, counts.characters) == (asked, sent)
    assert f"{planned.asked:>8}" in plan_table(plan)
    assert again.reports[0].judge is not None and again.reports[0].judge.cached == counts.asked
    assert again.reports[0].judge.asked == 0


def test_the_judge_flags_need_a_judge(samples: dict[str, Sample], tmp_path: Path) -> None:
    for flag in (["--plan"], ["--judge-budget", "100"], ["--keep-unjudged"], ["--keep-refused"]):
        result = CliRunner().invoke(main, ["build", str(samples["shelf"].path), "--out", str(tmp_path / "o"), *flag])
        assert result.exit_code == 2 and f"{flag[0]} is for a judged build" in result.stderr


def test_refused_candidates_kept_for_measuring_the_judge_are_marked(samples: dict[str, Sample], tmp_path: Path) -> None:
    ledger = samples["pyledger"]

    def picky(packet: dict[str, Any]) -> dict[str, str]:
        said = answer_for(packet)
        return {**said, "fix_is_bugfix": "no"} if packet["kind"] == "bug" and packet["change"] < "8" else said

    with serve(respond=picky) as endpoint:
        screened = build([ledger.path], tmp_path / "screened", every_clean(), judged(endpoint), progress=False)
        marked = build(
            [ledger.path], tmp_path / "marked", every_clean(), judged(endpoint, keep=Keep(refused=True)), progress=False
        )
    refused = {fid: a for fid, a in fixtures(tmp_path / "marked").items() if a.get("screen") == "refused"}
    kept = {fid: a for fid, a in fixtures(tmp_path / "marked").items() if a.get("screen") == "kept"}
    refused_bugs = {fid for fid, a in refused.items() if a["kind"] == "bug"}
    assert refused_bugs and refused_bugs == {
        fid for fid, a in fixtures(tmp_path / "marked").items() if a["kind"] == "bug" and a["head"] < "8"
    }
    assert set(kept) == set(fixtures(tmp_path / "screened"))
    assert screened.reports[0].dropped["judge"]["judge_not_bugfix"] == len(refused_bugs)
    assert all(d["evidence"]["judge"]["fix_is_bugfix"] == "no" for fid in refused_bugs for d in refused[fid]["defects"])
    assert "--keep-refused" in summary_table(marked)


def test_an_interrupted_judged_build_stops_at_once_and_keeps_every_answer_it_had(
    samples: dict[str, Sample], tmp_path: Path
) -> None:
    """Ctrl-C does not wait for the model's replies in flight, and the verdicts already given are not asked
    again (each is on disk as it comes)."""
    out = tmp_path / "out"
    answered: list[int] = []

    def first_three_then_stuck(packet: dict[str, Any]) -> dict[str, str]:
        if len(answered) >= 3:
            time.sleep(60)
        answered.append(1)
        return answer_for(packet)

    with serve(respond=first_three_then_stuck) as endpoint:
        command = f"miner judge --url {endpoint.url} --model m1"
        args = [sys.executable, "-m", "miner", "build", str(samples["pyledger"].path), "--out", str(out), "-q", "--json"]
        args += ["--judge", command, "--judge-jobs", "2", "--config", str(tmp_path / "every.yaml")]
        (tmp_path / "every.yaml").write_text("labels: {min_tier: weak}\nclean: {ratio: 100.0, min_count: 1000}\n")
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(answered) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the three verdicts reach the disk
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and time.monotonic() - started < 10
        assert err.strip().splitlines() == [INTERRUPTED]
        endpoint.respond = answer_for
        again = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)["repositories"][0]["judge"]
    assert report["cached"] == 3 and report["failed"] == 0


def test_without_the_openai_package_a_plan_works_and_a_build_says_what_to_install(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai fails, as where the extra is not installed
    command = "miner judge --url http://127.0.0.1:9/v1 --model m"
    plan = build([samples["shelf"].path], tmp_path / "plan", every_clean(), BuildOptions(judge=JudgeCommand(command), plan=True))
    assert plan.planned and plan.reports[0].judge is not None and plan.reports[0].judge.asked > 0
    with pytest.raises(MinerError, match=r"pip install 'miner\[judge\]'"):
        build([samples["shelf"].path], tmp_path / "out", every_clean(), BuildOptions(judge=JudgeCommand(command)))
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written: not the output, no staging, no lock
