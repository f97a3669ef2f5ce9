#!/usr/bin/env bash
# Make a real kit site (../shared/realsite/up.sh) a multi-site installation with a second site:
#   SITE_DIR=/srv/s8094 DB_NAME=s8094 tests/realsite/add_site.sh [HANDLE] [key=value ...]   (add_site.php's options)
# or put it back to a single site:
#   SITE_DIR=/srv/s8094 DB_NAME=s8094 tests/realsite/add_site.sh --reset
# Adding starts from the site's reset point (reset.sh). Enabling multisite saves file config
# (application/config/generated_overrides: advanced permissions, multisite, the new site's name), which reset.sh
# does not restore; the first run keeps the single site's copy in $SITE_DIR.single-overrides.tgz and --reset puts
# it back before reset.sh, so the database and the file config always agree.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SITE_DIR="${SITE_DIR:-/srv/concrete-site}"; DB_NAME="${DB_NAME:-concrete}"
RESET="${REALSITE_RESET_SCRIPT:-/work/shared/realsite/reset.sh}"
export SITE_DIR DB_NAME C5_CLI_ALLOW_AS_ROOT=1
overrides="$SITE_DIR/application/config/generated_overrides"
saved="$SITE_DIR.single-overrides.tgz"
[ -f "$saved" ] || tar -czf "$saved" -C "$SITE_DIR/application/config" generated_overrides
rm -rf "$overrides" && tar -xzf "$saved" -C "$SITE_DIR/application/config"
"$RESET" >/dev/null
cd "$SITE_DIR"
if [ "${1:-}" = --reset ]; then
  php concrete/bin/concrete c5:clear-cache >/dev/null
  echo "single site: $SITE_DIR back at its reset point"
  exit 0
fi
# Dashboard > System > Permissions > Advanced, in its own process: a config file saved and read back within one
# PHP process is read stale (the same second's file), and enabling multisite checks this setting
php concrete/bin/concrete c5:config set concrete.permissions.model advanced >/dev/null
php -d memory_limit=-1 concrete/bin/concrete c5:exec "$HERE/add_site.php" "$@"
php concrete/bin/concrete c5:clear-cache >/dev/null
