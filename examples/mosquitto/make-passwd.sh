#!/usr/bin/env bash
# Create the broker's password file for the room's identities (docs/security.md).
#
# usage: make-passwd.sh [FILE]        (default: ./passwd; an existing FILE is replaced)
#
# Identities: $IDENTITIES, or "table-t01 room tv" (one table-<id> per table).
# Each password comes from the environment variable named after the identity,
# upper-cased, '-' as '_', plus _PASSWORD: TABLE_T01_PASSWORD, ROOM_PASSWORD,
# TV_PASSWORD. A password not in the environment is asked for on the terminal
# (twice). At least 8 characters; use long random ones (openssl rand -base64 18).
# Passwords reach mosquitto_passwd on its standard input, never on a command line,
# and the file is written next to FILE first, then renamed over it (mode 600).
set -euo pipefail

MOSQUITTO_PASSWD=${MOSQUITTO_PASSWD:-mosquitto_passwd}
MIN_LENGTH=8

die() { echo "make-passwd.sh: $*" >&2; exit 2; }

case ${1:-} in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[[ $# -le 1 ]] || die "one argument at most: the password file (see --help)"
file=${1:-./passwd}
read -r -a identities <<<"${IDENTITIES:-table-t01 room tv}"
[[ ${#identities[@]} -gt 0 ]] || die "IDENTITIES is empty"
command -v "$MOSQUITTO_PASSWD" >/dev/null \
    || [[ -x $MOSQUITTO_PASSWD ]] \
    || die "mosquitto_passwd not found (apt-get install mosquitto)"

declare -A seen=()
passwords=()
for user in "${identities[@]}"; do
    [[ $user =~ ^[A-Za-z0-9_-]+$ ]] || die "bad identity '$user' (letters, digits, _ and - only)"
    [[ -z ${seen[$user]:-} ]] || die "identity '$user' given twice"
    seen[$user]=1
    var="$(tr 'a-z-' 'A-Z_' <<<"$user")_PASSWORD"
    password=${!var:-}
    if [[ -z $password ]]; then
        [[ -t 0 ]] || die "no $var in the environment and no terminal to ask on"
        read -r -s -p "password for $user: " password; echo >&2
        read -r -s -p "again: " again; echo >&2
        [[ $password == "$again" ]] || die "the two passwords for $user differ"
    fi
    [[ ${#password} -ge $MIN_LENGTH ]] || die "the password for $user is shorter than $MIN_LENGTH"
    [[ $password != *$'\n'* ]] || die "the password for $user holds a line break"
    passwords+=("$password")
done

umask 077
tmp=$(mktemp "$file.XXXXXX")
trap 'rm -f "$tmp"' EXIT
for i in "${!identities[@]}"; do
    # Without -b, mosquitto_passwd reads the password (twice) from standard input.
    printf '%s\n%s\n' "${passwords[$i]}" "${passwords[$i]}" \
        | "$MOSQUITTO_PASSWD" "$tmp" "${identities[$i]}" >/dev/null \
        || die "mosquitto_passwd failed for ${identities[$i]}"
done
mv -f "$tmp" "$file"
trap - EXIT
echo "wrote $file: ${identities[*]}"
