import warnings

import pytest

from accounts import admin, repository, service
from accounts.repository import User, UserNotFound, Users


def users():
    return Users([User(1, "Ada", "ada@example.org")])


def test_get_user_reads_a_user():
    assert repository.get_user(users(), 1).name == "Ada"
    with pytest.raises(UserNotFound):
        repository.get_user(users(), 2)


def test_fetch_user_still_works_and_warns():
    with pytest.warns(DeprecationWarning, match="get_user"):
        user = repository.fetch_user(users(), 1)
    assert user.email == "ada@example.org"
    with pytest.warns(DeprecationWarning), pytest.raises(UserNotFound):
        repository.fetch_user(users(), 2)


def test_package_code_does_not_use_the_old_name():
    repo = users()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert service.profile_page(repo, 1) == "Ada <ada@example.org>"
        admin.rename(repo, 1, "Ada L.")
        admin.deactivate(repo, 1)
    assert service.profile_page(repo, 1) == "Ada L. <ada@example.org> (deactivated)"
