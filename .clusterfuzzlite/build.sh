#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script. Uses only the standard variables:
# $CC $CXX $CFLAGS $CXXFLAGS (sanitizer and coverage flags), $LIB_FUZZING_ENGINE
# (link flag or library of the fuzzing engine), $SRC and $OUT. Builds every
# fuzz target of fuzz/ (all_fuzzers) and copies to $OUT, per target:
# <name>, <name>.dict, <name>.options and <name>_seed_corpus.zip.
# Never deletes sources. Also runnable outside Docker, e.g. (fuzz/README.md):
#   CC=clang-14 CXX=clang++-14 CFLAGS="-fsanitize=address,fuzzer-no-link -O1 -g" \
#   CXXFLAGS="$CFLAGS" LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out SRC=/tmp \
#   .clusterfuzzlite/build.sh
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${QS_CFL_BUILD_DIR:-$SRC_DIR/build/clusterfuzzlite}

cmake -S "$SRC_DIR" -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DQS_BUILD_FUZZERS=ON -DQS_FUZZ_LINKMAIN=OFF -DQS_FUZZ_LDFLAGS="$LIB_FUZZING_ENGINE" \
  -DQS_BUILD_TESTS=OFF -DQS_BUILD_BENCH=OFF -DQS_SANITIZE= -DQS_WERROR=OFF
cmake --build "$BUILD_DIR" --target all_fuzzers -j"${QS_CFL_JOBS:-$(nproc)}"

mkdir -p "$OUT"
for bin in "$BUILD_DIR"/fuzz/*_fuzzer; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  cp "$bin" "$OUT/$name"
  [ -f "$SRC_DIR/fuzz/$name.dict" ] && cp "$SRC_DIR/fuzz/$name.dict" "$OUT/"
  [ -f "$SRC_DIR/fuzz/$name.options" ] && cp "$SRC_DIR/fuzz/$name.options" "$OUT/"
  rm -f "$OUT/${name}_seed_corpus.zip"
  seeds=()
  for d in "$SRC_DIR/fuzz/corpus/$name" "$SRC_DIR/fuzz/regressions/$name"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  if [ ${#seeds[@]} -gt 0 ]; then
    (cd "$SRC_DIR" && find "${seeds[@]/#$SRC_DIR\//}" -type f ! -name '.*' -print | \
       zip -q -j "$OUT/${name}_seed_corpus.zip" -@) || true
  fi
done
ls -l "$OUT"
