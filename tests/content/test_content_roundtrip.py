"""Property: whatever the models accept survives writer → loader unchanged, also when written over older files."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmssync.content.lists import list_kind
from cmssync.content.lists.group import GroupSpec
from cmssync.content.loader import load_content
from cmssync.content.models import FileSidecar, PageSpec, UserSpec
from cmssync.content.paths import EXCLUDED_WORDS
from cmssync.content.writer import write_list, write_page, write_sidecar, write_yaml

FOLDERS = {"images": 12, "documents": 13}
# Each example writes and parses a whole site (ruamel's round-trip parser is pure Python), so keep the counts modest.
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OVERWRITE = settings(PROPERTY, max_examples=25)

_CHARS = st.characters(
    exclude_categories=("Cc", "Cs", "Co", "Cn", "Zl", "Zp"),
    exclude_characters="$\ufeff",
)
literal = st.text(st.one_of(_CHARS, st.just("\n"), st.just(" ")), max_size=20)
name = st.text(st.one_of(_CHARS, st.just(" ")), min_size=1, max_size=20).map(str.strip).filter(bool)
handle = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def text(files: list[str], pages: list[str]) -> st.SearchStrategy[str]:
    references: list[st.SearchStrategy[str]] = [st.just("$${"), st.just("${page-id:/}")]
    if files:
        references.append(st.sampled_from(files).map(lambda p: f"${{file:{p}}}"))
        references.append(st.sampled_from(files).map(lambda p: f"${{file-id:{p}}}"))
    if pages:
        references.append(st.sampled_from(pages).map(lambda p: f"${{page-id:{p}}}"))
    piece = st.one_of(literal, *references)
    return st.lists(piece, max_size=3).map("".join)


def attribute_value(strings: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.one_of(st.booleans(), st.integers(-(2**40), 2**40), finite, strings, st.lists(strings, max_size=3))


def block(strings: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    scalar = st.one_of(st.booleans(), st.integers(-1000, 10**12), finite, strings)
    return st.one_of(
        st.builds(lambda c: {"type": "content", "value": {"content": c}}, strings),
        st.builds(lambda c: {"type": "html", "value": {"content": c}}, strings),
        st.fixed_dictionaries(
            {"type": st.just("page_title")},
            optional={
                "value": st.fixed_dictionaries(
                    {},
                    optional={
                        "useCustomTitle": st.booleans(),
                        "titleText": strings,
                        "formatting": st.sampled_from(["h1", "h2", "div"]),
                    },
                )
            },
        ),
        st.just({"type": "horizontal_rule"}),
        st.builds(
            lambda t, v: {"type": t, "raw": True, "value": v},
            handle.filter(lambda h: h not in {"content", "html", "page_title", "horizontal_rule"}),
            st.dictionaries(st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True), scalar, max_size=4),
        ),
    )


def page(strings: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"name": name},
        optional={
            "description": strings,
            "type": handle,
            "template": handle,
            "id": st.integers(1, 10**6),
            "attributes": st.dictionaries(handle, attribute_value(strings), max_size=3),
            "areas": st.dictionaries(name, st.lists(block(strings), max_size=3), max_size=2),
            "publish_end_date": st.one_of(st.dates(), st.datetimes()),
        },
    )


@st.composite
def sites(draw: st.DrawFn) -> dict[str, Any]:
    segment = st.from_regex(r"[a-z0-9]{1,4}(-[a-z0-9]{1,3})?", fullmatch=True).filter(
        lambda s: s != "index" and not set(s.split("-")) & EXCLUDED_WORDS
    )
    leaves = draw(st.lists(st.lists(segment, min_size=1, max_size=2), max_size=3))
    paths = {"/"} if draw(st.booleans()) else set()
    for parts in leaves:
        for depth in range(1, len(parts) + 1):
            paths.add("/" + "/".join(parts[:depth]))
    files = draw(
        st.lists(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6})?\.(png|txt)", fullmatch=True), max_size=3, unique=True)
    )
    strings = text(files, sorted(paths))
    pages = {path: draw(page(strings)) for path in sorted(paths)}
    ids = [p["id"] for p in pages.values() if "id" in p]
    if len(ids) != len(set(ids)):
        for data in pages.values():
            data.pop("id", None)
    sidecar = st.fixed_dictionaries(
        {},
        optional={
            "title": strings,
            "description": strings,
            "tags": st.lists(name, max_size=3),
            "folder": st.one_of(st.integers(0, 99), st.sampled_from(sorted(FOLDERS))),
            "attributes": st.fixed_dictionaries(
                {},
                optional={
                    "width": st.integers(0, 5000),
                    "height": st.integers(0, 5000),
                    "duration": st.floats(0, 1e6),
                },
            ),
        },
    )
    file_data = {path: (draw(st.binary(max_size=64)), draw(sidecar)) for path in files}
    usernames = draw(
        st.lists(
            st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._]{1,10})[A-Za-z0-9]", fullmatch=True),
            max_size=3,
            unique_by=str.casefold,
        )
    )
    users = [
        draw(
            st.fixed_dictionaries(
                {"username": st.just(u), "email": st.just(f"user{i}@example.com")},
                optional={
                    "language": st.sampled_from(["en_US", "de", "fr_FR"]),
                    "password": st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True).map(lambda n: f"${{env:{n}}}"),
                    "attributes": st.dictionaries(handle, attribute_value(strings), max_size=2),
                },
            )
        )
        for i, u in enumerate(usernames)
    ]
    groups = [{"name": n} for n in draw(st.lists(name, max_size=3, unique_by=str.casefold))]
    return {"pages": pages, "files": file_data, "users": users, "groups": groups}


def write_site(root: Path, site: dict[str, Any]) -> None:
    write_yaml(root / "cmssync.yaml", {"folders": FOLDERS})
    for path, data in site["pages"].items():
        write_page(root, path, PageSpec.model_validate(data))
    for path, (content, meta) in site["files"].items():
        target = root / "files" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        write_sidecar(root, path, FileSidecar.model_validate(meta))
    for kind, spec in (("user", UserSpec), ("group", GroupSpec)):
        listed = list_kind(kind)
        assert listed is not None
        write_list(root, listed, [spec.model_validate(entry) for entry in site[listed.plural]])


def assert_loads_as(root: Path, site: dict[str, Any]) -> None:
    content = load_content(root)
    assert content.pages == {path: PageSpec.model_validate(data) for path, data in site["pages"].items()}
    assert {path: f.meta for path, f in content.files.items()} == {
        path: FileSidecar.model_validate(meta) for path, (_, meta) in site["files"].items()
    }
    for path, (data, _) in site["files"].items():
        assert content.files[path].sha256 == hashlib.sha256(data).hexdigest()
    assert list(content.users.values()) == [UserSpec.model_validate(u) for u in site["users"]]
    assert list(content.of("group").values()) == [GroupSpec.model_validate(g) for g in site["groups"]]


@PROPERTY
@given(sites())
def test_dump_then_load_gives_the_same_content(site: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_site(root, site)
        assert_loads_as(root, site)


@OVERWRITE
@given(sites(), sites())
def test_writing_over_existing_files_gives_the_new_content(first: dict[str, Any], second: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_site(root, first)
        for path in first["pages"]:
            if path not in second["pages"]:
                (root / "pages" / ("index.yaml" if path == "/" else f"{path[1:]}.yaml")).unlink()
        for path in first["files"]:
            (root / "files" / path).unlink()
            (root / "files" / f"{path}.yaml").unlink(missing_ok=True)
        write_site(root, second)
        assert_loads_as(root, second)
