from __future__ import annotations

import pytest

from miner.core.config import load_config
from miner.stages.strip import Message, blank_comments, drop_commit_ids, made_title, sanitize_message, scrub

STRIP = load_config().strip

MESSAGE = """Add parser for dates (#123, GH-45, PROJ-77)

See https://example.com/issues/9 for details; reported by bob@example.com.
The old code path from deadbeef1234 stays.

Signed-off-by: Alice Example <alice@example.com>
Reviewed-by: Bob <bob@example.com>
Change-Id: I8e2f1c0d
(cherry picked from commit 1a2b3c4d5e6f7a8b)
"""


def test_original_mode_keeps_prose_and_drops_every_hint() -> None:
    title, description, replaced = sanitize_message(MESSAGE, "original", STRIP)
    assert title == "Add parser for dates" and not replaced
    for hint in (
        "#123",
        "GH-45",
        "PROJ-77",
        "https://",
        "bob@example.com",
        "deadbeef1234",
        "Signed-off-by",
        "Reviewed-by",
        "Change-Id",
        "cherry picked",
        "1a2b3c4",
    ):
        assert hint not in title + description, hint
    assert "for details" not in description  # "See <link> for details" only pointed at the link
    assert description == "The old code path stays."


def test_title_and_none_modes() -> None:
    assert sanitize_message(MESSAGE, "title", STRIP) == Message("Add parser for dates", "", False)
    assert sanitize_message(MESSAGE, "none", STRIP) == Message("", "", False)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Closes #12", ""),
        ("Compare gh-7 and https://x.org/a", ""),  # nothing of its own is left
        ("Compare gh-7 with the old parser", "Compare with the old parser"),
        ("Works now. This fixes #246", "Works now."),
        ("Use facade pattern", "Use facade pattern"),  # a hex-only English word is not a SHA
        ("bump to 1.2.3", "bump to 1.2.3"),
    ],
)
def test_scrub(text: str, expected: str) -> None:
    assert scrub(text) == expected


def test_blank_comments_keeps_lines_and_code() -> None:
    source = "def f(x):\n    # FIXME: breaks on empty input\n    return x[0]  # XXX see #12\n    # plain note\n"
    text, edits = blank_comments("m.py", source, {2, 3, 4}, STRIP)
    assert text == "def f(x):\n\n    return x[0]\n    # plain note\n"
    assert [(e.line, e.text) for e in edits] == [(2, "# FIXME: breaks on empty input"), (3, "# XXX see #12")]


def test_blank_comments_only_touches_added_lines() -> None:
    source = "// TODO: old\nint x = 1; // TODO: new\n"
    text, edits = blank_comments("m.c", source, {2}, STRIP)
    assert text == "// TODO: old\nint x = 1;\n"
    assert [e.line for e in edits] == [2]


def test_block_comment_in_c_is_blanked_line_by_line() -> None:
    source = "/* HACK: this\n   breaks */\nint y;\n"
    text, edits = blank_comments("m.c", source, {1, 2}, STRIP)
    assert text == "\n\nint y;\n"
    assert [(e.line, e.text) for e in edits] == [(1, "/* HACK: this"), (2, "   breaks */")]


def test_a_hex_word_that_names_a_commit_goes_from_the_message_whatever_its_letters() -> None:
    commits = {"3463408", "deadbee"}
    is_commit = lambda token: token in commits  # noqa: E731
    _, description, _ = sanitize_message(
        "url: fix\n\nFollow-up to 3463408 and deadbee.\nRead 1234567 bytes.", "original", STRIP, is_commit=is_commit
    )
    assert "3463408" not in description and "deadbee" not in description
    assert "1234567 bytes" in description  # a number that names no commit stays
    assert scrub("Follow-up to 3463408.") == "Follow-up to 3463408."  # without the repository: kept


def test_commit_ids_on_added_lines_are_dropped_and_recorded() -> None:
    text = "x = 1  # as in 252790c53\ny = 2  # as in 252790c53\nz = 0x252790c53\n"
    out, edits = drop_commit_ids("a.py", text, {1, 3}, lambda token: token == "252790c53")
    assert out.split("\n")[:3] == ["x = 1  # as in", "y = 2  # as in 252790c53", "z = 0x252790c53"]
    assert [(e.line, e.text) for e in edits] == [(1, " 252790c53")]
    out, edits = drop_commit_ids("a.py", "# 252790c53 did it\n252790c53()", {1, 2}, lambda token: token == "252790c53")
    assert out == "# did it\n()" and [e.text for e in edits] == [" 252790c53", "252790c53"]


