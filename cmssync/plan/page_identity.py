"""Which site page a content page is: the one at its path, a pinned id elsewhere, a managed page that moved in the
content, or a conflict (pure; :mod:`cmssync.plan.pages` plans the rest).

The API cannot change a page's parent. So a page whose content file moved (recognised through the state: the page
that disappeared from the content with this page's last applied digest), or whose pinned id lives elsewhere, is
shown as a move with the limit explained, and turned into "create the new page, then delete the old one" only with
``--replace-moved`` — never for a protected page. A page is adopted only when it is provably the content's.
"""

from __future__ import annotations

from cmssync.content.paths import page_named
from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldChange, Precondition
from cmssync.plan.snapshot import LivePage, Snapshot
from cmssync.state.records import State


def identity_conflict(path: str, live: LivePage | None, state: State, observed: Snapshot) -> str | None:
    """The state's page for this path (by id) must be the one at this path. A different page there, or the state's
    page moved elsewhere on the site, is a conflict: nothing is planned (neither taking the other page over nor
    creating a second copy). A pinned id decides, so this is not asked for pinned pages."""
    record = state.pages.get(path)
    if record is None:
        return None
    if live is not None and live.id != record.id:
        return (
            f"conflict: {page_named(path)}: the state says cmssync manages page id {record.id} at this path, but the "
            f"site's {path} is page {live.id} (made or moved there outside cmssync); it is not taken over: pin id: "
            f"{live.id} in the page file to manage it, or move it out of the way"
        )
    ours = observed.pages_by_id.get(record.id)
    if live is None and ours is not None and ours.path != path:
        return (
            f"conflict: {page_named(path)}: cmssync's page (id {record.id}) is now at {ours.path} (moved outside "
            f"cmssync); no second page is created: move it back in the dashboard, or pin id: {record.id} in the page "
            "file"
        )
    return None


def moved_from(path: str, digest: str, content: SiteContent, state: State, observed: Snapshot) -> LivePage | None:
    """A managed page that disappeared from the content and whose last applied state is this page's (``digest``)."""
    for old_path, record in state.pages.items():
        if old_path in content.pages or record.digest != digest:
            continue
        live = observed.pages.get(old_path)
        if live is not None and live.id == record.id:
            return live
    return None


def pinned_move(path: str, live: LivePage) -> Action:
    """A pinned page found at another path."""
    return _move(
        path,
        live,
        f"page {live.path} (id {live.id}) is at {path} in the content; the API cannot change a page's parent, "
        "so move it in the dashboard, or remove the pinned id and run apply --replace-moved",
    )


def move_actions(
    path: str, live: LivePage, *, replace_moved: bool, protected: bool, create: Action | None
) -> list[Action]:
    """A page whose file moved: a move that explains the limit, or (``--replace-moved``, not protected) ``create``
    of the new page then the delete of the old one."""
    if replace_moved and protected:
        note = (
            f"the content moved {live.path} to {path}, but {live.path} is protected: it is neither replaced nor "
            "deleted (--replace-moved does not apply); move it in the dashboard"
        )
        return [_move(path, live, note)]
    if not replace_moved:
        note = (
            f"the content moved {live.path} to {path}; the API cannot change a page's parent. Run apply "
            f"--replace-moved to create {path} and delete {live.path} (its history and URL are lost), or move the "
            "page in the dashboard"
        )
        return [_move(path, live, note)]
    delete = Action(
        kind="page",
        key=live.path,
        op="delete",
        depends_on=(f"page:{path}",),
        precondition=Precondition(remote_id=str(live.id), live_version_id=live.live_version_id),
        note=f"replaced by {path} (--replace-moved)",
    )
    return [a for a in (create, delete) if a is not None]


def _move(path: str, live: LivePage, note: str) -> Action:
    return Action(
        kind="page",
        key=path,
        op="move",
        changes=(FieldChange(field="path", before=live.path, after=path),),
        precondition=Precondition(remote_id=str(live.id), live_version_id=live.live_version_id),
        note=note,
    )
