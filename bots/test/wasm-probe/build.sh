#!/bin/sh
# Builds bot.wasm, the submission convention's name, from probe.c: a
# wasm32-wasip1 command module, next to this script.
set -eu
cd "$(dirname "$0")"
clang --target=wasm32-wasi -O2 -o bot.wasm probe.c
