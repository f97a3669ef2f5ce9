"""What a page file's ``locale:`` says, checked against the site's locale trees (``cmssync.content.trees``).

``locale:`` is written by ``pull`` on the home of each locale tree other than the default one. cmssync cannot add a
locale or move a tree (the REST API has no way to), so a ``locale:`` the site has no tree for, or one on a page
that is not that tree's home, is a located error before anything is planned — never a page quietly created in the
default tree instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from cmssync.content.models import PageSpec
from cmssync.content.trees import Trees
from cmssync.errors import Problem


def locale_problems(pages: Mapping[str, PageSpec], trees: Trees) -> list[Problem]:
    """One located problem per page file whose ``locale:`` the site's trees contradict."""
    problems = []
    for path, spec in pages.items():
        if spec.locale is None:
            continue
        tree = trees.by_locale(spec.locale)
        if tree is None:
            known = ", ".join(f"{t.locale} at {t.home_path}" for t in trees.trees) or "none"
            message = (
                f"locale {spec.locale}: the site has no such locale tree (it has: {known}); cmssync cannot add a "
                "locale (the REST API has no way to): add it in Dashboard › System › Multilingual › Setup, then "
                "`cmssync pull`"
            )
        elif tree.home_path != path:
            message = (
                f"locale {spec.locale}: that tree's home is {tree.home_path} on the site, not {path}; `locale:` is "
                "said only in the file of a tree's home (a page is in the tree whose folder holds its file)"
            )
        else:
            continue
        where = spec.source
        problems.append(where.problem(message) if where is not None else Problem(path, 0, 0, message))
    return problems
