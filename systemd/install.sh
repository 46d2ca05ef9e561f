#!/usr/bin/env bash
# Install the card launcher firmware as a systemd service on Raspberry Pi OS (Bookworm).
#
#   sudo systemd/install.sh                 install or upgrade (safe to run again)
#   sudo systemd/install.sh --usb-gadget    also make the USB port a serial console (/dev/ttyGS0)
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
BLOCK_BEGIN="# >>> launcher block, added by install.sh and removed by its --uninstall"
BLOCK_END="# <<< launcher block"
GADGET_MODULES="modules-load=dwc2,g_serial"

CHECKOUT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DRY_RUN=0
MODE=install
PURGE=0
USB_GADGET=0
MODEL=""
BOOT_DIR=""

usage() {
    cat <<EOF
usage: $0 [--dry-run] [--usb-gadget] [--model TEXT] [--boot-dir DIR]
       $0 --uninstall [--purge] [--dry-run]

  --dry-run      print every step and change nothing
  --usb-gadget   serial console on the USB port (dtoverlay=dwc2, g_serial -> /dev/ttyGS0)
  --uninstall    remove the service, the venv and the boot changes; keep config and state
  --purge        with --uninstall: also remove $CONFIG_DIR, $STATE_DIR and the user
  --model TEXT   act as if /proc/device-tree/model said TEXT (for dry runs off the Pi)
  --boot-dir DIR where config.txt and cmdline.txt are (default /boot/firmware, else /boot)
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --uninstall) MODE=uninstall ;;
        --purge) PURGE=1 ;;
        --usb-gadget) USB_GADGET=1 ;;
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
        -h | --help) usage; exit 0 ;;
        *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ "$PURGE" = 1 ] && [ "$MODE" != uninstall ]; then
    echo "--purge only goes with --uninstall" >&2
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

if [ -z "$MODEL" ] && [ -r /proc/device-tree/model ]; then
    MODEL=$(tr -d '\0' </proc/device-tree/model)
fi

is_pi() { [[ "$MODEL" == "Raspberry Pi"* ]]; }

# pigpio drives Pi 1-4; the Pi 5 family (5, 500, CM5) has the RP1 chip that only lgpio knows.
needs_pigpio() {
    is_pi && ! [[ "$MODEL" =~ Raspberry\ Pi\ (5|500|Compute\ Module\ 5) ]]
}

if [ -z "$BOOT_DIR" ]; then
    for dir in /boot/firmware /boot; do
        if [ -f "$dir/config.txt" ]; then
            BOOT_DIR=$dir
            break
        fi
    done
fi

# --- install state: what this script changed, so --uninstall undoes exactly that ----------

