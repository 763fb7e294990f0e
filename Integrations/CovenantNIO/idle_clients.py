#!/usr/bin/env python3
"""Idle RESP connections for redis.sh: opens N connections to a server on loopback, spread
over several source addresses (127.0.0.2, 127.0.0.3, ...: each has its own range of ephemeral
ports), says so, waits for a line on standard input, then wakes every connection with a PING
and counts the +PONG answers.

    python3 idle_clients.py PORT N [SECONDS]     # SECONDS: how long to wait for the answers

Prints "connected N" once all are connected, then (after the line on stdin) "answered K of N".
Exits 0 when all answered. Loopback only; every socket is closed at exit.
"""
import selectors
import socket
import sys
import time

IP_BIND_ADDRESS_NO_PORT = 24  # Linux: the port is chosen at connect(), per source address
PER_SOURCE = 5000


def main():
    port, count = int(sys.argv[1]), int(sys.argv[2])
    wait = float(sys.argv[3]) if len(sys.argv) > 3 else 120.0
    selector = selectors.DefaultSelector()
    sockets = []
    # Connect in batches, so the server's accept queue (backlog) is never flooded into retries.
    batch = 500
    for start in range(0, count, batch):
        pending = set()
        for index in range(start, min(count, start + batch)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
            s.bind(("127.0.0.%d" % (2 + index // PER_SOURCE), 0))
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            selector.register(s, selectors.EVENT_WRITE)
            pending.add(s)
            sockets.append(s)
        deadline = time.monotonic() + 60
        while pending:
            if time.monotonic() > deadline:
                print("connect timed out: %d pending" % len(pending), flush=True)
                return 1
            for key, _ in selector.select(timeout=1):
                s = key.fileobj
                error = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error:
                    print("connect failed: %s" % error, flush=True)
                    return 1
                selector.unregister(s)
                pending.discard(s)
    print("connected %d" % len(sockets), flush=True)
    sys.stdin.readline()  # the script measures the server, then wakes us

    received = {}
    for s in sockets:
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        selector.register(s, selectors.EVENT_READ)
        received[s] = b""
    answered = 0
    deadline = time.monotonic() + wait
    while answered < len(sockets) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=1):
            s = key.fileobj
            data = s.recv(64)
            received[s] += data
            if received[s] == b"+PONG\r\n" or not data:
                if data:
                    answered += 1
                selector.unregister(s)
    print("answered %d of %d" % (answered, len(sockets)), flush=True)
    for s in sockets:
        s.close()
    return 0 if answered == len(sockets) else 1


if __name__ == "__main__":
    sys.exit(main())
