#!/usr/bin/env bash
# Adds GPU Companion to the application menu of the current user (no root): the .desktop entry
# pointing at this unpacked bundle, and the icons. Run it again after moving the folder;
# `--remove` takes the entry and icons away again.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
entry="$data/applications/gpu-companion.desktop"
if [ "${1:-}" = "--remove" ]; then
  rm -f "$entry"
  find "$data/icons/hicolor" -name 'gpu-companion.*' -delete 2>/dev/null || true
  echo "removed $entry"
  exit 0
fi
# Desktop Entry spec: a quoted Exec argument escapes " ` $ \ with a backslash and % as %%; the
# file's own string escaping then doubles every backslash again (TryExec gets only the latter).
exe="$here/gpu-companion"
quoted="$(printf '%s' "$exe" | sed -e 's/[\\"`$]/\\&/g' -e 's/\\/\\\\/g' -e 's/%/%%/g')"
mkdir -p "$data/applications"
while IFS= read -r line; do
  case "$line" in
    Exec=*) printf 'Exec="%s"\n' "$quoted" ;;
    TryExec=*) printf 'TryExec=%s\n' "${exe//\\/\\\\}" ;;
    *) printf '%s\n' "$line" ;;
  esac
done <"$here/share/applications/gpu-companion.desktop" >"$entry.tmp"
mv "$entry.tmp" "$entry"
mkdir -p "$data/icons/hicolor"
cp -r "$here/share/icons-hicolor/." "$data/icons/hicolor/"
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications" || true
echo "installed $entry"
