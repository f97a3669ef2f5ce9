"""Adoption by content and plan preconditions, as pure rules (issue 15, items 1 and 2).

* A content file the state does not know adopts a site file only if the bytes the site serves hash to the content's
  SHA-256 (observe hashes the candidates; ``LiveFile.sha256``), and each adopted id is claimed at once.
* A site user is adopted when it is the state's (same id) or its email matches; otherwise a ``conflict:`` warning
  and no action. A page is the state's page at its path, or a conflict.
* Every create carries ``absent``; ``check_fresh`` refuses a plan file whose preconditions no longer hold.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmssync.content.site import SiteContent
from cmssync.errors import PlanError
from cmssync.plan.actions import Plan
from cmssync.plan.planner import PlanOptions, plan
from cmssync.plan.snapshot import LiveFile, LiveGroup, LiveUser, Snapshot
from cmssync.state.records import FileRecord, PageRecord, State, UserRecord
from cmssync.sync.plan_files import check_fresh
from tests.sync.sitebuilder import BASE, page, snapshot, write_content

OURS = b"ours: price list\n"
THEIRS = b"editor: own note\n"
NEWS = "name: News\n"


def options(**kwargs: object) -> PlanOptions:
    return PlanOptions(base_url=BASE, **kwargs)  # type: ignore[arg-type]


def sha(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


def site_file(file_id: str, body: bytes | None, *, name: str = "x.txt", size: int | None = None) -> LiveFile:
    """A live file as observe gives it: ``body`` None means its bytes were not downloaded."""
    length = size if size is not None else len(body or OURS)
    url = f"{BASE}/application/files/{file_id}/{name}"
    return LiveFile(file_id, name, url, name, "", (), None, length, sha256=sha(body) if body is not None else None)


# --- files --------------------------------------------------------------------------------------------------------


def test_a_same_name_and_size_file_with_other_bytes_is_not_adopted(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/x.txt": OURS})
    result = plan(content, snapshot(files=(site_file("theirs", THEIRS),)), State(), options())
    [action] = result.actions
    assert (action.op, action.precondition.absent, action.precondition.remote_id) == ("create", True, None)
    assert "theirs" in (action.note or "")


def test_a_file_whose_bytes_were_not_read_is_not_adopted(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/x.txt": OURS})
    [action] = plan(content, snapshot(files=(site_file("unknown", None),)), State(), options()).actions
    assert action.op == "create"


def test_a_byte_identical_file_is_adopted(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/x.txt": OURS})
    observed = snapshot(files=(site_file("theirs", THEIRS), site_file("ours", OURS)))
    [action] = plan(content, observed, State(), options()).actions
    assert (action.op, action.precondition.remote_id) == ("update", "ours")
    assert "same bytes" in (action.note or "")


def test_two_paths_never_adopt_one_site_file(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/a/x.txt": OURS, "files/b/x.txt": OURS})
    one = plan(content, snapshot(files=(site_file("copy-1", OURS),)), State(), options())
    assert sorted((a.key, a.op, a.precondition.remote_id) for a in one.actions) == [
        ("a/x.txt", "update", "copy-1"),
        ("b/x.txt", "create", None),
    ]
    two = plan(content, snapshot(files=(site_file("copy-2", OURS), site_file("copy-1", OURS))), State(), options())
    assert sorted((a.key, a.precondition.remote_id) for a in two.actions) == [
        ("a/x.txt", "copy-1"),
        ("b/x.txt", "copy-2"),
    ]


def test_a_file_the_state_manages_is_never_adopted_by_another_path(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/a/x.txt": OURS, "files/b/x.txt": OURS})
    state = State()
    state.record_file("a/x.txt", FileRecord(id="copy-1", hash=sha(OURS), url=f"{BASE}/f/copy-1/x.txt"))
    result = plan(content, snapshot(files=(site_file("copy-1", OURS),)), state, options())
    assert [(a.key, a.op) for a in result.actions] == [("b/x.txt", "create")]


def test_several_byte_identical_copies_adopt_the_smallest_id_and_say_so(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/x.txt": OURS})
    observed = snapshot(files=(site_file("copy-b", OURS), site_file("copy-a", OURS)))
    result = plan(content, observed, State(), options())
    assert [a.precondition.remote_id for a in result.actions] == ["copy-a"]
    assert any("2 site files hold its bytes; copy-a is adopted, the others (copy-b)" in w for w in result.warnings)


@settings(max_examples=60, deadline=None)
@given(
    paths=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True),
    copies=st.lists(st.booleans(), max_size=5),
)
def test_adoptions_are_byte_identical_and_distinct(
    tmp_path_factory: pytest.TempPathFactory, paths: list[str], copies: list[bool]
) -> None:
    """Whatever mix of same-name site files (ours or an editor's), every adoption serves the content's bytes and no
    site file is adopted twice."""
    root = tmp_path_factory.mktemp("content")
    content = write_content(root, {f"files/{p}/x.txt": OURS for p in paths})
    files = tuple(site_file(f"id-{n}", OURS if ours else THEIRS) for n, ours in enumerate(copies))
    by_id = {f.id: f for f in files}
    result = plan(content, snapshot(files=files), State(), options())
    adopted = [a.precondition.remote_id for a in result.actions if a.op == "update"]
    assert len(adopted) == len(set(adopted))
    assert all(by_id[i].sha256 == sha(OURS) for i in adopted if i is not None)
    assert len(adopted) == min(len(paths), sum(copies))


# --- users, groups, pages -------------------------------------------------------------------------------------------


USERS = "- username: jane\n  email: jane@example.com\n"


@pytest.mark.parametrize(
    ("record", "live_email", "planned"),
    [
        (None, "JANE@example.com", "adopted"),
        (None, "jane@elsewhere.example", "conflict"),
        (7, "jane@old.example", "update"),  # the user cmssync manages: its email is updated
        (99, "jane@old.example", "conflict"),  # the state's jane is another user: this one is not ours
        (99, "jane@example.com", "adopted"),
    ],
)
def test_a_user_is_adopted_only_when_username_and_email_match(
    tmp_path: Path, record: int | None, live_email: str, planned: str
) -> None:
    content = write_content(tmp_path, {"users.yaml": USERS})
    state = State()
    if record is not None:
        state.record_user("jane", UserRecord(id=record))
    result = plan(content, snapshot(users=(LiveUser(7, "jane", live_email, None),)), state, options())
    conflicts = [w for w in result.warnings if w.startswith("conflict: user jane:")]
    if planned == "conflict":
        assert result.actions == ()
        [warning] = conflicts
        assert f"(id 7) with email {live_email}, not jane@example.com" in warning
    elif planned == "update":
        [action] = result.actions
        assert (action.op, action.precondition.remote_id) == ("update", "7")
    else:
        assert (result.actions, conflicts) == ((), [])


def test_a_page_at_a_managed_path_that_is_not_the_states_is_a_conflict(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/news.yaml": NEWS})
    state = State()
    state.record_page("/news", PageRecord(id=5))
    result = plan(content, snapshot(page(8, "/news", "Someone's news")), state, options())
    assert result.actions == ()
    assert any(w.startswith("conflict: page /news: the state says cmssync manages page id 5") for w in result.warnings)
    pinned = write_content(tmp_path / "pinned", {"pages/news.yaml": "id: 8\n" + NEWS})
    [action] = plan(pinned, snapshot(page(8, "/news", "Someone's news")), state, options()).actions
    assert (action.op, action.precondition.remote_id) == ("update", "8")


def test_the_states_page_moved_elsewhere_is_a_conflict_not_a_second_copy(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/news.yaml": NEWS})
    state = State()
    state.record_page("/news", PageRecord(id=5))
    result = plan(content, snapshot(page(5, "/archive", "News")), state, options())
    assert result.actions == ()
    assert any("cmssync's page (id 5) is now at /archive" in w for w in result.warnings)


def test_every_create_says_absent(tmp_path: Path) -> None:
    content = write_content(
        tmp_path,
        {
            "pages/news.yaml": NEWS,
            "files/x.txt": OURS,
            "groups.yaml": "- name: Newsroom\n",
            "users.yaml": "- username: reporter\n  email: r@example.com\n",
        },
    )
    result = plan(content, snapshot(), State(), options())
    assert sorted((a.kind, a.op, a.precondition.absent) for a in result.actions) == [
        ("file", "create", True),
        ("group", "create", True),
        ("page", "create", True),
        ("user", "create", True),
    ]


# --- check_fresh ----------------------------------------------------------------------------------------------------


def _new_objects(tmp_path: Path) -> tuple[SiteContent, Plan]:
    content = write_content(
        tmp_path,
        {
            "pages/news.yaml": NEWS,
            "files/x.txt": OURS,
            "groups.yaml": "- name: Newsroom\n",
            "users.yaml": "- username: reporter\n  email: r@example.com\n",
        },
    )
    return content, plan(content, snapshot(), State(), options())


def test_a_fresh_plan_passes(tmp_path: Path) -> None:
    content, made = _new_objects(tmp_path)
    check_fresh(made, content, snapshot(files=(site_file("theirs", THEIRS),)), State())


@pytest.mark.parametrize(
    ("now", "message"),
    [
        (snapshot(page(9, "/news", "News")), "page /news exists on the site now (page id 9)"),
        (
            replace(snapshot(), groups={"Newsroom": LiveGroup(12, "Newsroom")}),
            "group Newsroom exists on the site now (group id 12)",
        ),
        (snapshot(users=(LiveUser(30, "reporter", "r@example.com", None),)), "user reporter exists on the site now"),
        (snapshot(files=(site_file("copy", OURS),)), "file x.txt exists on the site now (site file copy with the same"),
    ],
    ids=["page", "group", "user", "file"],
)
def test_a_create_whose_object_appeared_is_stale(tmp_path: Path, now: Snapshot, message: str) -> None:
    content, made = _new_objects(tmp_path)
    with pytest.raises(PlanError) as refused:
        check_fresh(made, content, now, State())
    assert f"the plan file is stale: {message}" in str(refused.value)


def test_a_file_create_is_stale_once_the_state_records_it(tmp_path: Path) -> None:
    content, made = _new_objects(tmp_path)
    state = State()
    state.record_file("x.txt", FileRecord(id="up-1", hash=sha(OURS), url=f"{BASE}/f/up-1/x.txt"))
    now = snapshot(files=(site_file("up-1", OURS),))
    with pytest.raises(PlanError, match=r"file x\.txt exists on the site now \(site file up-1, recorded in the state"):
        check_fresh(made, content, now, state)


def test_an_action_on_an_object_that_is_gone_is_stale(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/x.txt": OURS, "users.yaml": USERS})
    state = State()
    state.record_user("jane", UserRecord(id=7))
    observed = snapshot(files=(site_file("ours", OURS),), users=(LiveUser(7, "jane", "jane@old.example", None),))
    made = plan(content, observed, state, options())
    assert sorted((a.kind, a.op) for a in made.actions) == [("file", "update"), ("user", "update")]
    check_fresh(made, content, observed, state)
    with pytest.raises(PlanError, match=r"file x\.txt \(site file ours\) no longer exists"):
        check_fresh(made, content, replace(observed, files={}), state)
    with pytest.raises(PlanError, match=r"user jane \(user id 7\) no longer exists"):
        check_fresh(made, content, replace(observed, users={}), state)


def test_an_adoption_is_stale_when_the_site_file_no_longer_holds_the_bytes(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"files/x.txt": OURS})
    observed = snapshot(files=(site_file("copy", OURS),))
    made = plan(content, observed, State(), options())
    [action] = made.actions
    assert (action.op, action.precondition.remote_id) == ("update", "copy")
    check_fresh(made, content, observed, State())
    changed = snapshot(files=(site_file("copy", THEIRS),))
    with pytest.raises(PlanError, match=r"file x\.txt was to adopt site file copy, which no longer holds its bytes"):
        check_fresh(made, content, changed, State())
    claimed = State()
    claimed.record_file("y.txt", FileRecord(id="copy", hash=sha(OURS), url=f"{BASE}/f/copy/x.txt"))
    unhashed = snapshot(files=(site_file("copy", None),))  # now managed as y.txt: observe no longer hashes it
    with pytest.raises(PlanError, match="is now managed as another file"):
        check_fresh(made, content, unhashed, claimed)
