"""The image block: round-trips as ``raw: true`` (file columns as ``${file-id:…}``, the page link as
``${page-id:…}``). Its read adds the link chooser (``imageLink__which`` and the chosen ``imageLink_<kind>``, ids as
numbers), which only mirrors the link columns: not pulled nor compared; the write computes it from the columns
(block-types.jsonl ``types.image.linked`` / ``.file_link``)."""

from cmssync.content.blocktypes.descriptor import BlockType, link_chooser

# The controller rejects ``cropImage: "0"`` ("Cropping an image requires setting a max width and max height.": it
# tests ``isset``), blocks.jsonl ``filecol.put.image.as_read``.
TYPE = BlockType(
    "image",
    dropped_when_zero=frozenset({"cropImage"}),
    derived=frozenset(
        {"imageLink__which", "imageLink_none", "imageLink_page", "imageLink_file", "imageLink_external_url"}
    ),
    write=lambda value, page_id: link_chooser(value, page="internalLinkCID", file="fileLinkID", url="externalLink"),
    edit_field="altText",
)
