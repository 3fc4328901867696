from __future__ import annotations

import pytest

from miner.core.config import load_config
from miner.stages.strip import blank_comments, drop_commit_ids, sanitize_message, scrub

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
    title, description = sanitize_message(MESSAGE, "original", STRIP)
    assert title == "Add parser for dates"
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
    assert "for details" in description and "stays" in description


def test_title_and_none_modes() -> None:
    assert sanitize_message(MESSAGE, "title", STRIP) == ("Add parser for dates", "")
    assert sanitize_message(MESSAGE, "none", STRIP) == ("", "")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Closes #12", ""),
        ("Compare gh-7 and https://x.org/a", "Compare and"),
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
    _, description = sanitize_message(
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
