"""Seeds: the sites an emulator starts with.

``default``
    A small realistic site: Home (id 1) with ``/about``, ``/about/team``, ``/services``, ``/blog``,
    ``/blog/hello-world`` and ``/contact``, each with ``Main`` and ``Sidebar`` areas holding ``content`` and ``html``
    blocks (a few links point into the site, so they come back as ``{CCM:BASE_URL}``); users ``admin`` (id 1, the
    super admin) plus the editors ``jane``, ``john`` (group Editors) and ``mia``; groups Guest (1), Registered Users
    (2), Administrators (3), Editors (4); file-manager folders root (7), ``images`` (10) and ``documents`` (11) with
    four files.
``empty``
    Only the home page and the admin.
``PATH``
    A JSON or YAML file (``.yaml``/``.yml``) of this shape, every key optional::

        site: {name: My Site}
        folders: [{id: 7, name: File Manager}, {id: 10, name: images, parent: 7}]   # the first is the root
        groups: [{id: 4, name: Editors}]                       # Guest, Registered Users, Administrators always exist
        users: [{username: jane, email: jane@example.com, password: secret-pw, language: en_US, groups: [4]}]
        pages:                                                 # parents before children; "/" is the home page
          - {path: /about, name: About, id: 2, type: page, template: full, description: "",
             attributes: {meta_title: About}, areas: {Main: [{type: content, value: {content: "<p>Hi</p>"}}]}}
        files: [{filename: notes.txt, folder: 7, text: "hello", uuid: "…", title: "…", description: "", id: 3}]
        uploads: [{filename: photo.png, uuid: "…", prefix: "2117/9544/9601"}]   # pinned ids of later uploads
        next_ids: {blocks: 154}                                # where the sequences of created objects start
        clients: [{client_id: other, secret: other-secret, scopes: [pages:read]}]

    A file's content is ``text`` (UTF-8) or ``base64``; images may instead give ``png: [width, height]``. A file may
    pin its ``uuid``, its storage ``prefix`` (``NNNN/NNNN/NNNN``, so its URL is known in advance) and its numeric ``id``
    (what ``{CCM:FID_DL_<id>}`` and integer file columns hold); ``uploads`` pin the UUID and prefix the first upload
    of that file name gets (a replay of a recording needs the recorded ones). A page may set an ``image_file``
    attribute with ``{thumbnail: {file: <uuid>}}`` (the API itself cannot set those). Blocks are given in stored form
    (numeric file ids, ``{CCM:CID_<id>}`` links) and may pin their ``id``; the same id on several pages is one block
    placed on each (a page type's default block). Areas may be sub-areas of layouts and containers
    (``Main : 5 : Column 1``); a layout or container block names the sub-area numbers it renders with
    ``instances: [5]`` (a layout one per column), and a sub-area shows on the page only inside its container.
    Multi-record blocks take their entries as parallel arrays (``title: [A, B]``).

    System pages as a real site has them: ``type: false`` / ``template: false`` (dashboard and single pages), paths
    under ``/!`` (``/!stacks``, ``/!trash``), and page-type defaults (``path: null`` with an ``id``); none is listed by
    ``GET /pages`` or a children list, each is read by id. Stacks are pages ``/!stacks/<handle>`` of type
    ``core_stack`` (template false) whose ``Main`` area holds their blocks; ``global_areas: [Footer, …]`` names the
    stacks the theme shows on every public page. ``page_types: {handle: id}`` replaces the install's page types
    (:mod:`cmssync.emulator.pagetypes`), as a site of another theme has other ones. ``block_views: core`` renders
    blocks as Concrete's own views print them, for a theme that overrides none (``elemental``: a content block's
    HTML alone, no ``ccm-block-content`` wrapper as ``atomik``'s view has).

    ``locales: [{locale: de_DE, slug: de, prefix: true, stacks: true}]`` adds locale trees after everything else
    (``cmssync.emulator.locales.add_locale``: a home at ``/de``, a copy of the default tree placing the same block
    ids, ``[de_DE] `` names with ``prefix``, and a ``de_DE`` version of every stack with ``stacks``).

    ``sites: [{handle: second, name: Second Site, host: second.localhost, locale: en_US, pages: [...]}]`` adds
    further sites of the installation after that (``cmssync.emulator.sites.add_site``: a home page whose path is
    ``""``; requests whose host is ``host`` are about that site). Their ``pages`` are given like the default site's,
    with paths below their own home (``/`` is the site's home, ``/about`` its page: paths repeat across sites).

Every seed also gets the OAuth client of the settings (all scopes), a limited client ``<client_id>-limited``
(secret ``<client_secret>-limited``, scopes ``pages:read system:info:read``) and the admin with the configured
password. All seeded objects share one timestamp, like a freshly installed site — so list sort keys tie, which is
what makes the real pagination repeat and skip items.

``--generate pages=N,blocks=N,files=N,users=N`` adds N pages (in sections of up to 100 children under home, each
with ``blocks`` content blocks in ``Main``), N small text files and N users, in one transaction with ``executemany``.
"""

