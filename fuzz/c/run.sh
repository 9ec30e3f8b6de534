#!/bin/sh
# Builds the libFuzzer target for the compiled runtime (harness.c: the
# generated server's value reader and command parser, under ASan and
# UBSan) and fuzzes it for SECONDS (default 60) from the seeds in
# corpus/. Usage: fuzz/c/run.sh [SECONDS] [extra libFuzzer options...]
#   NABLA   the nabla binary (default: target/release/nabla, built if missing)
#   CLANG   the C compiler with libFuzzer (default: clang)
#   OUT     the build folder (default: target/fuzz-c)
# New inputs found go to OUT/corpus (corpus/ stays our seeds); a crash is
# written to OUT/crash-* and the script exits non-zero.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
nabla=${NABLA:-$root/target/release/nabla}
clang=${CLANG:-clang}
out=${OUT:-$root/target/fuzz-c}
if [ ! -x "$nabla" ]; then
  (cd "$root" && cargo build --release -p nabla)
fi
mkdir -p "$out/corpus"
"$nabla" c --server --only-c "$here/prog.fut" -o "$out/prog"
# f16 conversions need compiler-rt's builtins (clang calls __gnu_f2h_ieee).
builtins=$("$clang" -rtlib=compiler-rt -print-libgcc-file-name)
"$clang" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DNB_NO_RECYCLE -I"$out" "$here/harness.c" -lm "$builtins" -o "$out/harness"
cd "$out"
exec ./harness -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -dict="$here/server.dict" -artifact_prefix="$out/" "$@" "$out/corpus" "$here/corpus"
