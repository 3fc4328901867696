from __future__ import annotations

import pytest

from miner.config import load_config
from miner.strip import blank_comments, sanitize_message, scrub

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
    for hint in ("#123", "GH-45", "PROJ-77", "https://", "bob@example.com", "deadbeef1234", "Signed-off-by",
                 "Reviewed-by", "Change-Id", "cherry picked", "1a2b3c4"):
        assert hint not in title + description, hint
    assert "for details" in description and "stays" in description


def test_title_and_none_modes() -> None:
    assert sanitize_message(MESSAGE, "title", STRIP) == ("Add parser for dates", "")
    assert sanitize_message(MESSAGE, "none", STRIP) == ("", "")


@pytest.mark.parametrize("text,expected", [
    ("Closes #12", ""),
    ("Compare gh-7 and https://x.org/a", "Compare and"),
    ("Works now. This fixes #246", "Works now."),
    ("Use facade pattern", "Use facade pattern"),   # a hex-only English word is not a SHA
    ("bump to 1.2.3", "bump to 1.2.3"),
])
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
