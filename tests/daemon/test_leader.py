"""The daemon's leader election on a real PostgreSQL state (tests.support.postgres): one leader at a time, a standby
that names it and leads once it is gone, and a leader that notices when the database ends its session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg

from cmssync.config import Settings
from cmssync.daemon.leader import Leadership, electing
from cmssync.state.backends import LocalStateBackend
from cmssync.state.postgres_backend import PostgresStateBackend
from tests.support.postgres import PostgresCluster


def _backend(url: str, tmp_path: Path) -> PostgresStateBackend:
    return PostgresStateBackend(Settings.model_validate({"state": url}).state_settings, key_path=tmp_path / "k")


async def test_one_leader_at_a_time_and_the_standby_takes_over(postgres_state: str, tmp_path: Path) -> None:
    first = Leadership(electing(_backend(postgres_state, tmp_path)), retry=0.05, check=0.05)
    second = Leadership(electing(_backend(postgres_state, tmp_path)), retry=0.05, check=0.05)
    never = asyncio.Event()
    assert await first.campaign(never)
    assert first.document()["role"] == "leader"

    stop = asyncio.Event()
    standing = asyncio.create_task(second.campaign(stop))
    await asyncio.sleep(0.3)
    assert not standing.done()
    assert second.document()["role"] == "standby"
    assert second.leader is not None
    assert first.leader is not None
    assert second.leader.id == first.leader.id  # the standby names the leader

    first.release()
    assert await asyncio.wait_for(standing, 5)  # leads within a few retries
    assert second.document()["role"] == "leader"
    second.release()

    stop.set()
    assert not await Leadership(electing(_backend(postgres_state, tmp_path)), retry=0.05).campaign(stop)


async def test_a_leader_whose_session_the_database_ends_stops_leading(
    postgres_cluster: PostgresCluster, postgres_state: str, tmp_path: Path
) -> None:
    leadership = Leadership(electing(_backend(postgres_state, tmp_path)), retry=0.05, check=0.05)
    assert await leadership.campaign(asyncio.Event())
    with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (f"cmssync {postgres_state.partition('#')[2]}",),
        )
    await asyncio.wait_for(leadership.watch(), 5)  # returns: the lock went with the session
    leadership.release()


def test_a_file_state_has_no_election(tmp_path: Path) -> None:
    assert electing(LocalStateBackend(tmp_path / "state.json")) is None
    assert Leadership(None).document() == {"role": "single"}
