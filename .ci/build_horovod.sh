#!/usr/bin/env bash
# Installs Horovod 0.28.1 into .venv, built from its source distribution against the installed
# TensorFlow. 0.28.1 is the newest release and its XLA op file (xla_mpi_ops.cc) does not compile
# against TensorFlow 2.21 (it needs XLA headers the TensorFlow wheel does not ship), so that one
# file is dropped from the build; only Horovod's XLA custom-call ops are lost. See
# docs/distributed_training.md, "Installing Horovod".
#
# The built wheel is kept in a cache folder (HOROVOD_WHEEL_CACHE, default
# ~/.cache/etc-realformer/wheels) keyed by the TensorFlow version, so later set-ups install it in
# seconds instead of compiling for about 8 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export TF_USE_LEGACY_KERAS=1  # horovod.tensorflow.keras works with tf-keras (Keras 2) only

PY=.venv/bin/python
HVD_VERSION=0.28.1
TF_VERSION=$("$PY" -c "import importlib.metadata as m; print(m.version('tensorflow'))")
CACHE=${HOROVOD_WHEEL_CACHE:-"$HOME/.cache/etc-realformer/wheels"}/tf-$TF_VERSION
mkdir -p "$CACHE"

if "$PY" -c "import horovod.tensorflow.keras" >/dev/null 2>&1; then
  echo "== horovod already installed: $("$PY" -c 'import horovod; print(horovod.__version__)')"
  exit 0
fi

wheel=$(ls "$CACHE"/horovod-"$HVD_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  for tool in cmake g++; do
    command -v "$tool" >/dev/null || { echo "building horovod needs $tool on PATH" >&2; exit 1; }
  done
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "== building horovod $HVD_VERSION from source against tensorflow $TF_VERSION (about 8 minutes on 2 cores)"
  "$PY" -m pip download --quiet --no-deps --no-binary :all: "horovod==$HVD_VERSION" -d "$work"
  tar -xzf "$work"/horovod-"$HVD_VERSION".tar.gz -C "$work"
  src="$work/horovod-$HVD_VERSION"
  cmake_file="$src/horovod/tensorflow/CMakeLists.txt"
  grep -q "xla_mpi_ops.cc" "$cmake_file" || { echo "xla_mpi_ops.cc not found in $cmake_file" >&2; exit 1; }
  sed -i '/xla_mpi_ops\.cc/d' "$cmake_file"
  HOROVOD_WITH_TENSORFLOW=1 HOROVOD_WITHOUT_PYTORCH=1 HOROVOD_WITHOUT_MXNET=1 \
  HOROVOD_WITH_GLOO=1 HOROVOD_WITHOUT_MPI=1 MAKEFLAGS="-j$(nproc)" \
    "$PY" -m pip wheel --quiet --no-build-isolation --no-deps "$src" -w "$work/dist"
  cp "$work"/dist/horovod-*.whl "$CACHE"/
  wheel=$(ls "$CACHE"/horovod-"$HVD_VERSION"-*.whl | head -n 1)
  echo "== cached $wheel"
else
  echo "== installing horovod from the wheel cache: $wheel"
fi
"$PY" -m pip install --quiet --no-deps "$wheel"
"$PY" -c "import horovod.tensorflow.keras as hvd; import horovod; print('horovod', horovod.__version__, 'ok')" 2>/dev/null
