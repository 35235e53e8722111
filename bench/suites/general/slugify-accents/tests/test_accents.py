import pytest

from blog.posts import Blog
from blog.text import slugify
from blog.urls import post_url


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Café crème brûlée", "cafe-creme-brulee"),
        ("Ångström units", "angstrom-units"),
        ("Naïve approach", "naive-approach"),
        ("Über-fast São Paulo", "uber-fast-sao-paulo"),
        ("¡Olé!", "ole"),
        ("plain title", "plain-title"),
    ],
)
def test_accented_letters_become_plain_letters(title, slug):
    assert slugify(title) == slug


def test_accented_and_plain_titles_share_a_slug_with_suffix():
    blog = Blog()
    assert blog.publish("Café", "").slug == "cafe"
    assert blog.publish("Cafe", "").slug == "cafe-2"


def test_url_of_accented_title():
    assert post_url(Blog().publish("Café crème brûlée", "")) == "/posts/cafe-creme-brulee"