state_get() {
    if [ -f "$STATE_FILE" ]; then
        sed -n "s/^$1=//p" "$STATE_FILE" | tail -n 1
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

# The launcher's lines of config.txt, as one marked block at the end (last setting wins).
boot_block() {
    echo "$BLOCK_BEGIN"
    echo "[all]"
    echo "# UART on GPIO 14/15 for the serial console (/dev/serial0)"
    echo "enable_uart=1"
    echo "# MAX98357A I2S amplifier; the firmware drives its SD pin itself (pins.amp_enable)"
    echo "dtparam=audio=off"
    echo "dtoverlay=max98357a,no-sdmode"
    if [ "$USB_GADGET" = 1 ] || [ "$(state_get usb_gadget)" = 1 ]; then
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
backup_once() {
    local file=$1
    if [ ! -e "$file.launcher-backup" ] && [[ "$BACKED_UP" != *" $file "* ]]; then
        run cp -p "$file" "$file.launcher-backup"
        BACKED_UP+="$file "
    fi
}

write_boot_block() {
    local config_txt=$BOOT_DIR/config.txt wanted
    wanted=$(boot_block)
    if [ "$(sed -n "/^$BLOCK_BEGIN\$/,/^$BLOCK_END\$/p" "$config_txt")" = "$wanted" ]; then
        say "$config_txt already has the launcher block"
        return
    fi
    backup_once "$config_txt"
    remove_boot_block "$config_txt"
    printf '+ append to %s:\n%s\n' "$config_txt" "$wanted"
    if [ "$DRY_RUN" = 0 ]; then
        printf '%s\n' "$wanted" >>"$config_txt"
    fi
    REBOOT=1
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
    if needs_pigpio; then
        packages+=(pigpio)
    fi
    say "apt packages: ${packages[*]}"
    run apt-get update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "${packages[@]}"
}

create_user() {
    local group
    for group in "${SERVICE_GROUPS[@]}"; do
        if ! getent group "$group" >/dev/null; then
            run groupadd --system "$group"
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
    run "$VENV/bin/pip" install --disable-pip-version-check --upgrade --editable \
        "${SRC}[pi,audio]"
}

install_config() {
    # Readable by all (it holds no secrets) so the self-test runs as the maker's own user;
    # writable by root only: the service sees /etc read-only anyway (ProtectSystem=strict).
    run install -d -m 0755 "$CONFIG_DIR"
    if [ -e "$CONFIG" ]; then
        say "$CONFIG exists: left as it is (compare with $SRC/launcher/default.toml)"
    else
        run install -m 0644 "$CHECKOUT/launcher/default.toml" "$CONFIG"
        if [ "$USB_GADGET" = 1 ]; then
            run sed -i 's|^port = "/dev/serial0"|port = "/dev/ttyGS0"|' "$CONFIG"
        fi
    fi
    run install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$STATE_DIR"
}

install_units() {
    run install -m 0644 "$CHECKOUT/systemd/launcher.service" "$UNIT"
    if needs_pigpio; then
        run install -d -m 0755 "$PIGPIOD_DROPIN_DIR"
        run install -m 0644 "$CHECKOUT/systemd/pigpiod-launcher.conf" "$PIGPIOD_DROPIN"
        if [ "$DRY_RUN" = 1 ] || ! systemctl is-enabled --quiet pigpiod.service; then
            state_set pigpiod_enabled 1
        fi
    elif [ -e "$PIGPIOD_DROPIN" ]; then
        run rm -f "$PIGPIOD_DROPIN"
    fi
    run systemctl daemon-reload
    if needs_pigpio; then
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
        if needs_pigpio; then
            factory=pigpio
        fi
        say "this is a $MODEL ($factory pin factory)"
    else
        say "not a Raspberry Pi (${MODEL:-no /proc/device-tree/model}): installing anyway," \
            "the firmware will fall back to the simulated board"
    fi
    install_packages
    create_user
    install_code
    install_config
    install_units
    install_boot
    say "installed. Next: sudo $VENV/bin/launcher doctor (what is still missing, with" \
        "the fix); sudo systemctl stop launcher; $VENV/bin/launcher selftest --config" \
        "$CONFIG; then sudo systemctl start launcher"
    if [ "$REBOOT" = 1 ]; then
        say "boot settings changed: reboot before the self-test (sudo reboot)"
    fi
}

# --- uninstall ----------------------------------------------------------------------------

do_uninstall() {
    REBOOT=0
    if [ -e "$UNIT" ]; then
        run systemctl disable --now launcher.service
        run rm -f "$UNIT"
    fi
    if [ -e "$PIGPIOD_DROPIN" ]; then
        run rm -f "$PIGPIOD_DROPIN"
        run rmdir --ignore-fail-on-non-empty "$PIGPIOD_DROPIN_DIR"
    fi
    if [ "$(state_get pigpiod_enabled)" = 1 ]; then
        run systemctl disable --now pigpiod.service
    fi
    run systemctl daemon-reload
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
    run rm -rf "$PREFIX"
    if [ "$PURGE" = 1 ]; then
        run rm -rf "$CONFIG_DIR" "$STATE_DIR"
        if id "$SERVICE_USER" >/dev/null 2>&1; then
            run userdel "$SERVICE_USER"
        fi
    else
        say "kept $CONFIG_DIR, $STATE_DIR and the user $SERVICE_USER (--purge removes them)"
    fi
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
