"""The shapes of names in the content: page paths and handles, file paths under ``files/``, usernames.

Pure string checks that raise ``ValueError`` with a reason a user can act on; the loader adds the location.
"""

from __future__ import annotations

import re

PAGE_HANDLE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A page path segment: a URL handle Concrete can make (lowercase letters and digits, single ``-`` between)."""

EXCLUDED_WORDS = frozenset(
    [
        "a",
        "an",
        "as",
        "at",
        "before",
        "but",
        "by",
        "for",
        "from",
        "is",
        "in",
        "into",
        "like",
        "of",
        "off",
        "on",
        "onto",
        "per",
        "since",
        "than",
        "the",
        "this",
        "that",
        "to",
        "up",
        "via",
        "with",
    ]
)
"""Concrete's default ``concrete.seo.exclude_words``: dropped from a page's URL when it is made from its name."""

HANDLE = re.compile(r"[a-z][a-z0-9_]*")
"""Attribute, page type, template and block type handles."""

USERNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?")
"""Concrete's username rule: letters, numbers, dots and underscores (dots and underscores not at either end)."""

MAX_NAME = 255


def check_page_handle(segment: str, *, created: bool = True) -> None:
    """A valid URL segment; with ``created`` (the default) also one Concrete can produce.

    Concrete makes a new page's URL from its name with URLify, which lowercases, turns ``_`` and spaces into ``-``
    and drops common short words; cmssync creates pages so that the URL is the file's name, which only works when
    URLify leaves that name as it is. Pages that already exist keep whatever handle they have (an imported sample
    page is ``freshen-up-your-website``), so ``created=False`` checks only the syntax."""
    if not PAGE_HANDLE.fullmatch(segment):
        raise ValueError(
            f"invalid page handle {segment!r}: use lowercase letters and digits, with single '-' between words "
            "(the page's URL segment comes from its file name)"
        )
    dropped = dropped_words(segment) if created else []
    if dropped:
        raise ValueError(
            f"invalid page handle {segment!r}: Concrete leaves the word {dropped[0]!r} out of page URLs "
            "(concrete.seo.exclude_words), so this page cannot have this URL; rename the file"
        )


def dropped_words(handle: str) -> list[str]:
    """The words of a handle (or path) that URLify leaves out of URLs it makes."""
    return [word for part in handle.split("/") for word in part.split("-") if word in EXCLUDED_WORDS]


def check_page_path(path: str, *, existing: bool = False) -> None:
    """``/`` or ``/a/b`` made of valid handles (``existing``: of a page that exists, see :func:`check_page_handle`)."""
    if path == "/":
        return
    if not path.startswith("/") or path.endswith("/"):
        raise ValueError(f"invalid page path {path!r}: a page path starts with '/' and does not end with one")
    for segment in path[1:].split("/"):
        check_page_handle(segment, created=not existing)


def parent_path(path: str) -> str | None:
    """``/about/team`` → ``/about``; ``/about`` → ``/``; ``/`` → ``None``."""
    if path == "/":
        return None
    head = path.rsplit("/", 1)[0]
    return head or "/"


def check_file_reference(path: str) -> None:
    """A path relative to ``files/``: no ``..``, no absolute path, no backslash, no empty or dot segments."""
    if not path:
        raise ValueError("empty file reference: use ${file:PATH} with PATH relative to files/")
    if path.startswith("/") or "\\" in path or re.match(r"[A-Za-z]:", path):
        raise ValueError(f"file reference {path!r} must be a relative path under files/ (forward slashes)")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise ValueError(f"file reference {path!r} must stay inside files/ (no '..', '.' or empty segments)")


def check_username(name: str) -> None:
    if not 3 <= len(name) <= 64:
        raise ValueError(f"username {name!r} must be between 3 and 64 characters long")
    if not USERNAME.fullmatch(name):
        raise ValueError(
            f"username {name!r} may only contain letters, numbers, dots and underscores "
            "(dots and underscores not at the beginning or end)"
        )


# --- Where things live in the content directory (design.md §3) -------------------------------------------------

CONFIG_FILE = "cmssync.yaml"
STACKS_PREFIX = "/!stacks/"
"""Where a site keeps its stacks (global areas such as a footer column): ``/!stacks/footer-column-1``, whose file
is ``stacks/footer-column-1.yaml``; a stack's version for another locale is a child page of it
(``/!stacks/footer-column-1/footer-column-1``), next to it in ``stacks/footer-column-1/footer-column-1.yaml``.
Internally a stack is a page at that path (cmssync.content.models.StackSpec), and the state records it there;
plans, targets and output name it ``stack:footer-column-1`` (:func:`page_object`)."""
YAML_SUFFIX = ".yaml"
"""The one extension of content YAML files; ``.yml`` is reported wherever it appears (one spelling, one rule)."""


