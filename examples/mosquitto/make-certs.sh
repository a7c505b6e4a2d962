#!/usr/bin/env bash
# Make a room CA and the broker's TLS server certificate with openssl (docs/security.md).
#
# usage: make-certs.sh [options] --san NAME [--san NAME]...
#
#   -s, --san NAME   a name the clients use to reach the broker: a DNS name
#                    (broker.room.lan) or an IP address (192.168.1.10); repeat it,
#                    or give SANS="broker.room.lan 192.168.1.10" in the environment.
#                    A client refuses the broker unless the host it connects to is one
#                    of these. "DNS:x" and "IP:x" are taken as they are.
#   -d, --dir DIR    where the files go (default: ./certs)
#   --cn NAME        the server certificate's common name (default: the first SAN)
#   --ca-name NAME   the CA's common name (default: "poker room CA")
#   --days N         server certificate validity in days (default: 825)
#   --ca-days N      CA validity in days (default: 3650)
#   --new-ca         make a new CA although DIR/ca.key exists (the old one is kept as
#                    ca.crt.prev / ca.key.prev; every client then needs the new ca.crt)
#   -h, --help       this text
#
# Files in DIR: ca.key (the CA's private key: keep it off the network), ca.crt (copy it
# to every client), server.key and server.crt (for the broker). Keys are mode 600.
# Run again with an existing CA: only the server key and certificate are renewed
# (rotation; the previous ones are kept as server.*.prev), clients need no change.
set -euo pipefail

OPENSSL=${OPENSSL:-openssl}
dir=./certs
cn=""
ca_name="poker room CA"
days=825
ca_days=3650
new_ca=0
sans=()

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "make-certs.sh: $*" >&2; exit 2; }

while (($#)); do
    case $1 in
        -s|--san) [[ $# -ge 2 ]] || die "$1 needs a value"; sans+=("$2"); shift 2 ;;
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
[[ ${#sans[@]} -gt 0 ]] || die "no name given: pass --san broker.room.lan --san 192.168.1.10 (or SANS=...)"
[[ $days =~ ^[1-9][0-9]*$ ]] || die "--days must be a positive number of days, got '$days'"
[[ $ca_days =~ ^[1-9][0-9]*$ ]] || die "--ca-days must be a positive number of days, got '$ca_days'"
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
[[ -n $cn ]] || cn=${alt[0]#*:}
for value in "$cn" "$ca_name"; do
    [[ $value =~ ^[A-Za-z0-9\ ._:*-]+$ ]] || die "names may hold letters, digits, space and . _ : * - only, got '$value'"
done
san_line=$(IFS=,; echo "${alt[*]}")

umask 077
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/openssl.cnf" <<EOF
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
subjectAltName = $san_line
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
serial() { echo "0x$("$OPENSSL" rand -hex 16)"; }
run() { "$OPENSSL" "$@" 2>"$work/err" || { cat "$work/err" >&2; die "openssl $1 failed"; }; }

if [[ -e $dir/ca.key && -e $dir/ca.crt && $new_ca -eq 0 ]]; then
    echo "reusing the CA in $dir (ca.crt; --new-ca to replace it)"
else
    if [[ -e $dir/ca.key ]]; then
        mv -f "$dir/ca.key" "$dir/ca.key.prev"
        [[ ! -e $dir/ca.crt ]] || mv -f "$dir/ca.crt" "$dir/ca.crt.prev"
    fi
    run req -x509 "${ec[@]}" -config "$work/openssl.cnf" -extensions v3_ca \
        -subj "/CN=$ca_name" -set_serial "$(serial)" -days "$ca_days" \
        -keyout "$work/ca.key" -out "$work/ca.crt"
    mv "$work/ca.key" "$dir/ca.key"
    chmod 644 "$work/ca.crt"
    mv "$work/ca.crt" "$dir/ca.crt"
    echo "made a new CA: $dir/ca.crt (copy it to every client; keep ca.key offline)"
fi

run req -new "${ec[@]}" -config "$work/openssl.cnf" -subj "/CN=$cn" \
    -keyout "$work/server.key" -out "$work/server.csr"
run x509 -req -in "$work/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -set_serial "$(serial)" -days "$days" \
    -extfile "$work/openssl.cnf" -extensions v3_server -out "$work/server.crt"
run verify -CAfile "$dir/ca.crt" -purpose sslserver "$work/server.crt" >/dev/null
chmod 644 "$work/server.crt"
for f in server.key server.crt; do
    [[ ! -e $dir/$f ]] || mv -f "$dir/$f" "$dir/$f.prev"
done
# Reload the broker only after this script has finished (key and certificate must pair).
mv "$work/server.key" "$dir/server.key"
mv "$work/server.crt" "$dir/server.crt"

echo "server certificate: $dir/server.crt (key: $dir/server.key)"
echo "  names:   $san_line"
echo "  expires: $("$OPENSSL" x509 -in "$dir/server.crt" -noout -enddate | cut -d= -f2)"
echo "  sha256:  $("$OPENSSL" x509 -in "$dir/server.crt" -noout -fingerprint -sha256 | cut -d= -f2)"
