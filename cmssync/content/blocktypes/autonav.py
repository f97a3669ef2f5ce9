"""The auto-nav block: a menu of pages (``raw: true``; its start page as ``${page-id:…}``; block-types.jsonl
``types.autonav*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("autonav")
