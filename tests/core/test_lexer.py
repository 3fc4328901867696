from __future__ import annotations

import pytest

from miner.core.lexer import code_lines, code_token_stream, code_tokens, comment_spans

C = """#include <stdio.h>
/* a block
 * comment */
int x; // trailing

#ifdef DEBUG
  y = 1;
#endif
"""

PY = '''def f(a):
    """Docstring."""
    # a comment
    return a  # trailing

'''


def test_preprocessor_lines_are_code_in_c() -> None:
    assert code_lines("x.c", C) == {1, 4, 6, 7, 8}


def test_python_comments_docstrings_and_blank_lines_are_not_code() -> None:
    assert code_lines("x.py", PY) == {1, 4}


def test_go_and_typescript() -> None:
    assert code_lines("x.go", "package x\n// c\nfunc f() {}\n") == {1, 3}
    assert code_lines("x.ts", "// c\nconst a = 1; /* y */\n\n/** doc\n */\nexport {};\n") == {2, 6}


def test_unknown_language_counts_non_blank_lines() -> None:
    assert code_lines("notes.unknownext", "a\n\n  \nb\n") == {1, 4}


PY_HARD = '''x = rb"""not a
docstring"""
r"""A raw
docstring."""
"a" "b"  # two strings alone: still a docstring
"-".join(parts)
call(
    """an argument,
    not a docstring""",
)
s = "# not a comment"  # but this is
y = 1 + \\
    2
'''


def test_python_scanner_tells_docstrings_from_string_expressions() -> None:
    assert code_lines("x.py", PY_HARD) == {1, 2, 6, 7, 8, 9, 10, 11, 12, 13}


def test_python_comment_spans_skip_hashes_inside_strings() -> None:
    spans = comment_spans("x.py", PY_HARD)
    assert [(s.line, s.text) for s in spans] == [(5, "# two strings alone: still a docstring"), (11, "# but this is")]


def test_lines_up_to_a_bound_are_answered_as_without_it() -> None:
    """``upto`` stops the lexer early; a comment or string that crosses the bound must not change
    what it says of the lines before it."""
    text = "int a;\n/* one\n two */ int b;\nchar *s = `x\n// y`;\n// z\nint c;\n"
    whole = code_lines("f.js", text)
    for upto in range(1, 8):
        assert code_lines("f.js", text, upto) == {n for n in whole if n <= upto}, upto
    assert whole == {1, 3, 4, 5, 7}


def test_a_go_raw_string_ends_at_its_backquote_even_after_a_backslash() -> None:
    """In Go a backquoted string is raw: `\\` is one backslash and the string ends there. Read as a
    JavaScript template (where a backslash escapes the quote), it would swallow the comments after it."""
    text = "var s = []string{`-`, `\\`, `|`}\n// a comment\nx := `a`\n"
    assert code_lines("spin.go", text) == {1, 3}
    assert [s.text for s in comment_spans("spin.go", text)] == ["// a comment"]
    assert code_lines("spin.js", "var s = `\\``;\n// c\n") == {1}


RUST = """fn longest<'a>(x: &'a str, y: &'a str) -> &'a str { // the longer one
    let url = r#"see "https://example.com" // not a comment"#;
    let help = "one line
// still the string
end";
    let quote = '\\''; let bytes = b"x"; // bytes
    'outer: loop { break 'outer; }
}
"""


def test_rust_lifetimes_raw_and_multi_line_strings() -> None:
    """A lifetime ('a) opens no character literal; a raw string may hold quotes and //; a string may
    span lines. Read with C's rules, the comment after a lifetime is lost and a line inside the
    string is taken for a comment."""
    assert code_lines("lib.rs", RUST) == set(range(1, 9))
    assert [s.text for s in comment_spans("lib.rs", RUST)] == ["// the longer one", "// bytes"]
    assert code_lines("lib.c", RUST) != set(range(1, 9))


