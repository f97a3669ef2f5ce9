"""The sandbox: a faithful emulator of the Concrete CMS 9.3 REST API 1.0.

It serves what a real 9.3 site does — written from ``docs/concrete-api.md`` and checked against the recorded
exchanges in ``conformance/concrete-9.3.1`` — including where the real server is strange: ``{"data": …}`` envelopes
and wrapped includes, cursors whose ``next`` is set on the last page, ``limit`` outside 1..100 as an HTTP 500,
ErrorLists with the statuses the server really uses (400 where 404 was meant, 200 for a failed block validation),
the CMS's HTML 404 page for unknown routes and wrong methods, block values as strings with internal links rewritten
to ``{CCM:BASE_URL}``, page versioning with one shared draft and block ids that change on the first update after an
approval, "deleted" answers that delete nothing (home page, user 1), the trash can, unstable list order when sort
keys tie, and the OAuth2 token endpoint with its grants, scopes, refresh-token rotation and error bodies.
``--dialect documented`` serves the same data the way ``docs/api-as-documented.md`` describes it (bare objects,
plain-text 401/404 errors, boolean ``is_approved``, ``YYYY-MM-DD`` dates, prefix ``/cms/api/1.0`` besides
``/ccm/api/1.0``).

State lives in SQLite (``--db PATH`` survives restarts; otherwise a temporary file). Seeds and ``--generate`` are
described in :mod:`cmssync.emulator.seeds`, fault rules in :mod:`cmssync.emulator.faults`, the control endpoints in
:mod:`cmssync.emulator.control`.

Entry points: :func:`cmssync.emulator.server.run_emulator` (the ``cmssync emulator`` command) and
:class:`cmssync.emulator.embedded.Sandbox` (in-process, for tests, ``--sandbox`` and benchmarks).

The emulator imports nothing from the rest of cmssync: it shares no code with the client, so a client bug cannot be
mirrored by an emulator bug.
"""
