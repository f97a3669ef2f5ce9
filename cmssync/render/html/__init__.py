"""The HTML plan report (``--format html``): see :mod:`cmssync.render.html.document`."""

from cmssync.render.html.document import render_html
from cmssync.render.html.preview import files_wanted

__all__ = ["files_wanted", "render_html"]
