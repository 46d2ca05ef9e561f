#!/usr/bin/env bash
# Install the card launcher firmware as a systemd service on Raspberry Pi OS (Bookworm or
# Trixie, any Pi with a 40-pin header).
#
#   sudo systemd/install.sh                 install or upgrade (safe to run again)
#   sudo systemd/install.sh --usb-gadget    also make the USB port a serial console (/dev/ttyGS0)
#   sudo systemd/install.sh --web [--web-tls]   also the phone panel on the home network
#   systemd/install.sh --dry-run            print every step, change nothing (no root needed)
#   sudo systemd/install.sh --uninstall     undo it; keeps /etc/launcher and /var/lib/launcher
#   sudo systemd/install.sh --uninstall --purge   ...and removes those and the user too
#
# See systemd/README.md for what each step does and why.

set -euo pipefail

SERVICE_USER=launcher
SERVICE_GROUPS=(gpio audio dialout)
PREFIX=/opt/launcher
VENV=$PREFIX/venv
SRC=$PREFIX/src
STATE_FILE=$PREFIX/install-state
CONFIG_DIR=/etc/launcher
CONFIG=$CONFIG_DIR/launcher.toml
STATE_DIR=/var/lib/launcher
UNIT_DIR=/etc/systemd/system
UNIT=$UNIT_DIR/launcher.service
PIGPIOD_DROPIN_DIR=$UNIT_DIR/pigpiod.service.d
PIGPIOD_DROPIN=$PIGPIOD_DROPIN_DIR/launcher.conf
# systemd's manager pings the SoC's watchdog: a hung kernel reboots. The BCM2835/2711/2712
# watchdog counts to about 15 s at most; systemd pings at half the interval.
WATCHDOG_DIR=/etc/systemd/system.conf.d
WATCHDOG_DROPIN=$WATCHDOG_DIR/launcher-watchdog.conf
WATCHDOG_SEC=10s
# ALSA's default device, named by the amplifier card's ID (its number depends on the display
# driver: a Pi 5 lists two HDMI cards first).
ASOUND_CONF=/etc/asound.conf
AMP_CARD=MAX98357A
BLOCK_BEGIN="# >>> launcher block, added by install.sh and removed by its --uninstall"
BLOCK_END="# <<< launcher block"
GADGET_MODULES="modules-load=dwc2,g_serial"
# The phone panel (--web): the service may answer the home network's private addresses, and
# avahi names it on the LAN; --web-tls makes a self-signed certificate for it.
SERVICE_DROPIN_DIR=$UNIT_DIR/launcher.service.d
WEB_DROPIN=$SERVICE_DROPIN_DIR/web.conf
AVAHI_SERVICE=/etc/avahi/services/launcher.service
WEB_CERT=$CONFIG_DIR/web.crt
WEB_KEY=$CONFIG_DIR/web.key
WEB_HOSTNAME=launcher

CHECKOUT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DRY_RUN=0
MODE=install
PURGE=0
USB_GADGET=0
WEB=0
WEB_TLS=0
MODEL=""
BOOT_DIR=""
ROOT=""

usage() {
    cat <<EOF
usage: $0 [--dry-run] [--usb-gadget] [--web [--web-tls]] [--model TEXT] [--boot-dir DIR]
          [--root DIR]
       $0 --uninstall [--purge] [--dry-run]

  --dry-run      print every step and change nothing
  --usb-gadget   serial console on the USB port (dtoverlay=dwc2, g_serial -> /dev/ttyGS0)
  --web          the phone panel (docs/web.md): aiohttp and avahi from apt, the service
                 let answer private addresses, [web] enabled in a new config, and the unit
                 named $WEB_HOSTNAME.local on the LAN (if its hostname is still raspberrypi)
  --web-tls      with --web: a self-signed certificate, $WEB_CERT, for HTTPS
  --uninstall    remove the service, the venv, the boot changes and their .launcher-backup
                 copies, and the groups the install created; keep config and state
  --purge        with --uninstall: also remove $CONFIG_DIR, $STATE_DIR and the user
  --model TEXT   act as if /proc/device-tree/model said TEXT (for dry runs off the Pi)
  --boot-dir DIR where config.txt and cmdline.txt are (default /boot/firmware, else /boot)
  --root DIR     with --dry-run: read this machine's facts (device-tree model, /etc/os-release,
                 the kernel's pinctrl parameters, the config, boot files) under DIR, not /
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --uninstall) MODE=uninstall ;;
        --purge) PURGE=1 ;;
        --usb-gadget) USB_GADGET=1 ;;
        --web) WEB=1 ;;
        --web-tls) WEB_TLS=1 ;;
        --model)
            [ $# -ge 2 ] || { usage >&2; exit 2; }
            MODEL=$2
            shift
            ;;
        --boot-dir)
            [ $# -ge 2 ] || { usage >&2; exit 2; }
            BOOT_DIR=$2
            shift
            ;;
        --root)
            [ $# -ge 2 ] || { usage >&2; exit 2; }
            ROOT=${2%/}
            shift
            ;;
        -h | --help) usage; exit 0 ;;
        *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ "$PURGE" = 1 ] && [ "$MODE" != uninstall ]; then
    echo "--purge only goes with --uninstall" >&2
    exit 2
