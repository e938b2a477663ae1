#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs blegate as a systemd service on Raspberry Pi OS / Debian (arm64, amd64).
#
#   sudo scripts/install.sh                      build (release, static Swift stdlib), install, enable, start
#   sudo scripts/install.sh --adapter-reset      ... and allow HCI adapter resets (CAP_NET_ADMIN)
#   sudo scripts/install.sh --kiosk              ... and open the wall full-screen when the desktop starts (Pi with a screen)
#   sudo scripts/install.sh --no-build --binary PATH   install a binary built elsewhere (cross-built; blegate-stream beside it goes too)
#   scripts/install.sh --root DIR ...            stage everything under DIR: no apt, no start (tests, images)
#   sudo scripts/install.sh --uninstall [--purge]      remove; --purge also deletes config, token, cache and the user
#
# Re-running is safe: the config and the token are never overwritten, the binary,
# unit and rules are replaced, and the service is restarted. See docs/deployment.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
project="$(dirname "$here")"

root=""
build=1
binary=""
deps=1
adapter_reset=0
kiosk=0
uninstall=0
purge=0

usage() { sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "install.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --root) [ $# -ge 2 ] || die "--root needs a directory"; root="$(cd "$2" 2>/dev/null && pwd)" || die "--root $2: no such directory"; shift ;;
        --root=*) root="$(cd "${1#--root=}" 2>/dev/null && pwd)" || die "$1: no such directory" ;;
        --no-build) build=0 ;;
        --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary="$2"; shift ;;
        --binary=*) binary="${1#--binary=}" ;;
        --no-deps) deps=0 ;;
        --adapter-reset) adapter_reset=1 ;;
        --kiosk) kiosk=1 ;;
        --uninstall) uninstall=1 ;;
        --purge) uninstall=1; purge=1 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
[ "$root" = "/" ] && root=""
staged=0; [ -n "$root" ] && staged=1
[ "$staged" = 1 ] || [ "$(id -u)" -eq 0 ] || die "run as root (sudo), or stage into a directory with --root DIR"

bin_path=/usr/local/bin/blegate
lean_path=/usr/local/bin/blegate-stream
conf_dir=/etc/blegate
state_dir=/var/lib/blegate
unit_dir=/etc/systemd/system
unit=$unit_dir/blegate.service
dropins=$unit_dir/blegate.service.d
rules=/etc/udev/rules.d/70-blegate.rules
doc_dir=/usr/local/share/doc/blegate
kiosk_bin=/usr/local/bin/blegate-wall-kiosk
kiosk_desktop=/etc/xdg/autostart/blegate-wall.desktop

say() { echo "install.sh: $*"; }
R() { printf '%s%s' "$root" "$1"; }
# Only when installing for real: services are started and udev is told.
live() { [ "$staged" = 0 ]; }

# Ids from the target's own user database (under --root the host's may differ).
uid_of() { awk -F: -v n="$1" '$1 == n { print $3 }' "$(R /etc/passwd)"; }
gid_of() { awk -F: -v n="$1" '$1 == n { print $3 }' "$(R /etc/group)"; }
root_opt=(); [ "$staged" = 1 ] && root_opt=(--root "$root")

if [ "$uninstall" = 1 ]; then
    if live; then
        systemctl disable --now blegate.service 2>/dev/null || true
    elif [ -e "$(R $unit)" ]; then
        systemctl --root="$root" disable blegate.service >/dev/null 2>&1 || true
    fi
    rm -f "$(R $unit)" "$(R $rules)" "$(R $bin_path)" "$(R $lean_path)" "$(R $kiosk_bin)" "$(R $kiosk_desktop)"
    rm -rf "$(R $dropins)" "$(R $doc_dir)"
    if [ "$purge" = 1 ]; then
        rm -rf "$(R $conf_dir)" "$(R $state_dir)"
        if [ -n "$(uid_of blegate)" ]; then userdel "${root_opt[@]}" blegate; fi
        if [ -n "$(gid_of blegate)" ]; then groupdel "${root_opt[@]}" blegate; fi
        say "removed blegate with its configuration, token, cache and user"
    else
        say "removed blegate; kept $conf_dir (config, token), $state_dir (cache) and the user blegate (--purge removes them)"
    fi
    if live; then
        systemctl daemon-reload
        udevadm control --reload 2>/dev/null || true
    fi
    exit 0
