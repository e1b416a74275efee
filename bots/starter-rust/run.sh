#!/bin/sh
# Runs from this directory for the whole match; build.sh made ./bot.
exec ./bot