fi
if [ "$WEB_TLS" = 1 ] && [ "$WEB" = 0 ]; then
    echo "--web-tls only goes with --web" >&2
    exit 2
fi
if [ -n "$ROOT" ] && [ "$DRY_RUN" = 0 ]; then
    echo "--root only goes with --dry-run" >&2
    exit 2
fi
# A --boot-dir without config.txt is a typo (or the boot partition is not mounted): planning
# edits to a file that is not there would report a success that did nothing.
if [ -n "$BOOT_DIR" ] && [ ! -f "$BOOT_DIR/config.txt" ]; then
    echo "install.sh: --boot-dir $BOOT_DIR has no config.txt (is it the boot partition, and is it mounted?)" >&2
    exit 2
fi

say() { printf '==> %s\n' "$*"; }

# Every change goes through run: printed always, executed unless --dry-run.
run() {
    local arg line="+"
    for arg in "$@"; do
        if [[ "$arg" =~ ^[A-Za-z0-9_./=:,@%+-]+$ ]]; then
            line+=" $arg"
        else
            line+=" '${arg//\'/\'\\\'\'}'"
        fi
    done
    printf '%s\n' "$line"
    if [ "$DRY_RUN" = 0 ]; then
        "$@"
    fi
}

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    echo "run as root (sudo $0 $*), or add --dry-run to see the steps" >&2
    exit 1
fi

# --- what machine is this ----------------------------------------------------------------

if [ -z "$MODEL" ] && [ -r "$ROOT/proc/device-tree/model" ]; then
    MODEL=$(tr -d '\0' <"$ROOT/proc/device-tree/model")
fi

is_pi() { [[ "$MODEL" == "Raspberry Pi"* ]]; }

# The Pi 5 family (5, 500, CM5): its header is on the RP1 chip, which pigpio cannot reach.
is_pi5() { [[ "$MODEL" =~ Raspberry\ Pi\ (5|500|Compute\ Module\ 5) ]]; }

CODENAME=""
if [ -r "$ROOT/etc/os-release" ]; then
    CODENAME=$(sed -n 's/^VERSION_CODENAME=//p' "$ROOT/etc/os-release" | tr -d '"' | head -n 1)
fi

# board.pin_factory of the config that will be used: the installed one, else the default.
# "auto" is lgpio on every Pi; pigpio is installed only when the config names it.
config_pin_factory() {
    local file=$ROOT$CONFIG
    [ -f "$file" ] || file=$CHECKOUT/launcher/default.toml
    sed -n 's/^[[:space:]]*pin_factory[[:space:]]*=[[:space:]]*"\([a-z]*\)".*/\1/p' "$file" |
        tail -n 1
}
PIN_FACTORY=$(config_pin_factory)
PIN_FACTORY=${PIN_FACTORY:-auto}
uses_pigpio() { [ "$PIN_FACTORY" = pigpio ]; }

