"""The git edge: parsing what git prints, on bytes written here."""

from __future__ import annotations

from pathlib import Path

from miner.git import Repo
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


def test_same_lines_maps_unchanged_lines_between_versions(tmp_path: Path) -> None:
    from test_messy import commit, git

    git(tmp_path, "init", "-q", "-b", "main")
    old = commit(tmp_path, {"a.py": b"one\ntwo\nthree\nfour\nfive\n"}, "Old", "2022-01-01T10:00:00Z")
    new = commit(tmp_path, {"a.py": b"zero\none\nTWO\nthree\nfive\nsix\n"}, "New", "2022-01-02T10:00:00Z")
    repo = Repo(tmp_path)
    assert repo.same_lines(new, old, "a.py", range(1, 7)) == {2: 1, 4: 3, 5: 5}
    assert repo.same_lines(new, old, "gone.py", [1]) == {}


def test_a_failure_of_the_run_is_never_a_missing_object(samples: dict) -> None:
    """Only objects the repository really lacks make a MissingObjectError (which a build may keep);
    a git killed by a signal, or one that says it cannot read what the store holds, fails the run."""
    import pytest

    from miner.core.errors import MissingObjectError, TransientGitError

    repo = Repo(samples["shelf"].path)
    head = repo.resolve("HEAD")
    with pytest.raises(TransientGitError, match="signal 9"):
        repo._fail("blame", b"", -9)
    with pytest.raises(TransientGitError, match="holds what it names"):
        repo._fail("log", f"fatal: unable to read {head}".encode())
    with pytest.raises(MissingObjectError):
        repo._fail("log", b"fatal: unable to read " + b"0" * 39 + b"1")


def test_two_builds_into_one_output_cannot_run_at_once(samples: dict, tmp_path: Path) -> None:
    import pytest

    from miner.commands.build import build
    from miner.core.config import load_config
    from miner.core.errors import OutputLockedError
    from miner.stages.write import Staging

    out = tmp_path / "out"
    first = Staging(out)  # a build in progress
    with pytest.raises(OutputLockedError, match="another miner build is writing"):
        build([samples["shelf"].path], out, load_config(), progress=False)
    assert first.dir.is_dir()  # the first build's staging directory is left alone
    first.abort()
    build([samples["shelf"].path], out, load_config(), progress=False)
    assert (out / "manifest.json").is_file()
