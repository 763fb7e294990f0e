#!/usr/bin/env python3
"""Opens N connections to 127.0.0.1:PORT, sends `GET /poll` on each (keep-alive), and waits for
every answer; prints `answered <count> of <N>`. Used by footprint.sh to hold N requests
suspended in a server at once.

    python3 longpoll_client.py PORT N [TIMEOUT_SECONDS]
"""
import asyncio
import sys

REQUEST = b"GET /poll HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


async def poll(port, opened, answered, limit):
    async with limit:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(REQUEST)
    await writer.drain()
    opened.append(1)
    try:
        status = await reader.readline()
        if status.startswith(b"HTTP/1.1 200"):
            answered.append(1)
    finally:
        writer.close()


async def main(port, count, timeout):
    opened, answered = [], []
    limit = asyncio.Semaphore(256)  # connections being set up at once
    tasks = [asyncio.create_task(poll(port, opened, answered, limit)) for _ in range(count)]
    done, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    errors = sum(1 for task in done if task.exception() is not None)
    print(f"answered {len(answered)} of {count} (opened {len(opened)}, errors {errors})", flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]),
                     float(sys.argv[3]) if len(sys.argv) > 3 else 120.0))
