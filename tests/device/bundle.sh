#!/usr/bin/env bash
# Prepare a device run: build optloop here and copy the binary with the shared
# libraries it needs (everything ldd names except the C library itself) into
# DIR/bin and DIR/lib, and make DIR/fla a one-commit git clone of a
# flash-linear-attention tree.
#
#   tests/device/bundle.sh DIR FLA_SOURCE
#
# FLA_SOURCE is a git directory (bare or not) holding flash-linear-attention;
# its HEAD is exported.  DIR must be git-ignored in this repository (it
# travels with `carry`); nothing of FLA is committed here.
set -euo pipefail
dir=${1:?usage: bundle.sh DIR FLA_SOURCE}
src=${2:?usage: bundle.sh DIR FLA_SOURCE}
root=$(cd "$(dirname "$0")/../.." && pwd)
make -C "$root" -s
mkdir -p "$dir/bin" "$dir/lib"
cp "$root/optloop" "$dir/bin/"
ldd "$root/optloop" | awk '$3 ~ /^\// {print $3}' |
	grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
	while read -r lib; do cp -L "$lib" "$dir/lib/"; done
if [ ! -d "$dir/fla/.git" ]; then
	rev=$(git -C "$src" rev-parse --short=8 HEAD)
	git -C "$src" archive --format=tar --prefix=fla/ HEAD | tar -x -C "$dir"
	git -C "$dir/fla" init -q -b main
	git -C "$dir/fla" add -A
	git -C "$dir/fla" -c user.name=optloop -c user.email=session@optloop.invalid \
		commit -qm "flash-linear-attention at upstream $rev"
fi
du -sh "$dir"
