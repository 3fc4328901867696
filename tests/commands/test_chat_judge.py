"""``miner judge`` against a stand-in chat-completions server on loopback: what it sends, how it reads the
reply, and that every failure is one line and exit 2 (which ``miner build --judge`` counts as a failed judge)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import Sample

from miner.cli import main
from miner.commands.build import BuildOptions, JudgeCommand, build
from miner.commands.chat_judge import answer, trimmed
from miner.core.config import load_config
from miner.core.errors import JudgeError

FIX = {"commit": "f" * 40, "message": "Fix the range", "diff": "-    return start + size - 1\n+    return start + size\n"}
BUG: dict[str, object] = {
    "version": 2,
    "kind": "bug",
    "repository": "shelf",
    "change": "c" * 40,
    "message": "Add a range",
    "diff": "+    return start + size - 1\n",
    "defect_lines": [{"path": "shelf.py", "line_start": 3, "line_end": 3, "text": "    return start + size - 1"}],
    "fix": FIX,
}
GOOD = {"fix_is_bugfix": "yes", "defect_in_change": "introduced", "lines_right": "yes", "reason": "off by one"}


@dataclass
class Stub:
    """What the stand-in server answers, and what it was asked."""

    url: str
    status: int = 200
    content: str = json.dumps(GOOD)
    asked: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


@pytest.fixture()
def stub() -> Iterator[Stub]:
    server = HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    state = Stub(url=f"http://127.0.0.1:{server.server_address[1]}/v1")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.asked.append(body)
            state.headers.append({"path": self.path, "authorization": self.headers.get("Authorization", "")})
            reply = {"choices": [{"message": {"role": "assistant", "content": state.content}}]}
            data = json.dumps(reply if state.status == 200 else {"error": {"message": "no such key"}}).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def run(stub: Stub, packet: object, *extra: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(main, ["judge", "--url", stub.url, "--model", "m1", *extra], input=json.dumps(packet), env=env)


def test_it_asks_with_the_rubric_and_the_packet_and_prints_the_answer(stub: Stub) -> None:
    result = run(stub, BUG, "--key-env", "JUDGE_KEY", env={"JUDGE_KEY": "sekrit"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == GOOD
    (asked,) = stub.asked
    assert asked["model"] == "m1" and asked["temperature"] == 0
    system, user = asked["messages"]
    assert "fix_is_bugfix" in system["content"] and "plausible_pr" in system["content"]
    assert json.loads(user["content"]) == BUG
    assert stub.headers == [{"path": "/v1/chat/completions", "authorization": "Bearer sekrit"}]


def test_the_answer_is_found_in_prose_and_fences() -> None:
    reply = "Here is my verdict:\n```json\n" + json.dumps({**GOOD, "lines_right": "Partly"}) + "\n```\nThanks."
    assert answer(reply, "bug") == {**GOOD, "lines_right": "partly"}
    clean = answer('{"plausible_pr": "yes", "later_fixed": "no", "real_defect": "unsure"}', "clean")
    assert clean == {"plausible_pr": "yes", "later_fixed": "no", "real_defect": "unsure", "reason": ""}


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ("I cannot tell.", "no JSON object"),
        (json.dumps({**GOOD, "defect_in_change": "maybe"}), "defect_in_change='maybe'"),
        (json.dumps({"fix_is_bugfix": "yes"}), "defect_in_change"),
    ],
)
def test_a_reply_that_is_not_the_rubrics_answer_is_refused(reply: str, words: str) -> None:
    with pytest.raises(JudgeError, match=words):
        answer(reply, "bug")


def test_a_bad_reply_is_one_line_and_exit_2(stub: Stub) -> None:
    stub.content = "yes, it is a bug"
    result = run(stub, BUG)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "no JSON object" in result.stderr


def test_an_endpoint_that_refuses_the_key_names_the_variable(stub: Stub) -> None:
    stub.status = 401
    result = run(stub, BUG, "--key-env", "MY_KEY")
    assert result.exit_code == 2
    assert "HTTP 401" in result.stderr and "MY_KEY" in result.stderr and result.stderr.count("\n") == 1


def test_an_unreachable_endpoint_and_a_bad_packet_are_one_line(stub: Stub) -> None:
    gone = CliRunner().invoke(main, ["judge", "--url", "http://127.0.0.1:9/v1", "--model", "m"], input=json.dumps(BUG))
    assert gone.exit_code == 2 and "cannot reach" in gone.stderr and gone.stderr.count("\n") == 1
    bad = CliRunner().invoke(main, ["judge", "--url", stub.url, "--model", "m"], input="not json")
    assert bad.exit_code == 2 and "not JSON" in bad.stderr
    odd = run(stub, {"kind": "other"})
    assert odd.exit_code == 2 and "no kind bug or clean" in odd.stderr
    assert not stub.asked


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


def test_a_build_asks_it_through_judge(samples: dict[str, Sample], tmp_path: Path, stub: Stub) -> None:
    """The command as ``miner build --judge`` runs it: a model that says no fix is a bug fix leaves no
    bug fixture, and each refusal is counted."""
    stub.content = json.dumps({**GOOD, "fix_is_bugfix": "no", "reason": "a feature"})
    config = load_config().with_overrides(clean={"min_count": 0, "ratio": 0.0})
    command = f"{sys.executable} -m miner judge --url {stub.url} --model m1"
    result = build([samples["shelf"].path], tmp_path / "out", config, BuildOptions(judge=JudgeCommand(command)), progress=False)
    report = result.reports[0]
    assert report.bugs == 0
    assert sum(report.dropped["judge"].values()) == len({json.loads(a["messages"][1]["content"])["change"] for a in stub.asked})
    assert set(report.dropped["judge"]) == {"judge_not_bugfix"}
    assert {json.loads(a["messages"][1]["content"])["kind"] for a in stub.asked} == {"bug"}