def page_path_of(name: str) -> str:
    """The page path of a page file, from its content-relative POSIX name.

    ``pages/index.yaml`` → ``/``; ``pages/a.yaml`` and ``pages/a/index.yaml`` → ``/a``; ``pages/a/b.yaml`` →
    ``/a/b``; a stack file ``stacks/footer.yaml`` → ``/!stacks/footer``, a localized version of it
    ``stacks/footer/footer.yaml`` → ``/!stacks/footer/footer``. Raises ``ValueError`` for a name that is not
    a page or stack file or whose segments are not valid handles;
    words Concrete drops from the URLs it makes are allowed here (an existing page may have them) and checked by
    ``cmssync.content.checks.creatable_handles`` for pages that are not pinned to an existing id.
    """
    if name.startswith("stacks/") and name.endswith(YAML_SUFFIX):
        handle = name[len("stacks/") : -len(YAML_SUFFIX)]
        parts = handle.split("/")
        if len(parts) > 2:
            raise ValueError(
                f"{name}: stacks/ holds stack files (stacks/<handle>{YAML_SUFFIX}) and their localized versions "
                f"(stacks/<handle>/<version>{YAML_SUFFIX}), nothing deeper"
            )
        for part in parts:
            check_page_handle(part, created=False)
        return STACKS_PREFIX + handle
    if not name.startswith("pages/") or not name.endswith(YAML_SUFFIX):
        raise ValueError(f"{name}: not a page file (pages/**/*{YAML_SUFFIX})")
    parts = name[len("pages/") : -len(YAML_SUFFIX)].split("/")
    if parts[-1] == "index":
        parts.pop()
    for segment in parts:
        check_page_handle(segment, created=False)
    return "/" + "/".join(parts)


def page_file_names(path: str, *, tree_home: bool = False) -> tuple[str, ...]:
    """The names a page file for ``path`` may have, preferred first (the inverse of :func:`page_path_of`). A locale
    tree's home (``tree_home``: ``/de``) prefers ``pages/de/index.yaml``, so the whole tree is in its folder."""
    if path == "/":
        return ("pages/index.yaml",)
    if is_stack_path(path):
        return (f"stacks/{path[len(STACKS_PREFIX) :]}{YAML_SUFFIX}",)
    stem = path.strip("/")
    names = (f"pages/{stem}{YAML_SUFFIX}", f"pages/{stem}/index{YAML_SUFFIX}")
    return names[::-1] if tree_home else names


def is_stack_path(path: str) -> bool:
    """A stack's path (``/!stacks/footer-column-1``), as the content and the site name it."""
    return path.startswith(STACKS_PREFIX)


def page_object(path: str) -> tuple[str, str]:
    """The kind and key the plan names the page at ``path`` by: ``("stack", "footer")`` for ``/!stacks/footer``
    (a stack is its own kind in plans, targets and output), else ``("page", path)``."""
    return ("stack", path[len(STACKS_PREFIX) :]) if is_stack_path(path) else ("page", path)


def page_object_id(path: str) -> str:
    """``stack:footer`` for the stack ``/!stacks/footer``, else ``page:<path>`` (see :func:`page_object`)."""
    kind, key = page_object(path)
    return f"{kind}:{key}"


def page_named(path: str) -> str:
    """How messages name the page at ``path``: ``stack footer`` for ``/!stacks/footer``, else ``page /about`` (the
    one way every warning, error and note names a page or a stack)."""
    return " ".join(page_object(path))


def object_page_path(kind: str, key: str) -> str | None:
    """The page path of a ``page`` or ``stack`` object (the inverse of :func:`page_object`); None for other kinds."""
    return key if kind == "page" else STACKS_PREFIX + key if kind == "stack" else None


def asset_path_of(name: str) -> str:
    """The asset a name under ``files/`` stands for: the asset itself, or the one a ``.yaml`` sidecar describes."""
    relative = name.removeprefix("files/")
    return relative.removesuffix(YAML_SUFFIX)


def is_hidden(name: str) -> bool:
    """Dotfiles and dot-directories anywhere in a content-relative name are not content."""
    return any(part.startswith(".") for part in name.split("/"))
