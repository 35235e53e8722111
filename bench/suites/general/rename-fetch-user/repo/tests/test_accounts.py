import pytest

from accounts.admin import deactivate, rename
from accounts.repository import User, UserNotFound, Users
from accounts.service import profile_page


def users():
    return Users([User(1, "Ada", "ada@example.org"), User(2, "Bob", "bob@example.org")])


def test_profile_page():
    assert profile_page(users(), 1) == "Ada <ada@example.org>"


def test_deactivated_profile():
    repo = users()
    deactivate(repo, 2)
    assert profile_page(repo, 2) == "Bob <bob@example.org> (deactivated)"


def test_rename():
    repo = users()
    rename(repo, 1, "Ada L.")
    assert profile_page(repo, 1).startswith("Ada L.")


def test_unknown_user():
    with pytest.raises(UserNotFound):
        profile_page(users(), 9)
