"""The Google Map block: kept as a placeholder (block-types.jsonl ``types.google_map.update``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "google_map",
    keep_reason="the API refuses to update a google_map block without the site's Google Maps API key, which it never "
    "reads back (and a key sent replaces the site's)",
)
