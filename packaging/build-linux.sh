#!/usr/bin/env bash
# Builds the Linux bundle from a fresh checkout, in one command:
#
#   packaging/build-linux.sh            # -> dist/gpu-companion-VERSION-linux-ARCH.tar.gz
#
# Steps: system packages (when root; else the apt-get line), a build venv with the project and
# PyInstaller, icons from the SVG master, the one-folder bundle, the .desktop entry validated, a
# --smoke-test of the bundle under Xvfb, the tarball; an AppImage too when `appimagetool` exists.
# Environment: BUNDLE_VENV (default build/bundle-venv), SKIP_SMOKE=1 to skip the start-up check.
set -euo pipefail
source "$(dirname "$0")/../scripts/bootstrap.sh"
cd "$REPO"

ensure_debs $APP_DEBS python3-venv binutils desktop-file-utils xvfb || exit 1

VENV="${BUNDLE_VENV:-$REPO/build/bundle-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
echo "== build venv: $VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
# Not editable: the bundle must collect the installed package and its resources.
"$VENV/bin/python" -m pip install -q "$REPO[bundle]"

VERSION="$("$VENV/bin/python" -c 'import gpu_companion; print(gpu_companion.__version__)')"
ARCH="$(uname -m)"
NAME="gpu-companion-$VERSION-linux-$ARCH"
STAGE="$REPO/dist/$NAME"
rm -rf "$STAGE" "$REPO/dist/gpu-companion" "$REPO/dist/$NAME.tar.gz"

echo "== icons"
QT_QPA_PLATFORM=offscreen "$VENV/bin/python" packaging/make_icons.py --out "$REPO/build/icons"

echo "== pyinstaller"
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$REPO/dist" --workpath "$REPO/build/pyinstaller" packaging/gpu-companion.spec

echo "== desktop integration files"
mv "$REPO/dist/gpu-companion" "$STAGE"
mkdir -p "$STAGE/share/applications"
cp packaging/gpu-companion.desktop "$STAGE/share/applications/"
cp -r "$REPO/build/icons/hicolor" "$STAGE/share/icons-hicolor"
install -m 0755 packaging/install-desktop-entry.sh "$STAGE/install-desktop-entry.sh"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$STAGE/share/applications/gpu-companion.desktop"
  echo "desktop-file-validate: ok"
fi

if [ "${SKIP_SMOKE:-0}" != 1 ]; then
  echo "== smoke test of the bundle"
  smoke_home="$(mktemp -d)"
  if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null; then
    dfile="$(mktemp)"
    Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$dfile" >/dev/null 2>&1 &
    xvfb_pid=$!
    for _ in $(seq 50); do [ -s "$dfile" ] && break; sleep 0.1; done
    display=":$(cat "$dfile")"; rm -f "$dfile"
    DISPLAY="$display" QT_QPA_PLATFORM=xcb GPU_COMPANION_HOME="$smoke_home" \
      "$STAGE/gpu-companion" --smoke-test || { kill "$xvfb_pid"; exit 1; }
    kill "$xvfb_pid"
  else
    GPU_COMPANION_HOME="$smoke_home" "$STAGE/gpu-companion" --smoke-test
  fi
  rm -rf "$smoke_home"
fi

echo "== tarball"
tar -C "$REPO/dist" -czf "$REPO/dist/$NAME.tar.gz" "$NAME"

if command -v appimagetool >/dev/null; then
  echo "== AppImage"
  appdir="$REPO/build/AppDir"
  rm -rf "$appdir" && mkdir -p "$appdir/usr"
  cp -r "$STAGE" "$appdir/usr/lib-gpu-companion"
  cp packaging/gpu-companion.desktop "$appdir/"
  cp "$REPO/build/icons/hicolor/256x256/apps/gpu-companion.png" "$appdir/gpu-companion.png"
  printf '#!/bin/sh\nexec "$(dirname "$(readlink -f "$0")")/usr/lib-gpu-companion/gpu-companion" "$@"\n' \
    >"$appdir/AppRun"
  chmod +x "$appdir/AppRun"
  ARCH="$ARCH" appimagetool --no-appstream "$appdir" "$REPO/dist/$NAME.AppImage"
else
  echo "(appimagetool not found: no AppImage, the tarball is the Linux bundle)"
fi

echo
echo "bundle:  $STAGE ($(du -sh "$STAGE" | cut -f1))"
echo "tarball: $REPO/dist/$NAME.tar.gz ($(du -h "$REPO/dist/$NAME.tar.gz" | cut -f1))"