from __future__ import annotations

import base64
import json
import random
import secrets
import uuid as uuidlib
from pathlib import Path
from typing import Any

from cmssync.emulator import (
    blockvalues,
    filestore,
    generator,
    imagesize,
    layouts,
    locales,
    pagetypes,
    sites,
    sitetree,
    userstore,
    versioning,
)
from cmssync.emulator.blocktypes import BLOCK_TYPES
from cmssync.emulator.blockvalues import stored as stored_block
from cmssync.emulator.catalog import PAGE_TEMPLATES
from cmssync.emulator.settings import Settings
from cmssync.emulator.store import Store, dumps

_BUILTIN_GROUPS = ((1, "Guest"), (2, "Registered Users"), (3, "Administrators"))

DEFAULT_SEED: dict[str, Any] = {
    "site": {"name": "Sandbox Site"},
    "folders": [
        {"id": 7, "name": "File Manager"},
        {"id": 10, "name": "images", "parent": 7},
        {"id": 11, "name": "documents", "parent": 7},
    ],
    "groups": [{"id": 4, "name": "Editors"}],
    "users": [
        {
            "username": "jane",
            "email": "jane@example.com",
            "password": "jane-password",
            "language": "en_US",
            "groups": [4],
        },
        {"username": "john", "email": "john@example.com", "password": "john-password", "groups": [4]},
        {"username": "mia", "email": "mia@example.com", "password": "mia-password", "language": "de_DE"},
    ],
    "pages": [
        {
            "path": "/",
            "name": "Home",
            "areas": {
                "Main": [
                    {
                        "type": "content",
                        "value": {
                            "content": '<h1>Welcome</h1>\n<p><img src="{CCM:BASE_URL}/application/files/'
                            '1001/2002/3003/logo.png" alt="logo"> We build things. '
                            '<a href="{CCM:BASE_URL}/about">About us</a></p>'
                        },
                    },
                    {"type": "html", "value": {"content": '<div class="hero">Hello</div>'}},
                ],
                "Sidebar": [{"type": "content", "value": {"content": "<p>News and updates.</p>"}}],
            },
        },
        {
            "path": "/about",
            "name": "About",
            "description": "Who we are",
            "attributes": {"meta_title": "About us"},
            "areas": {
                "Main": [{"type": "content", "value": {"content": "<h2>About us</h2>\n<p>A small team.</p>"}}],
                "Sidebar": [{"type": "html", "value": {"content": "<hr>"}}],
            },
        },
        {
            "path": "/about/team",
            "name": "Team",
            "template": "left_sidebar",
            "areas": {"Main": [{"type": "content", "value": {"content": "<p>Jane, John and Mia.</p>"}}]},
        },
        {
            "path": "/services",
            "name": "Services",
            "areas": {
                "Main": [
                    {"type": "content", "value": {"content": "<h2>Services</h2>\n<ul><li>Design</li></ul>"}},
                    {"type": "html", "value": {"content": "<script>window.x = 1;</script>"}},
                ]
            },
        },
        {
            "path": "/blog",
            "name": "Blog",
            "type": "blog",
            "areas": {"Main": [{"type": "content", "value": {"content": "<p>Latest posts.</p>"}}]},
        },
        {
            "path": "/blog/hello-world",
            "name": "Hello World",
            "type": "blog_entry",
            "attributes": {"exclude_nav": True},
            "areas": {"Main": [{"type": "content", "value": {"content": "<p>First post.</p>"}}]},
        },
        {
            "path": "/contact",
            "name": "Contact",
            "template": "right_sidebar",
            "areas": {
                "Main": [{"type": "html", "value": {"content": '<form><input name="email"></form>'}}],
                "Sidebar": [{"type": "content", "value": {"content": "<p>Call us.</p>"}}],
            },
        },
    ],
    "files": [
        {"filename": "logo.png", "folder": 10, "png": [64, 32], "title": "Logo", "prefix": "1001/2002/3003"},
        {"filename": "hero.png", "folder": 10, "png": [8, 4]},
        {
            "filename": "brochure.pdf",
            "folder": 11,
            "text": "%PDF-1.4\n% sandbox brochure\n%%EOF\n",
            "description": "Our brochure",
            "tags": "sales, print",
        },
        {"filename": "notes.txt", "folder": 7, "text": "Plain text notes.\n"},
    ],
}

