"""Where a site object lives: a site of the installation and a locale tree of that site.

A Concrete site has one page tree per locale (Dashboard › System › Multilingual): the default locale's tree at ``/``
and every other one at its own home (``/de``, a page without a parent). The REST API names the trees only in
``GET /sites/default?includes=locales`` (``{id, language, country, home_page_id}``), and every page of a tree has a
path under its tree's home (``/de/about``) and reports the tree's ``locale`` (``concrete-9.3.1/locales.jsonl``).

So a page path is unique across the trees of a site, and the content keeps each tree where its URLs are: the default
tree in ``pages/``, the ``/de`` tree in ``pages/de/`` (its home ``pages/de/index.yaml``, which says ``locale:
de_DE``). :class:`Address` is the small value every object's key is scoped by — the site and the tree — and
:class:`Trees` the trees of one site, learned from the site on every run, so adding a tree adds data, never a
parameter: whatever has a page path asks ``trees.address(path)``.

The site part is the handle of the site a run manages (``site.handle``; ``default`` unless set). Pages of two sites
of one installation share paths (``/about`` in each: ``concrete-9.3.1/sites.jsonl``), so a content directory and its
state are one site, and within a run the site part is the same for every object.

Localized stacks (a stack's version for a locale) are child pages of the neutral stack (``/!stacks/footer/footer``)
that report the default locale; the API never says which locale they are for. Their tree is known only when the
site has exactly one tree besides the default one (a localized stack is always for a tree that is not the default);
otherwise :meth:`Trees.address` gives no tree for them and nothing is invented. On a real 9.3.1 site with two trees
besides the default one (``localized-stacks.jsonl``) nothing a read shows tells a stack's versions apart: each has
the neutral stack's name, type and blocks and reports the default locale, the neutral stack's children list is
empty, the site's locales name only their homes, and a version's path is the neutral stack's handle made unique
among its siblings in the order the versions were made (``footer``, ``footer-2``), whatever their locales. Such
versions are managed by their files and said to have no tree (:meth:`Trees.untold_stacks_note`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cmssync.content.paths import STACKS_PREFIX, is_stack_path

DEFAULT_SITE = "default"
"""The site cmssync manages unless told otherwise (``GET /sites/default``)."""


@dataclass(frozen=True, order=True)
class Address:
    """A site and a locale tree of it (``locale`` ``""``: the tree is not known, e.g. a stack shared by all)."""

    site: str = DEFAULT_SITE
    locale: str = ""

    def __str__(self) -> str:
        return f"{self.site}/{self.locale}" if self.locale else self.site


@dataclass(frozen=True)
class Tree:
    """One locale tree: its locale code (``de_DE``), the path of its home (``/`` or ``/de``) and the home's id."""

    locale: str
    home_path: str
    home_id: int
    default: bool = False

    def holds(self, path: str) -> bool:
        """Whether ``path`` is this tree's home or a page below it (the default tree: any page of no other tree)."""
        if self.home_path == "/":
            return not is_stack_path(path)
        return path == self.home_path or path.startswith(self.home_path + "/")

    def relative(self, path: str) -> str:
        """``/de/about`` → ``/about`` in the ``/de`` tree (a page's place within its tree)."""
        if self.home_path == "/":
            return path
        return path[len(self.home_path) :] or "/"

    def absolute(self, relative: str) -> str:
        """The inverse of :meth:`relative`."""
        if self.home_path == "/":
            return relative
        return self.home_path if relative == "/" else self.home_path + relative


@dataclass(frozen=True)
class Trees:
    """The locale trees of one site, the default first (a site that was never read: the default tree alone)."""

    site: str = DEFAULT_SITE
    trees: tuple[Tree, ...] = field(default_factory=tuple)

    @property
    def multiple(self) -> bool:
        """More than one tree: then keys, reports and status name each object's tree."""
        return len(self.trees) > 1

    @property
    def homes(self) -> dict[str, str]:
        """Home path → locale of every tree (what a plan carries to name each object's tree)."""
        return {tree.home_path: tree.locale for tree in self.trees}

    @classmethod
    def of_homes(cls, homes: Mapping[str, str], site: str = DEFAULT_SITE) -> Trees:
        """The trees :attr:`homes` describes (their homes' ids unknown: 0)."""
        return cls(site, tuple(Tree(locale, path, 0, default=path == "/") for path, locale in homes.items()))

    @property
    def default(self) -> Tree | None:
        return next((tree for tree in self.trees if tree.default), None)

    def roots(self, default_home_id: int) -> dict[str, int]:
        """Home path → page id of every tree (``/`` → the site's home when the site named no tree)."""
        roots = {tree.home_path: tree.home_id for tree in self.trees}
        roots.setdefault("/", default_home_id)
        return roots

    def tree_of(self, path: str) -> Tree | None:
        """The tree ``path`` belongs to; for a localized stack (``/!stacks/<handle>/<version>``) the one tree
        besides the default when there is exactly one, else ``None``; ``None`` for a neutral stack."""
        if is_stack_path(path):
            others = [tree for tree in self.trees if not tree.default]
            return others[0] if _localized_stack(path) and len(others) == 1 else None
        found = [tree for tree in self.trees if not tree.default and tree.holds(path)]
        return found[0] if found else self.default

    def untold_stacks_note(self, paths: Iterable[str]) -> str | None:
        """What to say of the localized stacks among ``paths`` whose tree cannot be told (the site has two or more
        trees besides the default one); None when there are none."""
        untold = sorted(path for path in paths if _localized_stack(path) and self.tree_of(path) is None)
        if not untold:
            return None
        others = [tree.locale for tree in self.trees if not tree.default]
        shown = ", ".join(f"stack:{path[len(STACKS_PREFIX) :]}" for path in untold[:4])
        more = f" and {len(untold) - 4} more" if len(untold) > 4 else ""
        return (
            f"{len(untold)} localized stack version(s) ({shown}{more}) are managed by their files with no locale tree "
            f"named: the site has {len(others)} trees besides the default one ({', '.join(others)}), and the REST "
            "API does not say which tree a localized stack is for (each reports the default locale and the neutral "
            "stack's name; its path follows the order the versions were made in). Dashboard › Stacks & Blocks › "
            "Stacks shows which version is which locale's."
        )

    def by_locale(self, locale: str) -> Tree | None:
        return next((tree for tree in self.trees if tree.locale == locale), None)

    def address(self, path: str) -> Address:
        tree = self.tree_of(path)
        return Address(self.site, tree.locale if tree is not None else "")

    def is_home(self, path: str) -> bool:
        """A tree's home page: never created, moved or deleted by cmssync (the API cannot add a locale)."""
        return any(tree.home_path == path for tree in self.trees)

    def translations(self, path: str) -> dict[str, str]:
        """Locale → the path at the same place in each other tree (what a translation of ``path`` would be at; the
        API does not say which pages translate which, so this is the only relation cmssync shows)."""
        tree = self.tree_of(path)
        if tree is None or is_stack_path(path):
            return {}
        relative = tree.relative(path)
        return {other.locale: other.absolute(relative) for other in self.trees if other is not tree}


def _localized_stack(path: str) -> bool:
    """``/!stacks/<handle>/<version>``: a stack's version for a locale (a child page of the neutral stack)."""
    return is_stack_path(path) and "/" in path[len(STACKS_PREFIX) :]
