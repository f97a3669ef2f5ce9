"""The desired site as users write it: models, loader with source positions, references, schema, writer."""
