#!/bin/sh
# Runs once before the matches, from this directory, without network access.
set -e
CARGO_TARGET_DIR=target cargo build --release --offline --quiet
# Replace ./bot by a rename: copying over a binary that is running (say, a
# match already using this directory) fails with "Text file busy".
cp target/release/starter-bot "bot.new.$$"
mv -f "bot.new.$$" bot
