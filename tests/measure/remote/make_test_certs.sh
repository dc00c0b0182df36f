#!/usr/bin/env bash
# Writes the PEM files of the TLS tests into DIR: a CA, a worker certificate for 127.0.0.1/localhost
# and a job (client) certificate it signed, and a second "rogue" CA with a client certificate of its own.
set -euo pipefail
dir=$1
cd "$dir"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null; }
ca() {  # name
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=autotune test $1" 2>/dev/null
}
cert() {  # name ca extensions
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days 2 \
    -extfile "$1.ext" 2>/dev/null
}
ca ca
ca rogue-ca
cert worker ca "subjectAltName=IP:127.0.0.1,DNS:localhost"
cert job ca "extendedKeyUsage=clientAuth"
cert rogue-job rogue-ca "extendedKeyUsage=clientAuth"
