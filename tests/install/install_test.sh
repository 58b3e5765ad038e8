#!/usr/bin/env bash
# install_test.sh BUILD_DIR PYTHON PYTHON_DIR [CMAKE_OPTION...]: installs
# BUILD_DIR into a temporary prefix, moves the prefix (defaults must follow the
# binary, not a path compiled in), then from a directory outside both trees:
# builds and runs downstream/ against it (configured with the CMAKE_OPTIONs),
# runs the installed CLI on its installed defaults and the installed Python
# package.
set -euo pipefail
build=$(realpath "$1") python=$2 python_dir=$3
shift 3
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }
unset ISPSIM_PLATFORM_PATH ISPSIM_BINARY

cmake --install "$build" --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/prefix"
prefix=$work/prefix
mkdir "$work/elsewhere"
cd "$work/elsewhere"

# 1. find_package(ispsim) from a project of its own, linking a model library.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$here/downstream" -B downstream -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
      "${launcher[@]}" "$@" >/dev/null
cmake --build downstream >/dev/null
./downstream/read_one_page

# 2. The installed CLI finds its platforms, model and calibration in the prefix.
ispsim=$prefix/bin/ispsim
described=$("$ispsim" describe)
[[ $described == *"search path $prefix/share/ispsim/platforms)"* ]] ||
  fail "describe does not search $prefix/share/ispsim/platforms"
"$ispsim" run --platform memllm --trace "$prefix/share/ispsim/traces/samples/blend_small.trace" >/dev/null
"$ispsim" engine generate --prompt "The jury said" --tokens 2 --quant int16 --calib-tokens 64 >/dev/null

# 3. The installed Python package finds the installed CLI and data by itself.
PYTHONPATH="$prefix/$python_dir" "$python" -c '
import ispsim, os, sys
assert os.path.samefile(ispsim.binary(), sys.argv[1]), ispsim.binary()
assert len(ispsim.rows(ispsim.run("memllm", ispsim.data_path("traces/samples/blend_small.trace")))) == 1
' "$prefix/bin/ispsim"
[ "$(ls -A)" = downstream ] || fail "the working directory holds more than downstream/: $(ls -A)"
echo "install_test: ok"
