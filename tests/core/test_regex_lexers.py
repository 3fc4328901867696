from __future__ import annotations

import re

import pytest
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name

from miner.core.regex_lexers import faster, renamed, starts

# Ruby that takes the Ruby lexer through its callbacks and states: heredocs (one inside another's
# line, a squiggly one, one never closed), string interpolation nested in braces, %-literals with
# each kind of bracket and with a back-referenced delimiter, regular expressions after keywords and
# in calls, character literals, =begin comments, a non-ASCII name, and __END__.
RUBY = r"""#!/usr/bin/env ruby
# encoding: utf-8
=begin
a block comment
=end
module Outer::Inner
  class Thing < Base
    attr_reader :name, :"quoted sym", :<=>
    def initialize(name = "x#{1 + {a: 1}[:a]}y", *rest, **opts, &blk)
      @name, @@count, $glob = name, 0, $!
      text = <<-ONE + <<~TWO
        first #{name}
      ONE
        second
      TWO
      raw = <<'RAW'
no #{interpolation} here
RAW
      list = %w[a b c] + %i(d e) + %q{f {g} h} + %Q<i #{j} k> + %r|l/m|i.source.split
      odd = %q!bang! + %x(echo hi) + %(plain #{paren})
      return nil if name =~ /ab+c/ || name.match /x\/y/
      ch = ?a + ?\n
      x = y ? 1 : 2
      x >= 0 ? n[x] : ""
      value = 0x1F / 2 + 0b101 + 0o17 + 1_000.5e3
      café = "naïve"
      `ls #{dir}`
      yield self, rest unless block_given?
    end

    def <=>(other) = name <=> other.name
    def self.build; new("a"); end
  end
end
puts <<NEVER_CLOSED
this heredoc has no end
__END__
data after the end
"""

SHELL = r"""#!/bin/sh
# a comment
set -eu
name="world ${USER:-nobody}"
cat <<EOF
hello $name $(date +%Y)
EOF
for f in *.c; do
  case "$f" in
    a*) echo 'single' ;;
    *) printf '%s\n' "$f" | sed -e 's/a/b/g' ;;
  esac
done
echo $((1 + 2)) `uname` \
  continued
"""

PERL = r"""#!/usr/bin/perl
use strict;
my $x = qq{a {nested} b};
my @y = qw(a b c);
$x =~ s/foo/bar/g;
print <<"END";
text $x
END
# comment
=pod

docs

=cut
"""


def _tokens(lexer: Lexer, text: str) -> list[tuple[object, str]]:
    return list(lexer.get_tokens(text))


@pytest.mark.parametrize(
    ("name", "text"),
    [("ruby", RUBY), ("bash", SHELL), ("perl", PERL), ("ruby", SHELL), ("bash", RUBY), ("perl", RUBY), ("ruby", "")],
)
def test_faster_lexer_gives_pygments_tokens(name: str, text: str) -> None:
    lexer = get_lexer_by_name(name, stripnl=False, ensurenl=False)
    fast = faster(lexer)
    assert fast is not lexer and type(fast).__dict__.get("_dispatch")  # it runs the one-call search
    assert _tokens(fast, text) == _tokens(lexer, text)


def test_faster_lexer_gives_pygments_tokens_on_every_prefix_of_ruby() -> None:
    # Cut anywhere, a text leaves strings, heredocs and interpolations open at its end.
    lexer = get_lexer_by_name("ruby", stripnl=False, ensurenl=False)
    fast = faster(lexer)
    for end in range(0, len(RUBY), 7):
        assert _tokens(fast, RUBY[:end]) == _tokens(lexer, RUBY[:end]), end


def test_lexers_with_a_loop_of_their_own_are_left_as_they_are() -> None:
    json = get_lexer_by_name("json")  # pygments' JSON lexer has its own get_tokens_unprocessed
    assert faster(json) is json


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(a)(b)\2", r"(a)(?P<t_2>b)(?P=t_2)"),
        (r"(%r([\W_]))((?:\\\2|(?!\2).)*)(\2[mix]*)", r"(%r(?P<t_2>[\W_]))((?:\\(?P=t_2)|(?!(?P=t_2)).)*)((?P=t_2)[mix]*)"),
        (r"[\w\W]+?(x)\1", r"[\w\W]+?(?P<t_1>x)(?P=t_1)"),  # an escape inside a set does not end it
        (r"[]\1](a)", r"[]\1](a)"),  # in a set, \1 is a character, and ']' first is one too
        (r"(a)\101", r"(a)\101"),  # three octal digits: the character A
        (r"(?<=x)(a)\1", r"(?<=x)(?P<t_1>a)(?P=t_1)"),  # a lookbehind is no group
        (r"\\1(a)", r"\\1(a)"),  # an escaped backslash, then the digit 1
    ],
)
def test_renamed_back_references(pattern: str, expected: str) -> None:
    assert renamed(pattern, "t") == expected
    assert re.compile(expected).groups == re.compile(pattern).groups


@pytest.mark.parametrize("pattern", [r"(?P<x>a)(?P=x)", r"(a)?(?(1)b|c)", r"(?i)abc", r"(a)\2"])
def test_patterns_that_cannot_join_an_alternation(pattern: str) -> None:
    assert renamed(pattern, "t") is None


def test_what_a_match_may_begin_with() -> None:
    first, other, empty = starts(r"(?:^|(?<=[=<>]))(\s*)(/)", re.M)
    assert ord("/") in first and ord(" ") in first and ord("a") not in first and other and not empty
    assert starts(r"[a-c]x|\d", 0)[0] == {ord(c) for c in "abc0123456789"}
    assert starts(r"é", 0) == (frozenset(), True, False)  # only a character outside ASCII
    assert starts(r"a*", 0)[2] and starts(r"", 0)[2]  # may match the empty string: anywhere
    for ignoring_case in (r"(?i)a", r"(?i:a)b"):  # a letter's other case may be anything
        assert starts(ignoring_case, 0)[:2] == (frozenset(range(128)), True)