# A key of a section of the installed config, or of the default where the installed one
# leaves it out.
config_value() {
    local file value
    for file in "$ROOT$CONFIG" "$CHECKOUT/launcher/default.toml"; do
        [ -f "$file" ] || continue
        value=$(awk -v want="[$1]" -v key="$2" '
            /^[[:space:]]*\[/ { section = $0; gsub(/[[:space:]]/, "", section); next }
            section == want {
                line = $0; sub(/#.*/, "", line); split(line, kv, "=")
                name = kv[1]; gsub(/[[:space:]]/, "", name)
                if (name == key) { v = kv[2]; gsub(/[[:space:]]/, "", v); print v; exit }
            }' "$file")
        if [ -n "$value" ]; then
            printf '%s' "$value"
            return
        fi
    done
}

# A [pins] key (-1: not wired).
config_pin() { config_value pins "$1"; }

# The outputs that must read low from power-on (hal/circuit.py, BOOT_LOW): config.txt makes
# them outputs driven low as soon as the Pi's firmware reads it, seconds before Linux runs.
BOOT_LOW_KEYS="motor_in1 motor_in2 motor_sleep rotator amp_enable rotator_in2 deadman"
boot_low_line() {
    local key pin pins=()
    for key in $BOOT_LOW_KEYS; do
        pin=$(config_pin "$key")
        if [[ "$pin" =~ ^[0-9]+$ ]]; then
            pins+=("$pin")
        fi
    done
    if [ "${#pins[@]}" -gt 0 ]; then
        printf 'gpio=%s=op,dl\n' "$(printf '%s\n' "${pins[@]}" | sort -n | paste -sd, -)"
    fi
}

# The version apt would install, or nothing when no repository has the package (pigpio on
# Trixie: "Package 'pigpio' has no installation candidate").
apt_candidate() {
    local candidate
    candidate=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | head -n 1) ||
        true
    if [ "$candidate" != "(none)" ]; then
        printf '%s' "$candidate"
    fi
}

# dtparam=strict_gpiod (released GPIO lines return to inputs) exists where the header's
# pinctrl driver has the parameter it sets: Raspberry Pi kernels since 6.6 of April 2024
# (raspberrypi/linux#6117 added strict_gpiod; #6150 renamed the module parameter to
# upstream's persist_gpio_outputs, which the dtparam sets to n on the kernel command line).
strict_gpiod_supported() {
    local driver param
    for driver in pinctrl_bcm2835 pinctrl_rp1; do
        for param in persist_gpio_outputs strict_gpiod; do
            if [ -e "$ROOT/sys/module/$driver/parameters/$param" ]; then
                return 0
            fi
        done
    done
    return 1
}

if [ -z "$BOOT_DIR" ]; then
    for dir in "$ROOT/boot/firmware" "$ROOT/boot"; do
        if [ -f "$dir/config.txt" ]; then
            BOOT_DIR=$dir
            break
        fi
    done
fi

# --- install state: what this script changed, so --uninstall undoes exactly that ----------

# Read under --root in a dry run, as the machine's other facts are.
state_get() {
    if [ -f "$ROOT$STATE_FILE" ]; then
        sed -n "s/^$1=//p" "$ROOT$STATE_FILE" | tail -n 1
    fi
}

state_set() {
    printf '+ record %s=%s in %s\n' "$1" "$2" "$STATE_FILE"
    if [ "$DRY_RUN" = 0 ]; then
        mkdir -p "$PREFIX"
        touch "$STATE_FILE"
        sed -i "/^$1=/d" "$STATE_FILE"
        printf '%s=%s\n' "$1" "$2" >>"$STATE_FILE"
    fi
}

# --- boot files ---------------------------------------------------------------------------

uses_gadget() { [ "$USB_GADGET" = 1 ] || [ "$(state_get usb_gadget)" = 1 ]; }

# The launcher's lines of config.txt, as one marked block at the end (last setting wins).
boot_block() {
    echo "$BLOCK_BEGIN"
    echo "[all]"
    echo "# End the scope of the overlay loaded above: what follows is the board's own"
    echo "dtoverlay="
    if strict_gpiod_supported; then
        echo "# A released GPIO line returns to an input: a dead launcher drives no motor"
        echo "dtparam=strict_gpiod"
    fi
    echo "# UART on GPIO 14/15 for the serial console (/dev/serial0)"
    echo "enable_uart=1"
    if is_pi5 && ! uses_gadget; then
        echo "# Pi 5: UART0 (/dev/ttyAMA0) on header pins 8/10; serial0 may be the debug port"
        echo "dtparam=uart0=on"
    fi
    echo "# MAX98357A I2S amplifier. no-sdmode: the firmware drives its SD pin (amp_enable);"
    echo "# without it the overlay drives GPIO 4 itself"
    echo "dtparam=audio=off"
    echo "dtoverlay=max98357a,no-sdmode"
    echo "# The motor driver's inputs, nSLEEP, the dead-man line and the amplifier: outputs"
    echo "# driven low from boot (the launcher's [pins]; the firmware takes them over)"
    boot_low_line
    if uses_gadget; then
        echo "# USB gadget serial console (/dev/ttyGS0)"
        echo "dtoverlay=dwc2"
    fi
    echo "$BLOCK_END"
}

remove_boot_block() {
    local file=$1
    if grep -qxF "$BLOCK_BEGIN" "$file"; then
        run sed -i "/^$BLOCK_BEGIN\$/,/^$BLOCK_END\$/d" "$file"
    fi
}

BACKED_UP=" "
BACKUPS=1  # --uninstall makes none: it removes those the install made
backup_once() {
    local file=$1
    if [ "$BACKUPS" = 1 ] && [ ! -e "$file.launcher-backup" ] &&
        [[ "$BACKED_UP" != *" $file "* ]]; then
        run cp -p "$file" "$file.launcher-backup"
        BACKED_UP+="$file "
    fi
}

# The .launcher-backup copies of the files install.sh edits, once the edits are undone.
remove_backups() {
    local file
    for file in "$ASOUND_CONF" ${BOOT_DIR:+"$BOOT_DIR/config.txt" "$BOOT_DIR/cmdline.txt"}; do
        if [ -e "$file.launcher-backup" ]; then
            run rm -f "$file.launcher-backup"
        fi
    done
}

# Put the marked block WANTED at the end of FILE, replacing an older one; returns 1 when
# FILE already had exactly that block. The first edit of a file keeps a .launcher-backup.
write_block() {
    local file=$1 wanted=$2
    if [ -f "$file" ] &&
        [ "$(sed -n "/^$BLOCK_BEGIN\$/,/^$BLOCK_END\$/p" "$file")" = "$wanted" ]; then
        say "$file already has the launcher block"
        return 1
    fi
    if [ -e "$file" ]; then
        backup_once "$file"
        remove_boot_block "$file"
    fi
    printf '+ append to %s:\n%s\n' "$file" "$wanted"
    if [ "$DRY_RUN" = 0 ]; then
        printf '%s\n' "$wanted" >>"$file"
    fi
}

write_boot_block() {
    if ! strict_gpiod_supported; then
        say "this kernel has no dtparam=strict_gpiod (no persist_gpio_outputs in" \
            "/sys/module/pinctrl_*): released GPIO lines keep their level. sudo apt" \
            "full-upgrade, reboot, and run install.sh again to add it"
    fi
    if write_block "$BOOT_DIR/config.txt" "$(boot_block)"; then
        REBOOT=1
    fi
}

# ALSA's default card is the amplifier, by its ID, whatever number it got.
asound_block() {
    echo "$BLOCK_BEGIN"
    echo "# The default ALSA device is the MAX98357A amplifier, named by its card ID: its card"
    echo "# number depends on the display driver (a Pi 5 lists its HDMI cards first)."
    echo "defaults.pcm.card $AMP_CARD"
    echo "defaults.ctl.card $AMP_CARD"
    echo "$BLOCK_END"
}

install_asound() {
    if [ ! -e "$ASOUND_CONF" ]; then
        state_set asound_created 1
    fi
    write_block "$ASOUND_CONF" "$(asound_block)" || true
}

watchdog_dropin() {
    echo "# Written by the card launcher's systemd/install.sh and removed by its --uninstall."
    echo "# systemd pings the SoC's hardware watchdog: if the kernel hangs, the Pi reboots."
    echo "# The BCM2835/2711/2712 watchdog counts to about 15 s at most."
    echo "[Manager]"
    echo "RuntimeWatchdogSec=$WATCHDOG_SEC"
}

install_watchdog() {
    local wanted
    wanted=$(watchdog_dropin)
    if [ -f "$WATCHDOG_DROPIN" ] && [ "$(cat "$WATCHDOG_DROPIN")" = "$wanted" ]; then
        say "$WATCHDOG_DROPIN exists"
        return
    fi
    run install -d -m 0755 "$WATCHDOG_DIR"
    printf '+ write %s:\n%s\n' "$WATCHDOG_DROPIN" "$wanted"
    if [ "$DRY_RUN" = 0 ]; then
        printf '%s\n' "$wanted" >"$WATCHDOG_DROPIN"
    fi
    # The manager reads system.conf.d when it (re)starts: re-execute it now.
    run systemctl daemon-reexec
}

cmdline_words() {
    local line
    read -r line <"$BOOT_DIR/cmdline.txt" || true
    printf '%s' "$line"
}

cmdline_has() { [[ " $(cmdline_words) " == *" $1 "* ]]; }

cmdline_add() {
    local cmdline=$BOOT_DIR/cmdline.txt
    if cmdline_has "$1"; then
        return
    fi
    backup_once "$cmdline"
    # cmdline.txt is one line; the token goes at its end.
    run sed -i "1s|\$| $1|" "$cmdline"
    REBOOT=1
}

cmdline_remove() {
    local cmdline=$BOOT_DIR/cmdline.txt
    if ! cmdline_has "$1"; then
        return
    fi
    backup_once "$cmdline"
    run sed -i -E "1s/(^| )$1( |\$)/\\1/; 1s/ +\$//" "$cmdline"
    REBOOT=1
}

# A login console on the UART would fight the launcher's own console for the port.
serial_console_token() {
    local word words
    read -r -a words <<<"$(cmdline_words)"
    for word in "${words[@]}"; do
        if [[ "$word" =~ ^console=(serial0|ttyAMA0|ttyS0), ]]; then
            printf '%s' "$word"
            return
        fi
    done
}

# --- install ------------------------------------------------------------------------------

install_packages() {
    local packages=(python3-venv python3-dev gcc python3-lgpio libasound2-dev alsa-utils)
    run apt-get update
    if uses_pigpio; then
        if [ -z "$(apt_candidate pigpio)" ]; then
            echo "install.sh: $CONFIG asks for pin_factory = \"pigpio\", but this Raspberry Pi" \
                "OS (${CODENAME:-unknown release}) has no pigpio package: set pin_factory =" \
                "\"auto\" (lgpio) there and run install.sh again" >&2
            exit 1
        fi
        packages+=(pigpio)
    fi
    if [ "$WEB" = 1 ]; then
        # Debian's aiohttp: the venv sees it (system site packages), pip builds nothing.
        packages+=(python3-aiohttp avahi-daemon)
        if [ "$WEB_TLS" = 1 ]; then
            packages+=(openssl)
        fi
    fi
    say "apt packages: ${packages[*]}"
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "${packages[@]}"
}

create_user() {
    local group created
    created=$(state_get created_groups)
    for group in "${SERVICE_GROUPS[@]}"; do
        if ! getent group "$group" >/dev/null; then
            run groupadd --system "$group"
            # Recorded, so that --uninstall removes only the groups it made.
            created="${created:+$created }$group"
            state_set created_groups "$created"
        fi
    done
    if id "$SERVICE_USER" >/dev/null 2>&1; then
        say "user $SERVICE_USER exists; making sure it is in ${SERVICE_GROUPS[*]}"
        run usermod --append --groups "$(IFS=,; echo "${SERVICE_GROUPS[*]}")" "$SERVICE_USER"
    else
        run useradd --system --user-group --no-create-home --home-dir "$STATE_DIR" \
            --shell /usr/sbin/nologin --groups "$(IFS=,; echo "${SERVICE_GROUPS[*]}")" \
            --comment "card launcher firmware" "$SERVICE_USER"
    fi
}

install_code() {
    [ -f "$CHECKOUT/pyproject.toml" ] || {
        echo "$CHECKOUT does not look like the launcher checkout (no pyproject.toml)" >&2
        exit 1
    }
    # A copy the service can read: the checkout may sit in a home folder (ProtectHome=).
    say "copy $CHECKOUT to $SRC"
    run rm -rf "$SRC.new"
    run mkdir -p "$SRC.new"
    printf '+ tar -C %s --exclude=.git --exclude=.venv ... -cf - . | tar -C %s -xf -\n' \
        "$CHECKOUT" "$SRC.new"
    if [ "$DRY_RUN" = 0 ]; then
        tar -C "$CHECKOUT" --exclude=.git --exclude=.venv --exclude=__pycache__ \
            --exclude=.pytest_cache --exclude=.ruff_cache --exclude=.hypothesis \
            --exclude='*.egg-info' --exclude=build --exclude=dist -cf - . |
            tar -C "$SRC.new" --no-same-owner -xf -
    fi
    run rm -rf "$SRC"
    run mv "$SRC.new" "$SRC"
    if [ -x "$VENV/bin/python" ]; then
        say "venv $VENV exists"
    else
        # System site packages: python3-lgpio comes from apt, not PyPI.
        run python3 -m venv --system-site-packages "$VENV"
    fi
    # Editable, so that the sound packs in $SRC/sounds are found next to the code.
    local extras=pi,audio
    if [ "$WEB" = 1 ]; then
        extras+=,web
    fi
    run "$VENV/bin/pip" install --disable-pip-version-check --upgrade --editable \
        "${SRC}[$extras]"
    # Bytecode now: the service cannot write __pycache__ under $SRC (ProtectSystem=strict), so
    # without it every start would compile every module again (python -m bench.startup).
    run "$VENV/bin/python" -m compileall -q "$SRC/launcher" "$SRC/hal"
    # A SHA-256 of every module and its bytecode, which `launcher doctor` checks: a file the
    # SD card truncated or altered is named (docs/RELIABILITY.md).
    run "$VENV/bin/python" -m launcher.tools.manifest write "$SRC"
}

install_config() {
    # Readable by all (it holds no secrets) so the self-test runs as the maker's own user;
    # writable by root only: the service sees /etc read-only anyway (ProtectSystem=strict).
    run install -d -m 0755 "$CONFIG_DIR"
    if [ -e "$ROOT$CONFIG" ]; then
        say "$CONFIG exists: left as it is (compare with $SRC/launcher/default.toml)"
    else
        run install -m 0644 "$CHECKOUT/launcher/default.toml" "$CONFIG"
        if [ "$USB_GADGET" = 1 ]; then
            run sed -i 's|^port = "/dev/serial0"|port = "/dev/ttyGS0"|' "$CONFIG"
        elif is_pi5; then
            # A Pi 5's /dev/serial0 may be its 3-pin debug connector (ttyAMA10), depending on
            # the firmware; header pins 8/10 are UART0 (dtparam=uart0=on, in config.txt).
            run sed -i 's|^port = "/dev/serial0"|port = "/dev/ttyAMA0"|' "$CONFIG"
        fi
    fi
    if [ -e "$ROOT$CONFIG" ] && is_pi5 && [ "$USB_GADGET" = 0 ] &&
        grep -q '^port = "/dev/serial0"' "$ROOT$CONFIG"; then
        say "on a Pi 5 set console.port = \"/dev/ttyAMA0\" in $CONFIG for header pins 8/10:" \
            "/dev/serial0 may be the debug connector (launcher doctor checks it)"
    fi
    run install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$STATE_DIR"
}

# The [web] section of a config the install writes now; an existing one is the owner's.
web_config_set() {
    local key=$1 value=$2
    run sed -i "/^\[web\]/,/^\[/ s|^$key = .*|$key = $value|" "$CONFIG"
}

install_web() {
    local fresh=$1
    run install -d -m 0755 "$SERVICE_DROPIN_DIR"
    run install -m 0644 "$CHECKOUT/systemd/launcher-web.conf" "$WEB_DROPIN"
    local port kind=http
    port=$(config_value web port)
    if [ "$WEB_TLS" = 1 ]; then
        kind=https
    fi
    run install -d -m 0755 "$(dirname "$AVAHI_SERVICE")"
    run install -m 0644 "$CHECKOUT/systemd/avahi-launcher.service" "$AVAHI_SERVICE"
    run sed -i -e "s|<port>[0-9]*</port>|<port>${port:-8080}</port>|" \
        -e "s|<type>_http\._tcp</type>|<type>_$kind._tcp</type>|" "$AVAHI_SERVICE"
    if [ "$WEB_TLS" = 1 ]; then
        if [ -e "$ROOT$WEB_CERT" ]; then
            say "$WEB_CERT exists: kept (delete it and run install.sh again for a new one)"
        else
            # Self-signed: a phone warns once, then the link is encrypted, not vouched for.
            run openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=$WEB_HOSTNAME.local" \
                -addext "subjectAltName=DNS:$WEB_HOSTNAME.local" -keyout "$WEB_KEY" -out "$WEB_CERT"
            run chgrp "$SERVICE_USER" "$WEB_KEY"
            run chmod 0640 "$WEB_KEY"
        fi
    fi
    if [ "$fresh" = 1 ]; then
        web_config_set enabled true
        if [ "$WEB_TLS" = 1 ]; then
            web_config_set tls_cert "\"$WEB_CERT\""
            web_config_set tls_key "\"$WEB_KEY\""
        fi
    elif [ "$WEB_TLS" = 1 ]; then
        say "$CONFIG exists: set enabled = true, tls_cert = \"$WEB_CERT\" and" \
            "tls_key = \"$WEB_KEY\" in its [web] section for the panel"
    else
        say "$CONFIG exists: set enabled = true in its [web] section for the panel"
    fi
    local host
    host=$(cat "$ROOT/etc/hostname" 2>/dev/null || true)
    if [ "$host" = raspberrypi ]; then
        # Raspberry Pi OS's default name: the panel is then http://launcher.local/.
        state_set renamed_host "$host"
        run hostnamectl set-hostname "$WEB_HOSTNAME"
    else
        say "the panel is named ${host:-this host}.local on the LAN (the hostname is the owner's)"
    fi
    run systemctl enable avahi-daemon.service
    run systemctl try-reload-or-restart avahi-daemon.service
}

install_units() {
    run install -m 0644 "$CHECKOUT/systemd/launcher.service" "$UNIT"
    if uses_pigpio; then
        run install -d -m 0755 "$PIGPIOD_DROPIN_DIR"
        run install -m 0644 "$CHECKOUT/systemd/pigpiod-launcher.conf" "$PIGPIOD_DROPIN"
        if [ "$DRY_RUN" = 1 ] || ! systemctl is-enabled --quiet pigpiod.service; then
            state_set pigpiod_enabled 1
        fi
    elif [ "$(state_get pigpiod_enabled)" = 1 ]; then
        # An earlier install enabled pigpiod; lgpio needs no daemon sampling the pins.
        run systemctl disable --now pigpiod.service
        state_set pigpiod_enabled 0
        run rm -f "$PIGPIOD_DROPIN"
    elif [ -e "$PIGPIOD_DROPIN" ]; then
        if systemctl is-enabled --quiet pigpiod.service 2>/dev/null; then
            # Someone else enabled it: without the drop-in it would start with the PCM clock.
            say "pigpiod is enabled, not by install.sh: its drop-in stays, so that it keeps" \
                "-t 0 and leaves the amplifier's PCM clock alone"
        else
            run rm -f "$PIGPIOD_DROPIN"
        fi
    fi
    run systemctl daemon-reload
    if uses_pigpio; then
        run systemctl enable --now pigpiod.service
    fi
    run systemctl enable launcher.service
    # An upgrade restarts a running service; a first install waits for the self-test.
    run systemctl try-restart launcher.service
}

install_boot() {
    if [ -z "$BOOT_DIR" ]; then
        say "no config.txt in /boot/firmware or /boot: not a Raspberry Pi OS boot partition," \
            "skipping the UART, I2S and USB gadget settings"
        return
    fi
    write_boot_block
    local token
    token=$(serial_console_token)
    if [ -n "$token" ]; then
        say "removing the login console $token from cmdline.txt (the launcher owns the UART)"
        state_set removed_console "$token"
        cmdline_remove "$token"
    fi
    if [ "$USB_GADGET" = 1 ]; then
        state_set usb_gadget 1
        cmdline_add "$GADGET_MODULES"
        # No getty on ttyGS0: the launcher's console owns that port.
        run systemctl mask serial-getty@ttyGS0.service
    fi
}

do_install() {
    REBOOT=0
    if is_pi; then
        local factory=lgpio
        if uses_pigpio; then
            factory=pigpio
        fi
        if uses_pigpio && is_pi5; then
            echo "install.sh: $CONFIG asks for pin_factory = \"pigpio\", which cannot reach the" \
                "GPIO of a $MODEL: set pin_factory = \"auto\" (lgpio) there and run install.sh" \
                "again" >&2
            exit 1
        fi
        say "this is a $MODEL on ${CODENAME:-an unknown release} ($factory pin factory)"
    else
        say "not a Raspberry Pi (${MODEL:-no /proc/device-tree/model}): installing anyway," \
            "but the service runs only on a Pi: here \`launcher run\` exits 2 at each start" \
            "(systemd gives up after 5); \`launcher play\` or \`launcher run --simulated\`" \
            "run the firmware on the simulated launcher"
    fi
    install_packages
    create_user
    install_code
    local fresh=1
    if [ -e "$ROOT$CONFIG" ]; then
        fresh=0
    fi
    install_config
    if [ "$WEB" = 1 ]; then
        install_web "$fresh"
    elif [ -e "$ROOT$WEB_DROPIN" ]; then
        say "no --web: the panel's network access and LAN name are removed"
        remove_web
    fi
    install_units
    if is_pi; then
        install_watchdog
        install_asound
    else
        say "not a Raspberry Pi: no hardware watchdog drop-in, no $ASOUND_CONF"
    fi
    install_boot
    say "installed. Next: sudo $VENV/bin/launcher doctor (what is still missing, with" \
        "the fix); sudo systemctl stop launcher; $VENV/bin/launcher selftest --config" \
        "$CONFIG; then sudo systemctl start launcher"
    if [ "$REBOOT" = 1 ]; then
        say "boot settings changed: reboot before the self-test (sudo reboot)"
    fi
}

# --- uninstall ----------------------------------------------------------------------------

remove_web() {
    run rm -f "$WEB_DROPIN" "$AVAHI_SERVICE"
    run rmdir --ignore-fail-on-non-empty "$SERVICE_DROPIN_DIR"
    local host
    host=$(state_get renamed_host)
    if [ -n "$host" ]; then
        run hostnamectl set-hostname "$host"
        state_set renamed_host ""
    fi
}

do_uninstall() {
    REBOOT=0
    BACKUPS=0
    local created_groups
    created_groups=$(state_get created_groups)
    if [ -e "$UNIT" ]; then
        run systemctl disable --now launcher.service
        run rm -f "$UNIT"
    fi
    if [ -e "$PIGPIOD_DROPIN" ]; then
        run rm -f "$PIGPIOD_DROPIN"
        run rmdir --ignore-fail-on-non-empty "$PIGPIOD_DROPIN_DIR"
    fi
    if [ -e "$ROOT$WEB_DROPIN" ] || [ -n "$(state_get renamed_host)" ]; then
        remove_web
    fi
    if [ "$(state_get pigpiod_enabled)" = 1 ]; then
        run systemctl disable --now pigpiod.service
    fi
    run systemctl daemon-reload
    if [ -e "$WATCHDOG_DROPIN" ]; then
        run rm -f "$WATCHDOG_DROPIN"
        run rmdir --ignore-fail-on-non-empty "$WATCHDOG_DIR"
        run systemctl daemon-reexec
    fi
    if [ -e "$ASOUND_CONF" ]; then
        remove_boot_block "$ASOUND_CONF"
        if [ "$(state_get asound_created)" = 1 ] &&
            { [ "$DRY_RUN" = 1 ] || ! grep -q '[^[:space:]]' "$ASOUND_CONF"; }; then
            run rm -f "$ASOUND_CONF"
        fi
    fi
    if [ -n "$BOOT_DIR" ]; then
        remove_boot_block "$BOOT_DIR/config.txt"
        local token
        token=$(state_get removed_console)
        if [ -n "$token" ]; then
            # Put the login console back where Raspberry Pi OS has it: first on the line.
            if ! cmdline_has "$token"; then
                run sed -i "1s|^|$token |" "$BOOT_DIR/cmdline.txt"
            fi
        fi
        if [ "$(state_get usb_gadget)" = 1 ]; then
            cmdline_remove "$GADGET_MODULES"
            run systemctl unmask serial-getty@ttyGS0.service
        fi
    fi
    # The edits are undone: the copies made before them go too.
    remove_backups
    run rm -rf "$PREFIX"
    if [ "$PURGE" = 1 ]; then
        run rm -rf "$CONFIG_DIR" "$STATE_DIR"
        if id "$SERVICE_USER" >/dev/null 2>&1; then
            run userdel "$SERVICE_USER"
        fi
    else
        say "kept $CONFIG_DIR, $STATE_DIR and the user $SERVICE_USER (--purge removes them)"
    fi
    # Only the groups the install created (gpio off Raspberry Pi OS): never the OS's own.
    local group
    for group in $created_groups; do
        if [ "$DRY_RUN" = 1 ] || getent group "$group" >/dev/null; then
            run groupdel "$group"
        fi
    done
    say "apt packages are left installed: other software may use them"
    if [ "$REBOOT" = 1 ]; then
        say "boot settings changed: reboot to apply"
    fi
}

if [ "$DRY_RUN" = 1 ]; then
    say "dry run: nothing will be changed"
fi
if [ "$MODE" = install ]; then
    do_install
else
    do_uninstall
fi
