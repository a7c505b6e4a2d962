#!/usr/bin/env bash
# Make a room CA, the broker's TLS server certificate and the clients' certificates with
# openssl (docs/security.md).
#
# usage: make-certs.sh [options] [--san NAME]... [--client IDENTITY]... [--revoke IDENTITY]...
#
#   -s, --san NAME   a name the clients use to reach the broker: a DNS name
#                    (broker.room.lan) or an IP address (192.168.1.10); repeat it,
#                    or give SANS="broker.room.lan 192.168.1.10" in the environment.
#                    A client refuses the broker unless the host it connects to is one
#                    of these. "DNS:x" and "IP:x" are taken as they are. Without --san,
#                    the server certificate is left as it is.
#   -c, --client ID  a client certificate for the identity ID (table-t01, room, tv: the
#                    names of the ACL's `user` lines), CN = ID, for a broker that requires
#                    client certificates (mosquitto-mtls.conf); repeat it, or give
#                    CLIENTS="table-t01 room tv". Made again (renewed) if it exists.
#   --revoke ID      add the current certificate of identity ID to the revocation list
#                    (crl.pem) and remove its files; the broker refuses it after
#                    `systemctl reload mosquitto`
#   -d, --dir DIR    where the files go (default: ./certs)
#   --cn NAME        the server certificate's common name (default: the first SAN)
#   --ca-name NAME   the CA's common name (default: "poker room CA")
#   --days N         server and client certificate validity in days (default: 825)
#   --ca-days N      CA validity in days (default: 3650)
#   --new-ca         make a new CA although DIR/ca.key exists (the old one is kept as
#                    ca.crt.prev / ca.key.prev; every client then needs the new ca.crt)
#   -h, --help       this text
#
# Files in DIR: ca.key (the CA's private key: keep it off the network), ca.crt (copy it
# to every client), server.key and server.crt (for the broker), clients/ID.key and
# clients/ID.crt (one pair per identity: each to its own machine only), crl.pem (the
# revocation list, for the broker's crlfile) and the CA's records (index.txt, crlnumber).
# Keys are mode 600. Run again with an existing CA: only what is asked for is renewed
# (rotation; the previous files are kept as *.prev), clients need no change.
set -euo pipefail

OPENSSL=${OPENSSL:-openssl}
dir=./certs
cn=""
ca_name="poker room CA"
days=825
ca_days=3650
new_ca=0
sans=()
clients=()
revokes=()

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "make-certs.sh: $*" >&2; exit 2; }

