from dataclasses import dataclass


class UserNotFound(LookupError):
    pass


@dataclass
class User:
    id: int
    name: str
    email: str
    active: bool = True


class Users:
    def __init__(self, users: list[User] | None = None) -> None:
        self._by_id = {u.id: u for u in users or []}

    def add(self, user: User) -> None:
        self._by_id[user.id] = user

    def __contains__(self, user_id: int) -> bool:
        return user_id in self._by_id

    def _row(self, user_id: int) -> User:
        return self._by_id[user_id]


def fetch_user(users: Users, user_id: int) -> User:
    if user_id not in users:
        raise UserNotFound(user_id)
    return users._row(user_id)
