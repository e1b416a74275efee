#!/bin/sh
exec python3 bot.py
