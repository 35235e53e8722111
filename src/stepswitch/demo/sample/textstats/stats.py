"""Word and line counts."""


def word_count(text: str) -> int:
    """The number of words in `text`, words being separated by whitespace."""
    return len(text.split(" "))


def line_count(text: str) -> int:
    """The number of lines in `text`; a trailing newline does not start a new line."""
    return len(text.splitlines())