fi

# 1. Runtime dependencies (system libraries only: scripts/build-release.sh links in the
#    Swift runtime, libdbus-1 and SQLite; a binary built elsewhere may load these two
#    packages' libraries, and dbus needs libdbus-1-3 anyway).
if [ "$deps" = 1 ] && live; then
    packages=(bluez dbus libdbus-1-3 libsqlite3-0 ca-certificates rfkill iw)
    # The kiosk's browser: Raspberry Pi OS packages it as chromium-browser, Debian as chromium.
    if [ "$kiosk" = 1 ] && ! command -v chromium-browser >/dev/null 2>&1 && ! command -v chromium >/dev/null 2>&1; then
        if apt-cache show chromium-browser >/dev/null 2>&1; then packages+=(chromium-browser); else packages+=(chromium); fi
    fi
    missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
fi

# 2. The binary.
if [ "$build" = 1 ]; then
    [ -z "$binary" ] || die "--binary goes with --no-build"
    command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
    command -v swift >/dev/null 2>&1 || die "no Swift toolchain: install Swift 6, or build elsewhere and use --no-build --binary PATH"
    say "building blegate and blegate-stream (release, --static-swift-stdlib)"
    binary="$("$project/scripts/build-release.sh" | tail -n 1)/blegate"
fi
[ -n "$binary" ] || die "--no-build needs --binary PATH"
[ -f "$binary" ] && [ -x "$binary" ] || die "--binary $binary: not an executable file"
# scan and stream run in the lean executable beside blegate; without it they run in
# blegate itself (more memory, same behaviour).
lean="$(dirname "$binary")/blegate-stream"
[ -x "$lean" ] || { say "no blegate-stream beside $binary: scan and stream will run in blegate itself"; lean=""; }

# 3. User and groups: blegate, in bluetooth (what bluez's D-Bus policy grants).
if [ -z "$(gid_of bluetooth)" ]; then groupadd "${root_opt[@]}" --system bluetooth; fi
if [ -z "$(gid_of blegate)" ]; then groupadd "${root_opt[@]}" --system blegate; fi
if [ -z "$(uid_of blegate)" ]; then
    nologin=/usr/sbin/nologin; [ -x "$(R $nologin)" ] || [ "$staged" = 1 ] || nologin=/bin/false
    useradd "${root_opt[@]}" --system --gid blegate --groups bluetooth --home-dir "$state_dir" --no-create-home \
        --shell "$nologin" --comment "blegate heart-rate gateway" blegate
    say "created the system user blegate (groups blegate, bluetooth)"
else
    usermod "${root_opt[@]}" --append --groups bluetooth blegate
fi
uid="$(uid_of blegate)"; gid="$(gid_of blegate)"
[ -n "$uid" ] && [ -n "$gid" ] || die "could not create the user blegate in $(R /etc/passwd)"

# 4. Files.
install -D -m 0755 -o 0 -g 0 "$binary" "$(R $bin_path)"
if [ -n "$lean" ]; then install -D -m 0755 -o 0 -g 0 "$lean" "$(R $lean_path)"; else rm -f "$(R $lean_path)"; fi
say "installed $bin_path: \`blegate status\`, \`blegate workouts\` and the rest work from any directory"
# A shell that does not look in /usr/local/bin (sudo's secure_path, a trimmed PATH) cannot
# find it by name: say so, with the full path that always works.
case ":${PATH:-}:" in
    *:/usr/local/bin:*) ;;
    *) say "note: /usr/local/bin is not on this shell's PATH: run $bin_path, or add /usr/local/bin to PATH" ;;
esac
install -d -m 0755 -o 0 -g 0 "$(R $conf_dir)"
if [ -e "$(R $conf_dir/blegate.toml)" ]; then
    say "kept the existing $conf_dir/blegate.toml"
