"""The image block: round-trips as ``raw: true`` (file columns as ``${file-id:…}``)."""

from cmssync.content.blocktypes.descriptor import BlockType

# The controller rejects ``cropImage: "0"`` ("Cropping an image requires setting a max width and max height.": it
# tests ``isset``), blocks.jsonl ``filecol.put.image.as_read``.
TYPE = BlockType("image", dropped_when_zero=frozenset({"cropImage"}))
