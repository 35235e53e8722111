from accounts.repository import Users, fetch_user


def profile_page(users: Users, user_id: int) -> str:
    user = fetch_user(users, user_id)
    status = "" if user.active else " (deactivated)"
    return f"{user.name} <{user.email}>{status}"
