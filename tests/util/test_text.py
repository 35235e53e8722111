"""escape_controls: what a terminal would act on is shown as its escape; the rest is unchanged."""

from __future__ import annotations

import re

import pytest

from stepswitch.util.text import escape_controls

# What a terminal acts on: C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates.
ACTED_ON = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_escape_sequences_show_as_the_characters_of_their_escapes():
    assert escape_controls("\x1b]0;owned\x07") == r"\x1b]0;owned\x07"
    assert escape_controls("\x1b[2J\x1b[31mred") == r"\x1b[2J\x1b[31mred"


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\r", r"\r"),
        ("\x08", r"\x08"),
        ("\x07", r"\x07"),
        ("\x00", r"\x00"),
        ("\x7f", r"\x7f"),
        ("\x9b", r"\x9b"),  # C1 CSI: some terminals start a sequence with it
        ("\x85", r"\x85"),
    ],
)
def test_carriage_return_backspace_bell_del_and_c1_controls_are_escaped(char: str, shown: str):
    assert escape_controls(f"a{char}b") == f"a{shown}b"


@pytest.mark.parametrize("code", [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
def test_every_bidi_embedding_override_and_isolate_is_escaped(code: int):
    assert escape_controls(f"x{chr(code)}y") == f"x\\u{code:04x}y"


def test_newlines_and_tabs_of_multi_line_output_stay_readable():
    output = "FAILED tests/test_ops.py\n\tassert 1.5 == 2.0\n"
    assert escape_controls(output) == output


def test_a_carriage_return_that_ends_a_line_is_dropped_one_inside_a_line_is_shown():
    assert escape_controls("one\r\ntwo\rover\n") == "one\ntwo\\rover\n"


def test_for_one_line_text_newlines_and_tabs_are_escaped_too():
    assert escape_controls("a\nb\tc\r\n", keep_newlines=False) == r"a\nb\tc\r\n"


def test_ordinary_text_is_unchanged_backslashes_and_non_latin_letters_included():
    text = r"C:\x1b\new — naïve ünïcödé 日本語 ✓ 🙂 שלום"
    assert escape_controls(text) == text


def test_a_lone_surrogate_left_by_a_lenient_decoding_is_escaped():
    raw = b"ok \xff".decode("utf-8", "surrogateescape")
    assert escape_controls(raw) == r"ok \udcff"


@pytest.mark.parametrize("keep_newlines", [True, False])
def test_no_code_point_a_terminal_acts_on_survives_and_escaping_twice_changes_nothing(
    keep_newlines: bool,
):
    every = "".join(map(chr, [*range(0x3000), *range(0xD800, 0xE000), 0xFEFF, 0x10FFFF]))
    once = escape_controls(every, keep_newlines=keep_newlines)
    left = set(ACTED_ON.findall(once))
    assert left == ({"\n", "\t"} if keep_newlines else set())
    assert escape_controls(once, keep_newlines=keep_newlines) == once