EMPTY_SEED: dict[str, Any] = {
    "site": {"name": "Sandbox Site"},
    "folders": [{"id": 7, "name": "File Manager"}],
    "pages": [{"path": "/", "name": "Home"}],
}


def load_seed(seed: str) -> dict[str, Any]:
    if seed == "default":
        return DEFAULT_SEED
    if seed == "empty":
        return EMPTY_SEED
    path = Path(seed)
    if not path.is_file():
        raise ValueError(f"seed {seed!r} is neither 'default', 'empty' nor a file")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        from ruamel.yaml import YAML

        loaded = YAML(typ="safe", pure=True).load(text)
    else:
        loaded = json.loads(text)
    if not isinstance(loaded, dict):
        raise ValueError(f"seed file {seed} must hold a mapping")
    return loaded


def populate(store: Store, settings: Settings, seed: str, generate: str | None, ts: int) -> None:
    """Fill an empty database (call inside a transaction)."""
    data = load_seed(seed)
    rng = random.Random(f"{seed}:{generate}")
    store.set_meta("signing_key", secrets.token_hex(32))
    store.set_meta("site_name", str(data.get("site", {}).get("name", "Sandbox Site")))
    _clients(store, settings, data.get("clients", []))
    _groups(store, data.get("groups", []))
    userstore.create(
        store,
        username=settings.admin_username,
        email="admin@example.com",
        password=settings.admin_password,
        ts=ts,
        user_id=1,
    )
    for user in data.get("users", []):
        user_id = userstore.create(
            store,
            username=user["username"],
            email=user["email"],
            password=user.get("password", "sandbox-password"),
            ts=ts,
            language=user.get("language"),
            user_id=user.get("id"),
        )
        for group_id in user.get("groups", []):
            store.db.execute("INSERT OR IGNORE INTO user_groups VALUES (?, ?)", (user_id, group_id))
    folders = data.get("folders") or [{"id": 7, "name": "File Manager"}]
    for folder in folders:
        store.db.execute(
            "INSERT INTO folders (id, name, parent_id) VALUES (?, ?, ?)",
            (folder["id"], folder["name"], folder.get("parent")),
        )
    if data.get("page_types"):
        pagetypes.set_page_types(store, dict(data["page_types"]))
    if data.get("block_views"):
        store.set_meta(blockvalues.BLOCK_VIEWS, str(data["block_views"]))
    pages = data.get("pages") or [{"path": "/", "name": "Home"}]
    for page in pages:
        _page(store, page, ts)
    if store.one("SELECT 1 FROM pages WHERE id = ?", sitetree.HOME_PAGE_ID) is None:
        raise ValueError("a seed must define the home page '/'")
    for entry in data.get("files", []):
        _file(store, entry, int(folders[0]["id"]), ts, rng)
    layouts.set_global_areas(store, data.get("global_areas") or [])
    for entry in data.get("locales") or []:
        locales.add_locale(
            store,
            str(entry["locale"]),
            slug=entry.get("slug"),
            ts=ts,
            prefix=bool(entry.get("prefix", True)),
            stacks=bool(entry.get("stacks", True)),
        )
    for entry in data.get("sites") or []:
        home = sites.add_site(
            store,
            str(entry["handle"]),
            str(entry.get("name", entry["handle"])),
            host=str(entry["host"]),
            ts=ts,
            locale=str(entry.get("locale", "en_US")),
        )
        site_id = sites.for_host(store, str(entry["host"]))
        for page in entry.get("pages") or []:
            _page(store, page, ts, home=home, site_id=site_id)
    if data.get("uploads"):
        store.set_meta(filestore.PINNED_UPLOADS, dumps(list(data["uploads"])))
    for table, next_id in (data.get("next_ids") or {}).items():
        if table not in ("pages", "blocks", "users", "groups", "files"):
            raise ValueError(f"next_ids: unknown table {table!r}")
        _next_id(store, table, int(next_id))
    if generate:
        generator.generate_site(store, generator.parse_generate(generate), ts, rng)