# -- redaction takes references out whole (issue 44) -------------------------------------------------
# The rows readers flagged as garbled, beside what they must read now.


def test_a_title_of_only_references_is_replaced_by_the_descriptions_first_sentence() -> None:
    message = "Reconcile #1477 and #2775\n\nKeep the two option parsers in step. Both read the same flags.\n"
    title, description, replaced = sanitize_message(message, "original", STRIP, paths=["src/click/core.py"])
    assert (title, replaced) == ("Keep the two option parsers in step", True)
    assert description == "Keep the two option parsers in step. Both read the same flags."


def test_a_description_that_only_pointed_at_a_commit_or_issue_goes() -> None:
    message = "Use the shared parser\n\nDone in 0a2919f4c.\n\nFix #471\n"
    assert sanitize_message(message, "original", STRIP) == Message("Use the shared parser", "", False)


def test_a_sentence_that_only_introduced_a_reference_goes_and_the_rest_stays() -> None:
    message = "Allow flags after args\n\nUseful for solving #424\n\nArgs and flags may now come in any order.\n"
    assert sanitize_message(message, "original", STRIP).description == "Args and flags may now come in any order."


def test_an_advisory_id_goes_whole_and_a_title_left_bare_names_the_files() -> None:
    title, description, replaced = sanitize_message(
        "fix(sec): CVE-2024-39338 (#6539) (#6543)\n", "original", STRIP, paths=["lib/helpers/isURLSameOrigin.js", "test/a.js"]
    )
    assert (title, replaced) == ("fix(sec): Change isURLSameOrigin.js and a.js", True)
    assert "39338" not in title + description and "CVE" not in title


def test_a_prefixed_dco_sign_off_goes_whole() -> None:
    message = (
        "Mount /dev/mqueue read-write\n\nThe container needs it for POSIX queues.\n\n"
        "Docker-DCO-1.1-Signed-off-by: Dan Walsh <dwalsh@redhat.com> (github: rhatdan)\n"
    )
    title, description, _ = sanitize_message(message, "original", STRIP)
    assert description == "The container needs it for POSIX queues."
    for piece in ("DCO", "Signed-off-by", "rhatdan", "Dan Walsh", ".1-"):
        assert piece not in title + description


@pytest.mark.parametrize(
    "body",
    [
        "Signed-off-by: A <a@x.org>",
        "Docker-DCO-1.0-Signed-off-by: A <a@x.org> (github: a)",
        "Co-authored-by: B <b@x.org>\nco-authored-by: C <c@x.org>",
        "Reviewed-on: https://review.example.org/c/12345\nChange-Id: I8e2f1c0d9a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d",
        "Link: https://lore.kernel.org/r/20240101.abc@x.org\nAcked-by: D <d@x.org>\nTested-by: E <e@x.org>",
        "Reported-by: F <f@x.org>\nCc: stable@vger.kernel.org # 5.10+",
        "Kubernetes-commit: 9c120c8e1a305370489d3757323221b00ac3036a",  # an unknown key: the end block's shape
        "Implements: blueprint cyborg-vgpu-support\nGenerated-By: tool (model)\nChange-Id: I21c133e34f5b3935",
        "Closes-Bug: #1529084\n\nChange-Id: I4a32a688c7ceb05c263a0e93a91fb9b8ff0c65d4",  # two end blocks
        'Fixes: bf25392f4e98 ("lib: fix stack overflow in\n   mpath_format()")\nSigned-off-by: G <g@x.org>',  # continued
    ],
)
def test_trailers_of_every_shape_go(body: str) -> None:
    message = f"Keep the cache warm\n\nThe first request no longer waits.\n\n{body}\n"
    assert sanitize_message(message, "original", STRIP).description == "The first request no longer waits."


def test_trailer_shaped_prose_stays() -> None:
    message = "Keep the cache warm\n\nIssue:\n    the first request waited for the cache.\n\nNote: the cache is per process.\n"
    assert sanitize_message(message, "original", STRIP).description == message.split("\n\n", 1)[1].strip()


