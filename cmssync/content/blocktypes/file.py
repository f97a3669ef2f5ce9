"""The file (download) block: round-trips as ``raw: true`` (file columns as ``${file-id:…}``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("file", edit_field="fileLinkText")
