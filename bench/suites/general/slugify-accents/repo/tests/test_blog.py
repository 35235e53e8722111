from blog.posts import Blog
from blog.text import slugify
from blog.urls import post_url


def test_slug_of_plain_title():
    assert slugify("Hello, World!") == "hello-world"


def test_runs_of_punctuation_become_one_dash():
    assert slugify("  Ten -- tips: part 2 ") == "ten-tips-part-2"


def test_duplicate_titles_get_a_suffix():
    blog = Blog()
    first = blog.publish("Release notes", "...")
    second = blog.publish("Release notes!", "...")
    assert (first.slug, second.slug) == ("release-notes", "release-notes-2")


def test_url_uses_the_slug():
    blog = Blog()
    assert post_url(blog.publish("Why tests?", "")) == "/posts/why-tests"


def test_title_without_letters_gets_a_slug():
    assert Blog().publish("!!!", "").slug == "post"
