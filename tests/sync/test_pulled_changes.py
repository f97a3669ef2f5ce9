"""The fields a pull changed, with their values before and after (``cmssync.sync.pulled_changes``)."""

from __future__ import annotations

from cmssync.sync.pulled_changes import FieldValues, PulledChange, commit_message, field_changes, named_once


def test_leaves_are_named_by_their_place_in_the_file() -> None:
    before = {"name": "About", "attributes": {"meta_title": "A"}, "areas": {"Main": [{"value": {"content": "x"}}]}}
    after = {"name": "About us", "attributes": {"meta_title": "A"}, "areas": {"Main": [{"value": {"content": "y"}}]}}
    assert field_changes(before, after) == (
        FieldValues("name", "About", "About us"),
        FieldValues("areas.Main[0].value.content", "x", "y"),
    )


def test_a_list_that_changed_length_is_one_change_and_named_lists_match_by_name() -> None:
    before = {"areas": {"Main": [{"type": "content"}]}}
    after = {"areas": {"Main": [{"type": "content"}, {"type": "html"}]}}
    assert field_changes(before, after) == (FieldValues("areas.Main", before["areas"]["Main"], after["areas"]["Main"]),)
    users_before = [{"username": "jane", "email": "a@x"}, {"username": "sam", "email": "s@x"}]
    users_after = [{"username": "sam", "email": "s@x"}, {"username": "jane", "email": "b@x"}, {"username": "mia"}]
    assert field_changes(users_before, users_after, named_by="username") == (
        FieldValues("jane.email", "a@x", "b@x"),
        FieldValues("mia", None, {"username": "mia"}),
    )
    assert field_changes(None, {"name": "New"}) == (FieldValues("(file)", None, {"name": "New"}),)


def test_the_commit_message_names_objects_versions_and_short_values() -> None:
    change = PulledChange(
        "page",
        "/about",
        "site/pages/about.yaml",
        (FieldValues("name", "About", "About us"),),
        version=7,
        approved="2026-11-29T05:00:00+00:00",
    )
    long = PulledChange("file", "logo.png", "site/files/logo.png", (FieldValues("note", "x" * 100, "y"),))
    message = commit_message([change, long], site="https://example.com")
    assert message.splitlines()[0] == "Site changes: page /about, file logo.png"
    assert "page /about (site version 7, approved 2026-11-29T05:00:00+00:00) - site/pages/about.yaml" in message
    assert '  name: "About" -> "About us"' in message
    assert '"' + "x" * 58 + "…" in message
    assert (
        commit_message([change], site="s", subject="Fix the about page\nmore").splitlines()[0] == "Fix the about page"
    )


def test_the_subject_names_a_file_and_its_sidecar_once() -> None:
    """A pull that wrote a file's bytes and its sidecar names the file once in the subject (it said ``file logo.png,
    file logo.png (sidecar)``); the body still lists each file written."""
    data = PulledChange("file", "images/logo.png", "site/files/images/logo.png", (FieldValues("bytes", 10, 12),))
    meta = PulledChange(
        "sidecar", "images/logo.png", "site/files/images/logo.png.yaml", (FieldValues("title", "A", "B"),)
    )
    page = PulledChange("page", "/about", "site/pages/about.yaml", (FieldValues("name", "About", "About us"),))
    message = commit_message([data, meta, page], site="https://example.com")
    assert message.splitlines()[0] == "Site changes: file images/logo.png, page /about"
    assert "file images/logo.png - site/files/images/logo.png" in message
    assert "file images/logo.png (sidecar) - site/files/images/logo.png.yaml" in message
    assert named_once([meta, data]) == ["file images/logo.png"]
