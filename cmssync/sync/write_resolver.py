"""The resolver a block is written with: references in Concrete's stored form, with the numeric ids they need.

A block's stored form names files by number (``{CCM:FID_DL_<n>}``, numeric file columns) and page types by id,
which the API does not read back; both are learned from the site when not known yet (``cmssync.sync.file_numbers``:
a probe block in the page's draft; ``cmssync.sync.page_type_numbers``: a scratch page in the trash, made once per
site).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from cmssync.content.paths import page_named
from cmssync.content.text import FileIdRef
from cmssync.errors import ApplyError
from cmssync.plan.block_form import BlockForm
from cmssync.plan.desired import Resolver
from cmssync.plan.references import export_name
from cmssync.sync.engine import ApplyContext
from cmssync.sync.page_type_numbers import Probe, ProbeFailed, page_type_ids, scratch_probe, type_pairs


async def write_resolver(
    context: ApplyContext, path: str, page_id: int, block: BlockForm, probe: Callable[[str], Awaitable[str]]
) -> Resolver:
    """The strict resolver for writing ``block`` of the page at ``path`` in stored form, with the numeric ids of the
    files it refers to (learned with ``probe``, which adds a block to the page's draft and reads it back, when not
    known yet) and of the page types it names."""
    urls = context.file_urls
    names = {  # a file's path in the content -> its export name (walrus names: they bind in this function's scope)
        file_path: name
        for ref in block.references()
        if isinstance(ref, FileIdRef)
        and (file_path := ref.path) in urls
        and (name := export_name(urls[file_path])) is not None
    }
    numbers = context.file_numbers
    if numbers.missing(names.values()):
        unknown = await numbers.learn(names.values(), probe)
        if unknown:
            files = ", ".join(sorted(p for p, n in names.items() if n in unknown))
            raise ApplyError(
                f"{page_named(path)}: the numeric id of {files} could not be learned from the site (a probe "
                "of download links did not find it), so links to it cannot be stored"
            )
    known = {file: numbers.known[name] for file, name in names.items() if name in numbers.known}

    async def page_type_probe() -> Probe:
        pages = context.snapshot.pages
        pairs = type_pairs(pages.get(path), pages.values())
        return await scratch_probe(context.client, context.state, page_id, pairs, context.save)

    try:  # page-type ids (probed on a scratch page in the trash when not known yet)
        page_types = await page_type_ids(context.page_type_numbers, block, page_type_probe)
    except (LookupError, ProbeFailed) as exc:
        raise ApplyError(f"{page_named(path)}: {exc}") from None
    return replace(context.resolver(), mode="write", file_numbers=known, page_type_numbers=page_types)
