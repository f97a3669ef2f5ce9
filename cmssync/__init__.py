"""cmssync: site-as-code for Concrete CMS."""

from __future__ import annotations

__version__ = "0.1.0"
