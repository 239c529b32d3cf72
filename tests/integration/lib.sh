# lib.sh - helpers sourced by the integration tests.
#
# ok/notok/skip print the lines run.sh counts.  need_shared skips a whole
# script with a reason when ../shared is not beside the repo.
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
skip() { echo "skip - $*"; }
need_shared() {
	if [ ! -d "$SHARED/peers" ]; then
		skip "$1: $SHARED/peers is absent (tests read the peers' data in place)"
		exit 0
	fi
}
# A fresh artifact root per script, removed at exit.
WORK=$(mktemp -d /tmp/perflens-it.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
