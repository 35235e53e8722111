from accounts import repository
from accounts.repository import User, Users


def deactivate(users: Users, user_id: int) -> User:
    user = repository.fetch_user(users, user_id)
    user.active = False
    return user


def rename(users: Users, user_id: int, name: str) -> User:
    user = repository.fetch_user(users, user_id)
    user.name = name
    return user
