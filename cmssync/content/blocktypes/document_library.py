"""The document library block: kept as a placeholder. Its folder column reads as a path
(``{ccm:export:filefolder:/Documents}``); the API shows no folder ids, and a probe like the page-type one would
have to try every node of the file manager's tree, one request each (block-types.jsonl ``setup.probe_folder_ids``
reads ids 1-12 as folders; observed, not recorded: files are nodes too — id 40 read ``/Blog/blog-01.jpg`` — and an
id past the last node breaks every read of the probe block, as for page types)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "document_library",
    keep_reason="its folder column names a file-manager folder by path, and the API offers no affordable way to "
    "learn the folder's id",
)
