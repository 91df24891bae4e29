# Shared by scripts/run-app and scripts/test: the Debian packages and the virtual environment.
# Sourced, not run.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${GPU_COMPANION_VENV:-$REPO/.venv}"
PY="${PYTHON:-python3}"
ALL_EXTRAS="gui,dev,selfcheck-test,providers"  # what scripts/refresh-constraints resolves
CONSTRAINTS="$REPO/constraints.txt"  # the versions the tests ran against (refresh-constraints)

# What the app needs at run time (Qt's xcb plugin, ssh, rsync, a Secret Service keyring) and
# what the tests add (sshd, a private D-Bus, Xvfb and ImageMagick for real-window screenshots).
APP_DEBS="openssh-client rsync gnome-keyring dbus-daemon libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-shape0 libxcb-randr0 libxcb-render-util0 libxcb-xinerama0 libxcb-image0 libxkbcommon-x11-0 libegl1 libgl1 libfontconfig1 parallel"
TEST_DEBS="fonts-wqy-microhei openssh-server xvfb xauth imagemagick zstd tmux procps desktop-file-utils"

need_cmd() {  # need_cmd CMD PACKAGE: prints PACKAGE when CMD is missing
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || echo "$2"
}

missing_debs() {  # the Debian packages among $@ that dpkg does not have
  local p out=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out="$out $p"
  done
  echo "$out"
}

ensure_debs() {  # ensure_debs PKG...: install when root, else print the exact line and fail
  command -v dpkg-query >/dev/null 2>&1 || { echo "Not a Debian/Ubuntu system: install the equivalents of: $*" >&2; return 0; }
  local missing
  missing="$(missing_debs "$@")"
  [ -z "${missing// /}" ] && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "Installing Debian packages:$missing"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "Missing system packages. Install them with:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    return 1
  fi
}

ensure_venv() {  # ensure_venv EXTRAS: a venv at $VENV with the project installed editable
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  local stamp="$VENV/.installed-$1"
  local pinned=()
  [ -f "$CONSTRAINTS" ] && pinned=(-c "$CONSTRAINTS")
  if [ ! -f "$stamp" ] || [ "$REPO/pyproject.toml" -nt "$stamp" ] || [ "$CONSTRAINTS" -nt "$stamp" ]; then
    echo "Installing the Python packages into $VENV (a few minutes the first time)…"
    local log="$VENV/pip-install.log"  # the build's chatter goes here, shown only on a failure
    # --no-compile: Python writes each module's .pyc when it is first imported; compiling every
    # installed module up front took ~1/3 of the first ./scripts/run-app (64 s -> 41 s to a window)
    if ! { "$VENV/bin/python" -m pip install -q --upgrade pip &&
           "$VENV/bin/python" -m pip install -q --no-compile "${pinned[@]}" -e "$REPO[$1]"; } >"$log" 2>&1; then
      tail -n 40 "$log" >&2
      echo "pip failed; the whole log is $log" >&2
      return 1
    fi
    touch "$stamp"
  fi
}