@pytest.mark.parametrize(
    "text",
    [
        "Add support for A and B",
        "Add a way to opt in to",  # a title that really ends in "to": nothing was cut
        "Bump requests to 1.2.3 and run it at 10:30",
        "Port the C# and F# samples; keep #include <stdio.h> first",
        "Read UTF-8 and ISO-8859-1, hash with SHA-256, license GPL-2.0",
        "Cli IsTerminal() SYS_IOCTL operation should be determined from STDIN,",
        "host:port matching does not require a :port to be specified",
        "  * Added test cases to size_test.go",
        "Read 1234567 bytes from &#123; entities",
    ],
)
def test_text_without_an_id_stays_exactly_as_it_was(text: str) -> None:
    assert scrub(text) == text


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Fix #6509: Interactive container hangs", "Interactive container hangs"),
        ("Works now, see #12.", "Works now."),
        ("It was left empty (due to a bug), see: https://x.org/pull/50832", "It was left empty (due to a bug)"),
        ("Background on this error at: http://sqlalche.me/e/2j85", ""),
        ("Fix compilation issue caused by #8319", "Fix compilation issue"),
        ("This patch had to be reverted in 6b7304d8d38c.", "This patch had to be reverted."),
        ("Handles missed comments in PR#10622 and adds an API test", "Handles missed comments and adds an API test"),
        ("Use the release of tilt which includes rtomayko/tilt#283", "Use the release of tilt"),
        ("Update k8s.io/kube-openapi to v0.0.0-20260721132016-d427ff9ee9ad", "Update k8s.io/kube-openapi"),
        ("Fixed a typo (fixes #788, closes #789)", "Fixed a typo"),
        ("It breaks (see e.g. https://x.org/patch/4579551/).", "It breaks."),
        ('Revert "Add regression test for bug 1550919"', 'Revert "Add regression test"'),
        ('Commit b3b3f8186ed6 ("lib: add a cache") attempted to fix a bug.', "A commit attempted to fix a bug."),
        ("before 1.7 (see [moby@17d6f00] and [moby@ea4a067]), which used a", "before 1.7, which used a"),
        ("Fix #19100 and fix a typo", "fix a typo"),
        ("This test is for #10058", ""),
        ("See #123 for details.", ""),
        ("Close #25409\nUpdate #10180", ""),
        ("Fixes LP Bug #953354.", ""),
        ("Fix JIRA-123, GHSA-xv2c-3xqq-9h4x and gh-77", ""),
        ("Details:\nhttps://github.com/golang/go/issues/1\n\nNext.", "Next."),
        ("The parser is slow [1].\n\n[1] https://x.org/a", "The parser is slow."),
        ("Bumps [tox](https://github.com/tox-dev/tox) from 3.17 to 3.18.", "Bumps tox from 3.17 to 3.18."),
        ("Related to [comment](https://x.org/issues/9#c1).", ""),
    ],
)
def test_references_go_whole_with_the_words_that_introduce_them(text: str, expected: str) -> None:
    assert scrub(text) == expected


def test_a_stack_trace_loses_its_frame_numbers_only() -> None:
    trace = "Crash:\n\n    #0 0x7f60b0afe8c6 in strlen\n    #1 0x4bd128 in main ./src/cli.c:69:10\n"
    assert scrub(trace) == "Crash:\n\n    0x7f60b0afe8c6 in strlen\n    0x4bd128 in main ./src/cli.c:69:10"


def test_only_the_places_of_removals_are_mended() -> None:
    description = "Keep  two spaces here.\n\n- item one (#12)\n- item two\n    code(x) ;  # kept\n"
    assert scrub(description) == "Keep  two spaces here.\n\n- item one\n- item two\n    code(x) ;  # kept\n".rstrip("\n")


@pytest.mark.parametrize(
    "paths,expected",
    [
        (["src/parser.c", "src/lexer.c"], "Change parser.c and lexer.c"),
        (["a/x.py"], "Change x.py"),
        (["a.py", "b.py", "c.py"], "Change a.py, b.py and c.py"),
        (["a.py", "b.py", "c.py", "d.py", "a/a.py"], "Change a.py, b.py and 2 more files"),
    ],
)
def test_a_made_title_names_the_files_when_the_description_cannot_stand_alone(paths: list[str], expected: str) -> None:
    assert made_title("", "- a list item\n- another", paths) == expected
    assert made_title("", "Done.", paths) == expected
    assert made_title("", "Make the lexer skip BOMs so that files from Windows parse.", paths) == (
        "Make the lexer skip BOMs so that files from Windows parse"
    )
