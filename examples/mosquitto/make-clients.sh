#!/usr/bin/env bash
# Make the broker's client file (mosquitto's dynamic-security plugin) from a password file
# (docs/security.md).
#
# usage: make-clients.sh [PASSWD [CLIENTS]]    (default: ./passwd and ./clients.json; an
#                                               existing CLIENTS is replaced)
#
# PASSWD is a mosquitto password file as make-passwd.sh (or mosquitto_passwd) writes it:
# one "identity:$7$iterations$salt$hash" line per identity (PBKDF2-SHA512, mosquitto 2.0's
# default). Each identity becomes a client of the plugin with the same password hash and
# with its client id bound to it: the broker accepts identity X only with client id X, and
# refuses any other identity (or no identity at all) that sends X. This is what keeps one
# identity from taking another's session on mosquitto 2.0.11, where
# use_username_as_clientid can be abused by a CONNECT without a username.
#
# The file grants no topic (defaultACLAccess all false: every decision falls through to
# the shipped acl file) and names no administrator: nothing can change it over MQTT. The
# broker reads it when it starts: after a change, `systemctl restart mosquitto`.
# Written next to CLIENTS first, then renamed over it (mode 600); passwords never appear.
set -euo pipefail

die() { echo "make-clients.sh: $*" >&2; exit 2; }

case ${1:-} in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[[ $# -le 2 ]] || die "two arguments at most: the password file and the client file (see --help)"
passwd=${1:-./passwd}
out=${2:-./clients.json}
[[ -r $passwd ]] || die "cannot read the password file '$passwd' (make it with make-passwd.sh)"

declare -A seen=()
entries=()
users=()
lineno=0
while IFS= read -r line || [[ -n $line ]]; do
    lineno=$((lineno + 1))
    [[ -z $line || $line == \#* ]] && continue
    user=${line%%:*}
    hash=${line#*:}
    [[ $user != "$line" ]] || die "$passwd:$lineno: no ':' between identity and hash"
    [[ $user =~ ^[A-Za-z0-9_-]+$ ]] \
        || die "$passwd:$lineno: bad identity '$user' (letters, digits, _ and - only)"
    [[ -z ${seen[$user]:-} ]] || die "$passwd:$lineno: identity '$user' given twice"
    seen[$user]=1
    users+=("$user")
    # $7$<iterations>$<salt, base64 of 12 bytes>$<hash, base64 of 64 bytes>
    [[ $hash =~ ^\$7\$([1-9][0-9]*)\$([A-Za-z0-9+/]{16})\$([A-Za-z0-9+/]{86}==)$ ]] \
        || die "$passwd:$lineno: the hash of '$user' is not PBKDF2-SHA512 (\$7\$...): make it again with make-passwd.sh"
    iterations=${BASH_REMATCH[1]}
    salt=${BASH_REMATCH[2]}
    password=${BASH_REMATCH[3]}
    entries+=("$(printf '    {"username": "%s", "clientid": "%s", "password": "%s", "salt": "%s", "iterations": %s, "roles": [], "groups": []}' \
        "$user" "$user" "$password" "$salt" "$iterations")")
done <"$passwd"
[[ ${#entries[@]} -gt 0 ]] || die "no identity in '$passwd'"

umask 077
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
    echo '{'
    echo '  "defaultACLAccess": {"publishClientSend": false, "publishClientReceive": false, "subscribe": false, "unsubscribe": false},'
    echo '  "clients": ['
    last=$((${#entries[@]} - 1))
    for i in "${!entries[@]}"; do
        if ((i < last)); then echo "${entries[$i]},"; else echo "${entries[$i]}"; fi
    done
    echo '  ],'
    echo '  "groups": [],'
    echo '  "roles": []'
    echo '}'
} >"$tmp"
mv -f "$tmp" "$out"
trap - EXIT
echo "wrote $out: ${users[*]}"