else
    install -m 0644 -o 0 -g 0 "$here/blegate.example.toml" "$(R $conf_dir/blegate.toml)"
    say "wrote $conf_dir/blegate.toml from scripts/blegate.example.toml"
fi
token="$(R $conf_dir/token)"
if [ -e "$token" ]; then
    chown "$uid:$gid" "$token"; chmod 0600 "$token"
else
    install -m 0600 -o "$uid" -g "$gid" /dev/null "$token"
    say "created an empty $conf_dir/token (mode 0600): put the backend's token in it"
fi
install -d -m 0700 -o "$uid" -g "$gid" "$(R $state_dir)"

# [bluetooth] adapter_reset = true in the config counts like --adapter-reset.
if awk '/^[[:space:]]*\[/ { s = $0; gsub(/[[:space:]\[\]]/, "", s) }
        s == "bluetooth" && /^[[:space:]]*adapter_reset[[:space:]]*=[[:space:]]*true([[:space:]]|#|$)/ { found = 1 }
        END { exit !found }' "$(R $conf_dir/blegate.toml)"; then
    adapter_reset=1
fi

install -D -m 0644 -o 0 -g 0 "$here/systemd/blegate.service" "$(R $unit)"
install -d -m 0755 "$(R $dropins)"
if [ "$adapter_reset" = 1 ]; then
    install -m 0644 -o 0 -g 0 "$here/systemd/adapter-reset.conf" "$(R $dropins/adapter-reset.conf)"
    say "adapter reset enabled: the service gets CAP_NET_ADMIN"
else
    rm -f "$(R $dropins/adapter-reset.conf)"
fi
# Exponential restart backoff where systemd knows it (254 and later).
systemd_version="$(systemctl --version 2>/dev/null | awk 'NR == 1 { print $2 }')"
if [ "${systemd_version:-0}" -ge 254 ] 2>/dev/null; then
    printf '%s\n' "# Written by install.sh: systemd $systemd_version has exponential restart backoff." \
        "[Service]" "RestartSteps=8" "RestartMaxDelaySec=5min" > "$(R $dropins/restart-backoff.conf)"
else
    rm -f "$(R $dropins/restart-backoff.conf)"
fi
rmdir "$(R $dropins)" 2>/dev/null || true
install -D -m 0644 -o 0 -g 0 "$project/udev/70-blegate.rules" "$(R $rules)"
install -D -m 0644 -o 0 -g 0 "$project/docs/deployment.md" "$(R $doc_dir/deployment.md)"
install -D -m 0644 -o 0 -g 0 "$project/docs/wall.md" "$(R $doc_dir/wall.md)"
# The wall at boot: the desktop session's autostart opens it full-screen (docs/wall.md).
if [ "$kiosk" = 1 ]; then
    install -D -m 0755 -o 0 -g 0 "$here/kiosk/blegate-wall-kiosk" "$(R $kiosk_bin)"
    install -D -m 0644 -o 0 -g 0 "$here/kiosk/blegate-wall.desktop" "$(R $kiosk_desktop)"
    say "kiosk: the wall opens full-screen when the desktop starts ($kiosk_desktop); boot to the desktop with auto-login (raspi-config, System Options)"
fi

# 5. Enable (and, for real, start).
if live; then
    systemctl daemon-reload
    udevadm control --reload 2>/dev/null || true
    udevadm trigger --action=add --subsystem-match=usb --subsystem-match=bluetooth 2>/dev/null || true
    systemctl enable --now bluetooth.service >/dev/null 2>&1 || say "warning: could not enable bluetooth.service (is bluez installed?)"
    systemctl enable blegate.service
    systemctl restart blegate.service
    say "blegate is running: systemctl status blegate; journalctl -u blegate -f; blegate doctor"
    [ -s "$token" ] || say "next: put the backend's token in $conf_dir/token and set [backend] url in $conf_dir/blegate.toml"
else
    systemctl --root="$root" enable blegate.service >/dev/null
    say "staged under $root (enabled, not started)"
fi
