"""One small sample per managed kind, all the kind contract (``tests/sync/test_kind_contract_site.py``) needs of
it: how an object is written in the content at a version (``files``), what the site shows of it (``seen``: the
value the version wrote, None when the site has no such object), which versions it has (one for a kind the API
cannot change), whether a prune deletes it, and content its own check refuses (``invalid``, ``problem``). The
contract runs every sample against the same sandbox site (:data:`SEED`: the stacks a stack sample writes exist
there, as a stack is never created)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from tests.support.rawsite import RawSite
from tests.support.stacks import SEED as STACKS_SEED
from tests.support.stacks import content_block

ContentFiles = Mapping[str, str | bytes]
"""Content files by their path in the content directory; the texts of objects that share a file (a list: one line
of ``toys.txt`` each) are joined."""

STACK_IDS = {"footer": 7, "sidebar": 8, "promo": 9}
SEED: dict[str, Any] = {
    **STACKS_SEED,
    "pages": [
        *STACKS_SEED["pages"],
        {
            "path": "/!stacks/promo",
            "name": "Promo",
            "type": "core_stack",
            "template": False,
            "id": STACK_IDS["promo"],
            "areas": {"Main": [content_block("Promo text")]},
        },
    ],
}
PASSWORD_VARIABLE = "CONTRACT_PASSWORD"


class KindSample:
    """A kind's sample: a subclass per kind sets its data and writes and reads its objects."""

    kind: ClassVar[str]
    keys: ClassVar[tuple[str, str, str]]
    """Three objects' keys: ``a`` and ``b`` the content writes, ``c`` another directory makes on the site (pulled)."""
    invalid: ClassVar[tuple[tuple[str, str | bytes], ...]]
    """Content files (path, text) its check refuses."""
    problem: ClassVar[str]
    """The one problem ``validate`` finds in :attr:`invalid` (``file:line:col: message``)."""
    versions: ClassVar[int] = 2
    deletes: ClassVar[bool] = True
    added: ClassVar[str | None] = None
    """The kind module of ``tests/support/added_kinds`` the kind is (None: a built-in kind)."""
    environment: ClassVar[tuple[tuple[str, str], ...]] = ()
    """Variables its content reads (name, value)."""

    def files(self, key: str, version: int) -> ContentFiles:
        """An object's content files at a version (0, or 1: changed)."""
        raise NotImplementedError

    def value(self, key: str, version: int) -> str:
        """What the site shows of the object once a version is applied."""
        return f"Contract {key.strip('/')} {version}"

    def seen(self, raw: RawSite, key: str) -> str | None:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.kind


def _by(items: list[dict[str, Any]], name: str, key: str, shown: str) -> str | None:
    return next((str(item[shown]) for item in items if item.get(name) == key), None)


def _email(key: str, version: int) -> str:
    return f"{key}.{version}@contract.example"


class Groups(KindSample):
    kind = "group"
    keys = ("Contract A", "Contract B", "Contract C")
    invalid = (("groups.yaml", "- name: Contract D\n  colour: red\n"),)
    problem = "groups.yaml:2:3: [0]: unknown key 'colour'"
    versions, deletes = 1, False  # a group is its name; the API deletes none

    def files(self, key: str, version: int) -> ContentFiles:
        return {"groups.yaml": f"- name: {key}\n"}

    def value(self, key: str, version: int) -> str:
        return key

    def seen(self, raw: RawSite, key: str) -> str | None:
        return _by(raw.all("/groups"), "name", key, "name")


class Files(KindSample):
    kind = "file"
    keys = ("contract-a.txt", "contract-b.txt", "contract-c.txt")
    invalid = (("files/bad.txt", b"bad\n"), ("files/bad.txt.yaml", "title: Bad\ncolour: red\n"))
    problem = "files/bad.txt.yaml:2:1: unknown key 'colour'"

    def files(self, key: str, version: int) -> ContentFiles:
        return {
            f"files/{key}": f"The bytes of {key}\n".encode(),
            f"files/{key}.yaml": f"title: {self.value(key, version)}\n",
        }

    def seen(self, raw: RawSite, key: str) -> str | None:
        found = [f for f in raw.all("/files") if (f.get("url") or "").split("?")[0].endswith("/" + key)]
        return str(found[0]["title"]) if found else None


class Pages(KindSample):
    kind = "page"
    keys = ("/contract-ann", "/contract-bob", "/contract-cid")  # Concrete leaves a one-letter word out of URLs
    invalid = (("pages/bad.yaml", "name: Bad\ncolour: red\n"),)
    problem = "pages/bad.yaml:2:1: unknown key 'colour'"

    def files(self, key: str, version: int) -> ContentFiles:
        return {f"pages{key}.yaml": f"name: {self.value(key, version)}\n"}

    def seen(self, raw: RawSite, key: str) -> str | None:
        page = raw.page_by_path(key)
        return None if page is None else str(page["name"])


class Stacks(KindSample):
    kind = "stack"
    keys = ("footer", "sidebar", "promo")  # in SEED: a stack is never created
    invalid = (("stacks/bad.yaml", "name: Bad\n"),)
    problem = "stacks/bad.yaml:1:1: missing required key 'id'"
    deletes = False

    def files(self, key: str, version: int) -> ContentFiles:
        block = f"    - type: content\n      value: {{content: '<p>{self.value(key, version)}</p>'}}\n"
        return {f"stacks/{key}.yaml": f"id: {STACK_IDS[key]}\nname: {key.title()}\nareas:\n  Main:\n{block}"}

    def seen(self, raw: RawSite, key: str) -> str | None:
        blocks = raw.blocks("", "Main", page_id=STACK_IDS[key])
        return blocks[0][1]["content"].removeprefix("<p>").removesuffix("</p>") if blocks else None


class Users(KindSample):
    kind = "user"
    keys = ("contract_a", "contract_b", "contract_c")
    invalid = (("users.yaml", "- username: contract_d\n  email: not-an-address\n"),)
    problem = "users.yaml:2:10: [0].email: invalid email address 'not-an-address'"
    environment = ((PASSWORD_VARIABLE, "contract-secret-1"),)

    def files(self, key: str, version: int) -> ContentFiles:
        password = f"${{env:{PASSWORD_VARIABLE}}}"
        entry = f"- username: {key}\n  email: {self.value(key, version)}\n  password: {password}\n"
        return {f"users/{key}.yaml": entry}  # one file each (users/); pull writes a user it takes in to users.yaml

    def value(self, key: str, version: int) -> str:
        return _email(key, version)

    def seen(self, raw: RawSite, key: str) -> str | None:
        return _by(raw.all("/users"), "username", key, "email")


class Toys(Users):
    """The toy kind: a site user per line of ``toys.txt`` (``tests/support/added_kinds/toy``)."""

    kind = "toy"
    keys = ("toy_a", "toy_b", "toy_c")
    invalid = (("toys.txt", "d not-an-address\n"),)
    problem = "toys.txt:1:3: toy 'd': after the name, one email address"
    added = "toy"
    environment = ()

    def files(self, key: str, version: int) -> ContentFiles:
        return {"toys.txt": f"{key.removeprefix('toy_')} {self.value(key, version)}\n"}


SAMPLES: tuple[KindSample, ...] = (Groups(), Files(), Pages(), Stacks(), Users(), Toys())
"""Every built-in kind (in plan order) and the toy kind a test adds."""