while (($#)); do
    case $1 in
        -s|--san) [[ $# -ge 2 ]] || die "$1 needs a value"; sans+=("$2"); shift 2 ;;
        -c|--client) [[ $# -ge 2 ]] || die "$1 needs a value"; clients+=("$2"); shift 2 ;;
        --revoke) [[ $# -ge 2 ]] || die "$1 needs a value"; revokes+=("$2"); shift 2 ;;
        -d|--dir) [[ $# -ge 2 ]] || die "$1 needs a value"; dir=$2; shift 2 ;;
        --cn) [[ $# -ge 2 ]] || die "$1 needs a value"; cn=$2; shift 2 ;;
        --ca-name) [[ $# -ge 2 ]] || die "$1 needs a value"; ca_name=$2; shift 2 ;;
        --days) [[ $# -ge 2 ]] || die "$1 needs a value"; days=$2; shift 2 ;;
        --ca-days) [[ $# -ge 2 ]] || die "$1 needs a value"; ca_days=$2; shift 2 ;;
        --new-ca) new_ca=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
if [[ ${#sans[@]} -eq 0 && -n ${SANS:-} ]]; then
    read -r -a sans <<<"${SANS//,/ }"
fi
if [[ ${#clients[@]} -eq 0 && -n ${CLIENTS:-} ]]; then
    read -r -a clients <<<"${CLIENTS//,/ }"
fi
[[ ${#sans[@]} -gt 0 || ${#clients[@]} -gt 0 || ${#revokes[@]} -gt 0 ]] \
    || die "nothing to make: pass --san broker.room.lan --san 192.168.1.10 (or SANS=...) for the broker, --client table-t01 for a client"
[[ $days =~ ^[1-9][0-9]*$ ]] || die "--days must be a positive number of days, got '$days'"
[[ $ca_days =~ ^[1-9][0-9]*$ ]] || die "--ca-days must be a positive number of days, got '$ca_days'"
declare -A seen=()
for id in "${clients[@]}" "${revokes[@]}"; do
    [[ $id =~ ^[A-Za-z0-9_-]+$ ]] || die "bad identity '$id' (letters, digits, _ and - only)"
done
for id in "${clients[@]}"; do
    [[ -z ${seen[$id]:-} ]] || die "identity '$id' given twice"
    seen[$id]=1
done
for id in "${revokes[@]}"; do
    [[ -z ${seen[$id]:-} ]] || die "identity '$id' is both made and revoked"
    [[ -e $dir/clients/$id.crt ]] || die "no certificate to revoke: $dir/clients/$id.crt"
done
command -v "$OPENSSL" >/dev/null || die "openssl not found (apt-get install openssl)"

# Each SAN as DNS:name or IP:address.
alt=()
for san in "${sans[@]}"; do
    for name in ${san//,/ }; do
        case $name in
            DNS:?*|IP:?*) ;;
            *) if [[ $name =~ ^[0-9]+(\.[0-9]+){3}$ || $name == *:* ]]; then
                   name="IP:$name"
               else
                   name="DNS:$name"
               fi ;;
        esac
        [[ ${name#*:} =~ ^[A-Za-z0-9.:*-]+$ ]] || die "bad name '${name#*:}'"
        alt+=("$name")
    done
done
if [[ ${#alt[@]} -gt 0 && -z $cn ]]; then
    cn=${alt[0]#*:}
fi
for value in "$cn" "$ca_name"; do
    [[ -z $value || $value =~ ^[A-Za-z0-9\ ._:*-]+$ ]] \
        || die "names may hold letters, digits, space and . _ : * - only, got '$value'"
done
san_line=$(IFS=,; echo "${alt[*]:-}")

umask 077
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/openssl.cnf" <<CNF
[req]
distinguished_name = dn
[dn]
[v3_ca]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[v3_server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
${san_line:+subjectAltName = $san_line}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[v3_client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
# The CA's records, for the revocation list only (certificates are signed with x509 -req).
[ca]
default_ca = room_ca
[room_ca]
database = $dir/index.txt
crlnumber = $dir/crlnumber
certificate = $dir/ca.crt
private_key = $dir/ca.key
default_md = sha256
# A CRL past its next update makes the broker refuse every client: as long as the CA.
default_crl_days = $ca_days
CNF
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
serial() { echo "0x$("$OPENSSL" rand -hex 16)"; }
run() { "$OPENSSL" "$@" 2>"$work/err" || { cat "$work/err" >&2; die "openssl $1 failed"; }; }
# Move a file aside as FILE.prev (the previous one, kept for a rollback).
keep_prev() { [[ ! -e $1 ]] || mv -f "$1" "$1.prev"; }

if [[ -e $dir/ca.key && -e $dir/ca.crt && $new_ca -eq 0 ]]; then
    echo "reusing the CA in $dir (ca.crt; --new-ca to replace it)"
else
    if [[ -e $dir/ca.key ]]; then
        mv -f "$dir/ca.key" "$dir/ca.key.prev"
        [[ ! -e $dir/ca.crt ]] || mv -f "$dir/ca.crt" "$dir/ca.crt.prev"
        # The old CA's revocations mean nothing for the new one.
        for f in index.txt index.txt.attr crlnumber crl.pem; do keep_prev "$dir/$f"; done
    fi
    run req -x509 "${ec[@]}" -config "$work/openssl.cnf" -extensions v3_ca \
        -subj "/CN=$ca_name" -set_serial "$(serial)" -days "$ca_days" \
        -keyout "$work/ca.key" -out "$work/ca.crt"
    mv "$work/ca.key" "$dir/ca.key"
    chmod 644 "$work/ca.crt"
    mv "$work/ca.crt" "$dir/ca.crt"
    echo "made a new CA: $dir/ca.crt (copy it to every client; keep ca.key offline)"
fi
[[ -e $dir/index.txt ]] || : >"$dir/index.txt"
[[ -e $dir/crlnumber ]] || echo 01 >"$dir/crlnumber"

describe() {
    echo "  expires: $("$OPENSSL" x509 -in "$1" -noout -enddate | cut -d= -f2)"
    echo "  sha256:  $("$OPENSSL" x509 -in "$1" -noout -fingerprint -sha256 | cut -d= -f2)"
}

if [[ ${#alt[@]} -gt 0 ]]; then
    run req -new "${ec[@]}" -config "$work/openssl.cnf" -subj "/CN=$cn" \
        -keyout "$work/server.key" -out "$work/server.csr"
    run x509 -req -in "$work/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
        -set_serial "$(serial)" -days "$days" \
        -extfile "$work/openssl.cnf" -extensions v3_server -out "$work/server.crt"
    run verify -CAfile "$dir/ca.crt" -purpose sslserver "$work/server.crt" >/dev/null
    chmod 644 "$work/server.crt"
    for f in server.key server.crt; do keep_prev "$dir/$f"; done
    # Reload the broker only after this script has finished (key and certificate must pair).
    mv "$work/server.key" "$dir/server.key"
    mv "$work/server.crt" "$dir/server.crt"
    echo "server certificate: $dir/server.crt (key: $dir/server.key)"
    echo "  names:   $san_line"
    describe "$dir/server.crt"
fi

for id in "${clients[@]}"; do
    mkdir -p "$dir/clients"
    run req -new "${ec[@]}" -config "$work/openssl.cnf" -subj "/CN=$id" \
        -keyout "$work/$id.key" -out "$work/$id.csr"
    run x509 -req -in "$work/$id.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
        -set_serial "$(serial)" -days "$days" \
        -extfile "$work/openssl.cnf" -extensions v3_client -out "$work/$id.crt"
    run verify -CAfile "$dir/ca.crt" -purpose sslclient "$work/$id.crt" >/dev/null
    chmod 644 "$work/$id.crt"
    for f in "$id.key" "$id.crt"; do keep_prev "$dir/clients/$f"; done
    mv "$work/$id.key" "$dir/clients/$id.key"
    mv "$work/$id.crt" "$dir/clients/$id.crt"
    echo "client certificate for $id: $dir/clients/$id.crt (key: $dir/clients/$id.key)"
    describe "$dir/clients/$id.crt"
done

# Revoke a certificate file unless the CA's records have it revoked already.
revoke() {
    local serial
    serial=$("$OPENSSL" x509 -in "$1" -noout -serial | cut -d= -f2)
    if ! grep -q "^R.*[[:space:]]$serial[[:space:]]" "$dir/index.txt"; then
        run ca -config "$work/openssl.cnf" -revoke "$1"
    fi
}
for id in "${revokes[@]}"; do
    # The current certificate and the one it renewed (still valid until it expires).
    for f in "$dir/clients/$id.crt" "$dir/clients/$id.crt.prev"; do
        [[ ! -e $f ]] || revoke "$f"
    done
    for f in "$id.key" "$id.crt" "$id.key.prev" "$id.crt.prev"; do
        [[ ! -e $dir/clients/$f ]] || mv -f "$dir/clients/$f" "$dir/clients/$f.revoked"
    done
    echo "revoked the certificates of $id (kept as $dir/clients/$id.crt.revoked)"
done

# The revocation list, made again every time (the broker's crlfile must exist).
run ca -config "$work/openssl.cnf" -gencrl -out "$work/crl.pem"
chmod 644 "$work/crl.pem"
mv -f "$work/crl.pem" "$dir/crl.pem"
echo "revocation list: $dir/crl.pem ($(grep -c . "$dir/index.txt" || true) revoked)"
