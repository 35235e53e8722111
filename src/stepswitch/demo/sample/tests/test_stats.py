from textstats.stats import line_count, word_count


def test_words_separated_by_single_spaces():
    assert word_count("one two three") == 3


def test_runs_of_spaces_and_line_breaks_separate_words_once():
    assert word_count("one   two\nthree") == 3


def test_empty_text_has_no_words():
    assert word_count("") == 0


def test_line_count_ignores_a_trailing_newline():
    assert line_count("a\nb\n") == 2
