"""The schedule of full runs (``daemon.interval``, ``daemon.cron``) on APScheduler 3.x, kept in this one module.

The scheduler never runs a sync itself: its jobs only call ``request()`` on the reconciler, which owns single-flight
(APScheduler's ``max_instances`` would *drop* a trigger that fires during a run). Traps of 3.x handled here:

* ``misfire_grace_time`` defaults to 1 s, so a job that cannot start at once (loop busy, host suspended) is skipped
  with a warning: we allow 5 minutes, and ``coalesce`` folds a backlog into one firing;
* ``AsyncIOScheduler.start()`` needs the running loop: :meth:`Schedule.start` is called from inside it;
* the default timezone comes from tzlocal (containers are usually UTC): it is always passed explicitly;
* ``CronTrigger.from_crontab`` reads a numeric day-of-week as Monday=0, where cron means Sunday=0 (wontfix in 3.x):
  :func:`cron_trigger` parses the five fields itself and turns the day-of-week into day names;
* cron runs a job when *either* day field matches if both are restricted, APScheduler when both do: such a line
  becomes an ``OrTrigger`` of the two.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from cmssync.errors import ConfigError

MISFIRE_GRACE = 300
DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
"""Cron's numbering: Sunday is 0 (and 7)."""
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def load_timezone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"daemon.timezone: unknown time zone {name!r} (use an IANA name such as UTC)") from None


def cron_weekdays(field: str) -> str:
    """A cron day-of-week field (Sunday = 0 or 7, names, ranges, steps, lists) as APScheduler day names.

    Raises ``ValueError`` saying what is wrong.
    """
    days: set[int] = set()
    for part in field.lower().split(","):
        base, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ValueError(f"invalid step {step_text!r} in day-of-week {field!r}")
            step = int(step_text)
        if base == "*":
            low, high = 0, 6
        elif "-" in base:
            first, _, last = base.partition("-")
            low, high = _weekday(first, field), _weekday(last, field)
            high = 7 if high == 0 else high  # "fri-sun", "5-0": Sunday closes the week
            if low > high:
                raise ValueError(f"day-of-week range {base!r} runs backwards in {field!r}")
        else:
            low = _weekday(base, field)
            high = 6 if slash else low
        days.update(day % 7 for day in range(low, high + 1, step))
    if len(days) == 7:
        return "*"
    return ",".join(DAY_NAMES[day] for day in sorted(days))


def _weekday(token: str, field: str) -> int:
    if token.isdigit():
        if int(token) > 7:
            raise ValueError(f"day-of-week {token} is out of range 0-7 (0 and 7 are Sunday) in {field!r}")
        return int(token)
    if token in DAY_NAMES:
        return DAY_NAMES.index(token)
    raise ValueError(f"unknown day-of-week {token!r} in {field!r} (use 0-7 or sun..sat)")


def cron_trigger(text: str, timezone: tzinfo) -> BaseTrigger:
    """A trigger for a five-field cron line (or a macro such as ``@daily``) with cron's own meaning."""
    line = MACROS.get(text.strip().lower(), text)
    fields = line.split()
    if len(fields) != 5:
        raise ConfigError(
            f"daemon.cron {text!r}: expected five fields (minute hour day-of-month month day-of-week) "
            "or a macro such as @daily"
        )
    minute, hour, day, month, weekday = fields
    try:
        days = cron_weekdays(weekday)
        common = {"minute": minute, "hour": hour, "month": month, "timezone": timezone}
        if not day.startswith("*") and not weekday.startswith("*"):
            return OrTrigger([CronTrigger(day=day, **common), CronTrigger(day_of_week=days, **common)])
        return CronTrigger(day=day, day_of_week=days, **common)
    except ValueError as exc:
        raise ConfigError(f"daemon.cron {text!r}: {exc}") from None


def interval_trigger(seconds: float, timezone: tzinfo) -> IntervalTrigger:
    if seconds <= 0:
        raise ConfigError("daemon.interval must be a positive duration (e.g. 10m), or null for none")
    return IntervalTrigger(seconds=seconds, timezone=timezone)


def next_fire_time(trigger: BaseTrigger, after: datetime) -> datetime | None:
    """When ``trigger`` fires next after ``after`` (an aware datetime)."""
    fire: datetime | None = trigger.get_next_fire_time(None, after)
    return fire


class Schedule:
    """Calls ``on_fire()`` on the event loop whenever one of ``triggers`` fires."""

    def __init__(self, triggers: dict[str, BaseTrigger], timezone: tzinfo, on_fire: Callable[[], None]) -> None:
        self.triggers = triggers
        self.timezone = timezone
        self._on_fire = on_fire
        self._scheduler: AsyncIOScheduler | None = None

    def start(self) -> None:
        """Start the scheduler; call from inside the running event loop."""
        if not self.triggers:
            return
        # APScheduler logs every job run at INFO; our own run log says the same with more.
        logging.getLogger("apscheduler").setLevel(logging.WARNING)
        scheduler = AsyncIOScheduler(
            timezone=self.timezone,
            job_defaults={"misfire_grace_time": MISFIRE_GRACE, "coalesce": True, "max_instances": 1},
        )
        for name, trigger in self.triggers.items():
            scheduler.add_job(self._fire, trigger, id=name, name=f"full run ({name})")
        scheduler.start()
        self._scheduler = scheduler

    async def _fire(self) -> None:
        # A coroutine job runs on the loop itself; a plain function would run in a worker thread.
        self._on_fire()

    def next_fire_times(self) -> dict[str, datetime | None]:
        if self._scheduler is None:
            return {}
        return {job.id: job.next_run_time for job in self._scheduler.get_jobs()}

    def shutdown(self) -> None:
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        self._scheduler = None
