"""What the REPL writes to notify, per channel and terminal, without a terminal."""

from __future__ import annotations

from sagent.repl.notify import auto_channel, sequence


def test_each_channel_writes_its_sequence_and_tmux_gets_them_wrapped() -> None:
    assert sequence("osc9", "sagent", "done") == "\x1b]9;sagent: done\x07"
    assert sequence("osc777", "a;b", "done\x07\x1b") == "\x1b]777;notify;a,b;done  \x07"
    assert sequence("osc99", "sagent", "done") == "\x1b]99;;sagent: done\x1b\\"
    assert sequence("bell", "sagent", "done") == sequence("bell", "x", "y", in_tmux=True) == "\x07"
    assert sequence("off", "sagent", "done") == ""
    wrapped = sequence("osc9+bell", "sagent", "done", in_tmux=True)
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;sagent: done\x07\x1b\\\x07"


def test_auto_picks_what_the_terminal_is_known_to_take() -> None:
    assert auto_channel({"TERM_PROGRAM": "iTerm.app"}) == "osc9"
    assert auto_channel({"TERM": "xterm-kitty"}) == "osc99"
    assert auto_channel({"TERM_PROGRAM": "ghostty"}) == auto_channel({"VTE_VERSION": "7600"}) == "osc777"
    assert auto_channel({"TERM": "tmux-256color", "ITERM_SESSION_ID": "w0t0p0"}) == "osc9"  # tmux in iTerm2
    assert auto_channel({"TERM": "xterm-256color"}) == "bell"
