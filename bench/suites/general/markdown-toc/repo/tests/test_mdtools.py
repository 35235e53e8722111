from mdtools import Heading, anchor, parse_headings, unique_anchors

DOC = """# Title

Some text.

## Install it!

```sh
# not a heading
```

### From source
"""


def test_headings_skip_code_blocks():
    assert parse_headings(DOC) == [
        Heading(1, "Title"),
        Heading(2, "Install it!"),
        Heading(3, "From source"),
    ]


def test_anchor_drops_punctuation():
    assert anchor("Install it!") == "install-it"
    assert anchor("What's new in 2.0?") == "whats-new-in-20"


def test_repeated_anchors_are_numbered():
    assert unique_anchors(["Usage", "Usage", "Other", "Usage"]) == [
        "usage",
        "usage-1",
        "other",
        "usage-2",
    ]
