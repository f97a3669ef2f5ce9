"""Renderers: what a plan, an apply or a pull looks like as text, JSON, markdown or HTML. Pure: no HTTP, no files."""
