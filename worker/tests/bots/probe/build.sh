#!/bin/sh
# Records what a build may do: write its own directory, but reach no network.
set -e
echo built > built.txt
if python3 -c 'import socket; socket.create_connection(("1.1.1.1", 53), timeout=2)' 2>/dev/null; then
    echo "network: reachable"
else
    echo "network: unreachable"
fi
id -u
