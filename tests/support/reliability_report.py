"""The reliability suite's totals (cases tried, faults injected, kills, duplicates found, secrets leaked): one
:class:`ReliabilityReport` per session (the ``reliability_report`` fixture), written as JSON to
``CMSSYNC_RELIABILITY_REPORT`` when set (``bench/reliability_totals.py`` prints it)."""

from __future__ import annotations

from collections import Counter

REPORT_ENV = "CMSSYNC_RELIABILITY_REPORT"


class ReliabilityReport:
    """Counters across the session; ``add`` from any test."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, **counts: int) -> None:
        self.counts.update(counts)

    def maximum(self, **values: int) -> None:
        """Keep the largest value seen (a peak, not a count)."""
        for key, value in values.items():
            self.counts[key] = max(self.counts[key], value)

    def as_dict(self) -> dict[str, int]:
        keys = ("cases_tried", "faults_injected", "kills", "duplicates_found", "secrets_leaked")
        return {key: int(self.counts[key]) for key in keys} | {
            key: int(value) for key, value in sorted(self.counts.items()) if key not in keys
        }
