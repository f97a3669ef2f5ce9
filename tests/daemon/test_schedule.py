"""The schedule: cron with cron's own weekdays (Sunday = 0), explicit time zones, intervals, firing in the loop."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from cmssync.daemon.schedule import (
    Schedule,
    cron_trigger,
    cron_weekdays,
    interval_trigger,
    load_timezone,
    next_fire_time,
)
from cmssync.errors import ConfigError

BERLIN = ZoneInfo("Europe/Berlin")
UTC = ZoneInfo("UTC")
WEDNESDAY_NOON = datetime(2026, 11, 18, 12, 0, tzinfo=BERLIN)  # a Wednesday


def fires(line: str, after: datetime, count: int, tz: ZoneInfo = BERLIN) -> list[datetime]:
    trigger = cron_trigger(line, tz)
    found: list[datetime] = []
    moment = after
    for _ in range(count):
        fire = next_fire_time(trigger, moment)
        assert fire is not None
        found.append(fire)
        moment = fire + timedelta(seconds=1)
    return found


@pytest.mark.parametrize(
    ("field", "names"),
    [
        ("0", "sun"),
        ("7", "sun"),
        ("1", "mon"),
        ("6", "sat"),
        ("1-5", "mon,tue,wed,thu,fri"),
        ("0,6", "sun,sat"),
        ("5-7", "sun,fri,sat"),
        ("fri-sun", "sun,fri,sat"),
        ("sat,sun", "sun,sat"),
        ("*", "*"),
        ("0-6", "*"),
        ("*/2", "sun,tue,thu,sat"),
        ("1-5/2", "mon,wed,fri"),
        ("MON-Fri", "mon,tue,wed,thu,fri"),
    ],
)
def test_cron_weekdays_use_sunday_zero(field: str, names: str) -> None:
    assert cron_weekdays(field) == names


@pytest.mark.parametrize("field", ["8", "5-1", "mo", "1#2", "5L", "*/0", "?", "1-", ""])
def test_malformed_weekdays_are_refused(field: str) -> None:
    with pytest.raises(ValueError, match=r"day-of-week|step"):
        cron_weekdays(field)


def test_sunday_zero_fires_on_sunday() -> None:
    [first, second] = fires("0 3 * * 0", WEDNESDAY_NOON, 2)
    assert first == datetime(2026, 11, 22, 3, 0, tzinfo=BERLIN)
    assert first.strftime("%A") == "Sunday"
    assert second == datetime(2026, 11, 29, 3, 0, tzinfo=BERLIN)


def test_weekdays_fire_monday_to_friday() -> None:
    found = fires("0 3 * * 1-5", WEDNESDAY_NOON, 5)
    assert [f.strftime("%a %d %H:%M") for f in found] == [
        "Thu 19 03:00",
        "Fri 20 03:00",
        "Mon 23 03:00",
        "Tue 24 03:00",
        "Wed 25 03:00",
    ]


def test_the_time_zone_is_the_one_configured() -> None:
    [fire] = fires("30 2 * * *", datetime(2026, 11, 18, 12, 0, tzinfo=UTC), 1, tz=ZoneInfo("America/New_York"))
    assert fire.utcoffset() == timedelta(hours=-5)
    assert fire.astimezone(UTC) == datetime(2026, 11, 19, 7, 30, tzinfo=UTC)


def test_both_day_fields_restricted_fire_on_either_as_cron_does() -> None:
    found = fires("0 0 1 * 1", datetime(2026, 11, 25, 12, 0, tzinfo=UTC), 3, tz=UTC)  # 1st of month, or Mondays
    assert [f.date().isoformat() for f in found] == ["2026-11-30", "2026-12-01", "2026-12-07"]


@pytest.mark.parametrize(
    ("macro", "line"), [("@daily", "0 0 * * *"), ("@weekly", "0 0 * * 0"), ("@hourly", "0 * * * *")]
)
def test_macros(macro: str, line: str) -> None:
    assert fires(macro, WEDNESDAY_NOON, 3) == fires(line, WEDNESDAY_NOON, 3)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("0 3 * *", "five fields"),
        ("0 3 * * * *", "five fields"),
        ("61 3 * * *", "daemon.cron"),
        ("0 25 * * *", "daemon.cron"),
        ("0 3 * 13 *", "daemon.cron"),
        ("0 3 * * 9", "out of range"),
        ("@sometimes", "five fields"),
    ],
)
def test_malformed_cron_is_a_config_error(line: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        cron_trigger(line, UTC)


def test_interval() -> None:
    now = datetime.now(UTC)
    trigger = interval_trigger(600, UTC)  # the first firing is one interval after start: startup already ran
    first = next_fire_time(trigger, now)
    assert first is not None
    assert timedelta(seconds=599) < first - now <= timedelta(seconds=601)
    assert next_fire_time(trigger, first + timedelta(seconds=1)) == first + timedelta(seconds=600)


def test_a_zero_interval_is_refused() -> None:
    with pytest.raises(ConfigError, match="interval"):
        interval_trigger(0, UTC)


def test_unknown_time_zone() -> None:
    with pytest.raises(ConfigError, match="Mars/Olympus"):
        load_timezone("Mars/Olympus")


async def test_the_schedule_fires_in_the_running_loop() -> None:
    fired = asyncio.Event()
    thread_ids: list[int] = []

    def on_fire() -> None:
        import threading

        thread_ids.append(threading.get_ident())
        fired.set()

    schedule = Schedule({"interval": interval_trigger(0.05, UTC)}, UTC, on_fire)
    schedule.start()
    try:
        assert set(schedule.next_fire_times()) == {"interval"}
        async with asyncio.timeout(5):
            await fired.wait()
    finally:
        schedule.shutdown()
    import threading

    assert thread_ids[0] == threading.get_ident()  # on the loop's thread: request() needs no locking


async def test_no_triggers_no_scheduler() -> None:
    schedule = Schedule({}, UTC, lambda: None)
    schedule.start()
    assert schedule.next_fire_times() == {}
    schedule.shutdown()
