from mdtools import table_of_contents

DOC = """# Project

## Install

### From source

#### Build flags

## Usage

```
## not a heading
```

## Usage
"""


def test_nested_list_of_links():
    assert table_of_contents(DOC) == (
        "- [Project](#project)\n"
        "  - [Install](#install)\n"
        "    - [From source](#from-source)\n"
        "  - [Usage](#usage)\n"
        "  - [Usage](#usage-1)\n"
    )


def test_max_level_leaves_deeper_headings_out():
    assert table_of_contents(DOC, max_level=2) == (
        "- [Project](#project)\n"
        "  - [Install](#install)\n"
        "  - [Usage](#usage)\n"
        "  - [Usage](#usage-1)\n"
    )


def test_indent_starts_at_the_top_level_present():
    text = "## A\n\n### B\n\n## C?\n"
    assert table_of_contents(text) == "- [A](#a)\n  - [B](#b)\n- [C?](#c)\n"


def test_anchors_count_headings_left_out_by_max_level():
    text = "# Notes\n\n## Notes\n\n#### Notes\n\n## Notes\n"
    assert table_of_contents(text, max_level=2) == (
        "- [Notes](#notes)\n  - [Notes](#notes-1)\n  - [Notes](#notes-3)\n"
    )


def test_no_headings_gives_empty_text():
    assert table_of_contents("just text\n") == ""
