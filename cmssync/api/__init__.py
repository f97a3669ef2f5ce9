"""The HTTP client of the Concrete CMS REST API 1.0: the only code in cmssync that talks HTTP."""
