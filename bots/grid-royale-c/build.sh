#!/bin/sh
# Builds bot.wasm (a wasm32-wasip1 command module) next to this script.
# Needs clang, lld (wasm-ld) and wasi-libc; on Debian 12:
#   apt-get install clang lld wasi-libc libclang-rt-dev-wasm32
set -eu
cd "$(dirname "$0")"
clang --target=wasm32-wasi -std=c11 -O2 -o bot.wasm bot.c
