from __future__ import annotations

from miner.lexer import code_lines

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
