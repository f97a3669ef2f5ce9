"""Users: password hashing, Concrete's validation messages, creation and the login counters.

The validators for username and email run without the user as their subject, so on update a user's *own* current
username or email is reported as taken (recorded: ``users.update.own_username`` / ``own_email``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3

from cmssync.emulator.store import Store

USERNAME_LENGTH = "A username must be between 3 and 64 characters long."
USERNAME_CHARS = (
    "A username may only contain letters, numbers, dots (not at the beginning/end), "
    "and underscores (not at the beginning/end)."
)
INVALID_EMAIL = "Invalid email address."
PASSWORD_LENGTH = "A password must be between 5 and 128 characters long."

_USERNAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+$")


def hash_password(password: str) -> str:
    salt = secrets.token_hex(8)
    digest = hashlib.sha256((salt + password).encode()).hexdigest()
    return f"{salt}${digest}"


def check_password(stored: str, password: str) -> bool:
    salt, _, digest = stored.partition("$")
    return hmac.compare_digest(hashlib.sha256((salt + password).encode()).hexdigest(), digest)


def username_errors(store: Store, username: str) -> list[str]:
    if not 3 <= len(username) <= 64:
        return [USERNAME_LENGTH]
    if not _USERNAME.match(username):
        return [USERNAME_CHARS]
    if store.one("SELECT 1 FROM users WHERE username = ? COLLATE NOCASE", username) is not None:
        return [f'The username "{username}" is already taken.']
    return []


def email_errors(store: Store, email: str) -> list[str]:
    if not _EMAIL.match(email):
        return [INVALID_EMAIL]
    if store.one("SELECT 1 FROM users WHERE email = ? COLLATE NOCASE", email) is not None:
        return [f'The email address "{email}" is already in use.']
    return []


def password_errors(password: str) -> list[str]:
    return [] if 5 <= len(password) <= 128 else [PASSWORD_LENGTH]


def create(
    store: Store,
    *,
    username: str,
    email: str,
    password: str,
    ts: int,
    language: str | None = None,
    user_id: int | None = None,
) -> int:
    """Insert an active user (inside a transaction); returns the id."""
    cursor = store.db.execute(
        "INSERT INTO users (id, username, email, password, date_added, date_password_last_changed,"
        " date_last_updated, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (user_id, username, email, hash_password(password), ts, ts, ts, language),
    )
    return int(cursor.lastrowid or 0)


def get(store: Store, user_id: int) -> sqlite3.Row | None:
    return store.one("SELECT * FROM users WHERE id = ?", user_id)


def record_login(store: Store, user_id: int, ts: int) -> None:
    """The password grant logs the user in (recorded: ``total_logins`` grows, ``last_login`` moves on)."""
    store.db.execute(
        "UPDATE users SET total_logins = total_logins + 1, previous_login = last_login, last_login = ? WHERE id = ?",
        (ts, user_id),
    )