def test_rust_tokens_keep_literals_apart_from_code() -> None:
    """A change to the text of a raw string changes one string token and nothing else (a help text
    edited is a change of messages only); lifetimes stay words, and a byte string keeps its prefix."""
    tokens = code_tokens("lib.rs", RUST)
    edited = code_tokens("lib.rs", RUST.replace("not a comment", "not a comment at all"))
    assert tokens is not None and edited is not None and len(tokens) == len(edited)
    assert [(a, b) for a, b in zip(tokens, edited) if a != b] == [
        ('Sr:see "https://example.com" // not a comment', 'Sr:see "https://example.com" // not a comment at all')
    ]
    assert tokens.count("'a") == 4 and "'outer" in tokens and "Sb:x" in tokens and "S:'" in tokens


def test_python_tokens_leave_out_comments_but_not_a_hash_in_a_string() -> None:
    text = "x = 1  # it's\ny = 'a # b'  # c\n#only\nz = f(x)#t\n"
    assert code_tokens("m.py", text) == ["x", "=", "1", "y", "=", "S:a # b", "z", "=", "f", "(", "x", ")"]


def test_c_family_tokens_in_one_scan_are_those_of_blanking_comments_first() -> None:
    """``code_tokens`` scans C, JavaScript and Go once; it must give what blanking the comments and
    then scanning gives, on texts made of the characters that decide where strings and comments are."""
    import random

    from miner.core import lexer

    def two_scans(path: str, text: str) -> list[str]:
        masked = lexer._masked(text, lexer._c_comments(text, path))
        scanner = lexer._GO_TOKEN if path.endswith(".go") else lexer._C_TOKEN
        return [lexer._normal_string(t) if t[0] in lexer._QUOTES else t for t in scanner.findall(masked)]

    pieces = ['"', "'", "`", "/", "*", "\\", "\n", " ", "a", "b1", "9", ".", "$", "_", "//", "/*", "*/", "{", "\r", "#", "é"]
    draw = random.Random(7)
    for _ in range(20_000):
        text = "".join(draw.choice(pieces) for _ in range(draw.randint(0, 30)))
        for path in ("a.c", "a.go", "a.ts"):
            assert code_tokens(path, text) == two_scans(path, text), (path, text)


def test_a_text_pygments_lexed_once_answers_every_later_question_as_a_fresh_lexing_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stages ask about the same version of a file in turn; the tokens kept from the first answer give
    the same lines, comments and tokens as lexing again, the first lines too, and a text too large to
    keep is lexed each time."""
    from miner.core import lexer

    script = "\n".join(f'# note {n}\nvalue_{n}="$((n + {n}))"  # why {n}\n\necho $value_{n}' for n in range(40)) + "\n"
    lexer._kept().clear()
    fresh = (code_lines("run.sh", script), code_lines("run.sh", script, 9), comment_spans("run.sh", script))
    lexer._kept().clear()
    tokens = code_tokens("run.sh", script)
    assert tokens is not None and len(lexer._kept()) == 1
    assert (code_lines("run.sh", script), code_lines("run.sh", script, 9), comment_spans("run.sh", script)) == fresh
    assert code_lines("run.sh", script, 9) <= set(range(1, 11)) and len(code_lines("run.sh", script, 9)) < len(fresh[0])
    assert code_tokens("run.sh", script) == tokens and any(t.startswith("S") for t in tokens)
    monkeypatch.setattr(lexer, "_LEXED_MOST_CHARS", 10)
    lexer._kept().clear()
    assert code_tokens("run.sh", script) == tokens and not lexer._kept()


def test_tokens_read_in_part_and_in_turn_are_those_of_a_fresh_lexing() -> None:
    """A stage may stop reading a text's tokens early (vet, at the first difference; blame, past a line),
    and another reads them next, or meanwhile: each gets every token, in order."""
    from miner.core import lexer

    script = "\n".join(f"# note {n}\ndef m{n}(x)\n  x + {n} # why\nend" for n in range(300)) + "\n"
    lexer._kept().clear()
    fresh = code_tokens("a.rb", script)
    assert fresh is not None and len(fresh) > 1000
    lexer._kept().clear()
    first, second = code_token_stream("a.rb", script), code_token_stream("a.rb", script)
    assert first is not None and second is not None
    head = [next(first) for _ in range(10)]
    assert list(second) == fresh  # read on past where the first stopped
    assert head + list(first) == fresh
    assert code_lines("a.rb", script, 5) == {2, 3, 4}
