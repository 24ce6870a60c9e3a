# shellcheck shell=bash
# Sourced: sets $mirror to the Debian mirror this machine's apt uses (the first deb822 URIs: line, else the first
# one-line "deb" entry), so that scripts fetch from where the machine is configured to, or fails naming what it read.
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -1)
if [ -z "$mirror" ]; then
  echo "No Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list: configure apt first" >&2
  return 1 2>/dev/null || exit 1
fi