def apply_credentials(store: Store, settings: Settings) -> None:
    """Make the configured OAuth clients and admin password current in an existing database (on a restart with
    ``--db``, changed ``--client-secret`` / ``--admin-password`` options take effect; call inside a transaction)."""
    _clients(store, settings, [])
    store.db.execute(
        "UPDATE users SET username = ?, password = ? WHERE id = 1",
        (settings.admin_username, userstore.hash_password(settings.admin_password)),
    )


def _clients(store: Store, settings: Settings, extra: list[dict[str, Any]]) -> None:
    clients: list[dict[str, Any]] = [
        {"client_id": settings.client_id, "secret": settings.client_secret, "scopes": None, "name": "Sandbox"},
        {
            "client_id": f"{settings.client_id}-limited",
            "secret": f"{settings.client_secret}-limited",
            "scopes": ["pages:read", "system:info:read"],
            "name": "Sandbox (limited)",
        },
        *extra,
    ]
    for client in clients:
        existing = store.one("SELECT identifier FROM clients WHERE client_id = ?", client["client_id"])
        store.db.execute(
            "INSERT OR REPLACE INTO clients (client_id, secret, identifier, name, scopes) VALUES (?, ?, ?, ?, ?)",
            (
                client["client_id"],
                client["secret"],
                existing["identifier"] if existing else str(uuidlib.uuid4()),
                client.get("name", client["client_id"]),
                None if client.get("scopes") is None else dumps(list(client["scopes"])),
            ),
        )


def _groups(store: Store, extra: list[dict[str, Any]]) -> None:
    for group_id, name in _BUILTIN_GROUPS:
        store.db.execute("INSERT INTO groups (id, name) VALUES (?, ?)", (group_id, name))
    for group in extra:
        store.db.execute("INSERT INTO groups (id, name) VALUES (?, ?)", (group.get("id"), group["name"]))


