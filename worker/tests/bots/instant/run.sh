#!/bin/sh
exec python3 -u bot.py
