#!/bin/sh
# Run from the bot directory; -u keeps stdout unbuffered.
exec python3 -u bot.py