def _page(store: Store, page: dict[str, Any], ts: int, *, home: int = sitetree.HOME_PAGE_ID, site_id: int = 1) -> None:
    """A seeded page of the site ``site_id`` whose home is ``home`` (another site's home exists already: its
    entry ``/`` only places blocks on it)."""
    path = "" if page["path"] is None else str(page["path"]).rstrip("/")
    page_type = page.get("type", "page") or ""
    template = page.get("template", "full") or ""
    system = page_type == "" or path.startswith("/!") or page["path"] is None
    if not system and (page_type not in pagetypes.creatable(store) or template not in PAGE_TEMPLATES):
        raise ValueError(f"seed page {path or '/'}: unknown type {page_type!r} or template {template!r}")
    parent_id: int | None
    page_id: int | None
    if page["path"] is None:
        if not page.get("id"):
            raise ValueError("seed page without a path (a page-type default) must give its id")
        parent_id, handle, page_id = None, "", int(page["id"])
    elif path == "":
        parent_id, handle, page_id = None, "", home
    else:
        parent_path, _, handle = path.rpartition("/")
        parent = sites.find_path(store, site_id, parent_path)
        if parent is None:
            raise ValueError(f"seed page {path}: parent {parent_path or '/'} must come first")
        parent_id, page_id = int(parent["id"]), page.get("id")
    if home != sitetree.HOME_PAGE_ID and page_id == home:
        _place_areas(store, home, path, page.get("areas") or {})
        return
    created_id = sitetree.create_page(
        store,
        parent_id=parent_id,
        name=page["name"],
        handle_source=handle,
        page_type=page_type,
        template=template,
        ts=ts,
        description=page.get("description", ""),
        attributes=page.get("attributes"),
        page_id=page_id,
        from_seed=True,
        handle=handle if parent_id is not None else None,
    )
    _place_areas(store, created_id, path, page.get("areas") or {})


def _place_areas(store: Store, page_id: int, path: str, areas: dict[str, list[dict[str, Any]]]) -> None:
    """A seeded page's blocks, in its version 1."""
    for area, blocks in areas.items():
        versioning.ensure_area(store, page_id, area)
        for position, block in enumerate(blocks, start=1):
            if block["type"] not in BLOCK_TYPES:
                raise ValueError(f"seed page {path or '/'}: unknown block type {block['type']!r}")
            block_id = block.get("id")
            if block_id is None or store.one("SELECT 1 FROM blocks WHERE id = ?", block_id) is None:
                # A block id given twice is one block placed on several pages (page-type defaults).
                record = stored_block(block["type"], block.get("value") or {})
                cursor = store.db.execute(
                    "INSERT INTO blocks (id, type, record) VALUES (?, ?, ?)",
                    (block_id, block["type"], None if record is None else dumps(record)),
                )
                block_id = int(cursor.lastrowid or 0)
                layouts.own(store, block_id, block.get("instances") or ())
            store.db.execute("INSERT INTO placements VALUES (?, 1, ?, ?, ?)", (page_id, area, position, block_id))


def _next_id(store: Store, table: str, next_id: int) -> None:
    """Make the next row of an AUTOINCREMENT table get at least ``next_id``."""
    row = store.one("SELECT seq FROM sqlite_sequence WHERE name = ?", table)
    if row is None:
        store.db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, next_id - 1))
    elif int(row["seq"]) < next_id - 1:
        store.db.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", (next_id - 1, table))


def _file(store: Store, entry: dict[str, Any], root: int, ts: int, rng: random.Random) -> None:
    if "png" in entry:
        content = imagesize.png(int(entry["png"][0]), int(entry["png"][1]))
    elif "base64" in entry:
        content = base64.b64decode(entry["base64"])
    else:
        content = str(entry.get("text", "")).encode()
    filestore.add(
        store,
        filename=entry["filename"],
        content=content,
        folder_id=int(entry.get("folder", root)),
        ts=ts,
        rng=rng,
        file_uuid=entry.get("uuid"),
        title=entry.get("title"),
        description=entry.get("description", ""),
        tags=entry.get("tags", ""),
        prefix=entry.get("prefix"),
        num_id=entry.get("id"),
    )
