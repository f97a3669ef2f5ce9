# syntax=docker/dockerfile:1
#
# cmssync in a container: `cmssync daemon /content` by default (see docs/daemon.md and deploy/).
#
#   docker build -t cmssync .
#   docker run --rm -v "$PWD/site:/content:ro" -v cmssync-state:/state \
#     -e CMSSYNC_CLIENT_SECRET -e CMSSYNC_PASSWORD -p 9090:9090 cmssync
#
# The content is mounted read-only, the state (ownership records) lives on a volume, and the credentials come from
# the environment (or Docker secrets in /run/secrets).
#
# Reproducible: the base image is pinned by digest (update it with `docker buildx imagetools inspect
# python:3.11-slim`), the dependencies are installed from requirements.lock with --require-hashes, and the runtime's
# virtual environment has no pip (nor does the runtime image).
#
# The health server listens on CMSSYNC_HEALTH (0.0.0.0:9090 here, so /metrics and /readyz can be reached from
# outside; the HEALTHCHECK below uses /livez from inside). It overrides daemon.health from cmssync.yaml.
# Other commands run the same image: `docker run --rm -v "$PWD/site:/content:ro" cmssync plan /content`.

ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# ---- builder: a wheel of cmssync, installed with its dependencies into a virtual environment ----------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1

WORKDIR /src
COPY requirements.lock pyproject.toml README.md ./
COPY cmssync ./cmssync

# The dependencies come from the lock, each checked against its hashes (tzdata among them: zoneinfo data for
# daemon.timezone, whatever the base image ships); the venv is made without pip and filled by the builder's pip.
RUN pip wheel --no-deps --wheel-dir /wheels . \
    && python -m venv --without-pip /opt/cmssync \
    && pip --python /opt/cmssync/bin/python install --no-deps --require-hashes -r requirements.lock \
    && pip --python /opt/cmssync/bin/python install --no-deps /wheels/cmssync-*.whl \
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

RUN python -m pip uninstall --yes --quiet pip setuptools wheel \
    && groupadd --system --gid 10001 cmssync \
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
