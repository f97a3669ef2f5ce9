# syntax=docker/dockerfile:1
#
# cmssync in a container: `cmssync daemon /content` by default (see docs/daemon.md and deploy/).
#
#   docker build -t cmssync .
#   docker run --rm \
#     -v "$PWD/site:/content:ro" \            # the content, read-only
#     -v cmssync-state:/state \               # the state (ownership records), on a volume
#     -e CMSSYNC_CLIENT_SECRET -e CMSSYNC_PASSWORD \   # or Docker secrets in /run/secrets
#     -p 9090:9090 cmssync
#
# The health server listens on CMSSYNC_HEALTH (0.0.0.0:9090 here, so /metrics and /readyz can be reached from
# outside; the HEALTHCHECK below uses /livez from inside). It overrides daemon.health from cmssync.yaml.
# Other commands run the same image: `docker run --rm -v "$PWD/site:/content:ro" cmssync plan /content`.

ARG PYTHON_IMAGE=python:3.11-slim

# ---- builder: a wheel of cmssync, installed with its dependencies into a virtual environment ----------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY cmssync ./cmssync

# The wheel's dependencies include tzdata: zoneinfo data for daemon.timezone, whatever the base image ships.
RUN pip wheel --no-deps --wheel-dir /wheels . \
    && python -m venv /opt/cmssync \
    && /opt/cmssync/bin/pip install /wheels/cmssync-*.whl \
    && /opt/cmssync/bin/cmssync --version

# ---- runtime: the virtual environment only, run as an unprivileged user -------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

LABEL org.opencontainers.image.title="cmssync" \
      org.opencontainers.image.description="Site-as-code for Concrete CMS: plan, apply and continuously reconcile a site from YAML." \
      org.opencontainers.image.licenses="MIT"

ENV PATH=/opt/cmssync/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    CMSSYNC_STATE=/state/state.json \
    CMSSYNC_HEALTH=0.0.0.0:9090

RUN groupadd --system --gid 10001 cmssync \
    && useradd --system --uid 10001 --gid cmssync --home-dir /state --no-create-home --shell /usr/sbin/nologin cmssync \
    && mkdir -p /state /content \
    && chown cmssync:cmssync /state

COPY --from=builder /opt/cmssync /opt/cmssync

# The state (and the file-hash cache next to it) lives here; the content is mounted read-only at /content.
VOLUME ["/state"]
WORKDIR /state
USER 10001:10001
EXPOSE 9090

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9090/livez', timeout=4).status == 200 else 1)"]

# SIGTERM (docker stop) finishes the API calls in flight, keeps the state and exits 0 within a few seconds.
STOPSIGNAL SIGTERM
ENTRYPOINT ["cmssync"]
CMD ["daemon", "/content"]
