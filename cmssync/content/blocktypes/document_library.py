"""The document library block: kept as a placeholder. Its folder column reads as a path
(``{ccm:export:filefolder:/Documents}``) and cmssync does not translate file-manager folders to ids yet
(block-types.jsonl ``setup.probe_folder_ids`` shows that a probe could)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "document_library",
    keep_reason="its folder column names a file-manager folder, which cmssync does not translate to an id yet",
)
