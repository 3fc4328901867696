"""Parsing what git prints (miner.git.parse), on bytes written here."""

from __future__ import annotations

from miner.git.parse import parse_blame, parse_commit, parse_diff, unquote

DIFF = b"""diff --git a/src/a.py b/src/b.py
similarity index 90%
rename from src/a.py
rename to src/b.py
index 111..222 100644
--- a/src/a.py
+++ b/src/b.py
@@ -3,3 +3,3 @@ def f():
 x = 1
-y = 2
+y = 3
 z = 4
@@ -10,2 +10,4 @@ def g():
 a = 1
+if b is None:
+    return
 return a / b
diff --git a/new.txt b/new.txt
new file mode 100644
index 000..333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+hello
diff --git a/img.png b/img.png
index 1..2 100644
Binary files a/img.png and b/img.png differ
"""


def test_parse_diff_lines_renames_insertions_and_binaries() -> None:
    renamed, new, binary = parse_diff(DIFF.split(b"\n"))
    assert (renamed.old_path, renamed.new_path) == ("src/a.py", "src/b.py")
    assert renamed.removed == ((4, "y = 2"),)
    assert renamed.added == ((4, "y = 3"), (11, "if b is None:"), (12, "    return"))
    assert renamed.insertions == (11,)  # the guard went in before old line 11, "return a / b"
    assert (new.old_path, new.new_path, new.new_file) == (None, "new.txt", True)
    assert binary.binary and binary.old_path == "img.png"


def test_insertion_with_no_context() -> None:
    (f,) = parse_diff(b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -5,0 +6,1 @@\n+guard\n".split(b"\n"))
    assert f.insertions == (6,)


def test_unquote() -> None:
    assert unquote(b'"caf\\303\\251 \\"x\\".py"') == 'caf\u00e9 "x".py'
    assert unquote(b"plain.py") == "plain.py"


def test_parse_commit_with_rename_and_binary() -> None:
    sha, parent = "a" * 40, "b" * 40
    record = (
        f"{sha}\x02{parent}\x02Ann\x02ann@example.com\x0210\x0220\x02Subject\n\nBody\n\x03\x00\n"
        "1\t2\tsrc/x.py\x00-\t-\tlogo.png\x000\t0\t\x00old.py\x00new.py\x00"
    ).encode()
    meta = parse_commit(record)
    assert meta.sha == sha and meta.parents == (parent,) and meta.subject == "Subject"
    assert [(f.path, f.old_path, f.added, f.removed, f.binary) for f in meta.files] == [
        ("src/x.py", None, 1, 2, False),
        ("logo.png", None, 0, 0, True),
        ("new.py", "old.py", 0, 0, False),
    ]
    assert meta.changed_lines == 3


def test_parse_blame_porcelain_groups() -> None:
    a, b = "a" * 40, "b" * 40
    out = (
        f"{a} 3 10 2\nauthor X\nfilename old/name.c\n\tline ten\n{a} 4 11\n\tline eleven\n"
        f"{b} 7 12 1\nauthor Y\nfilename new.c\n\tline twelve\n"
    ).encode()
    hits = parse_blame(out)
    assert [(h.final_line, h.sha, h.orig_path, h.orig_line) for h in hits] == [
        (10, a, "old/name.c", 3),
        (11, a, "old/name.c", 4),
        (12, b, "new.c", 7),
    ]
