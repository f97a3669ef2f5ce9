"""The HTML plan report (``--format html``): see :mod:`cmssync.plan.html.document`."""

from cmssync.plan.html.document import render_html
from cmssync.plan.html.preview import files_wanted

__all__ = ["files_wanted", "render_html"]
