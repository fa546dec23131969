#!/usr/bin/env python3
"""tcp_proxy.py LISTEN_PORT TARGET_HOST:PORT: forwards every connection to 127.0.0.1:LISTEN_PORT
to the target, until killed. The spool's end-to-end test stands it between an agent and
railwatchd: killing it is a daemon outage (streams broken, connections refused) that leaves
the daemon and its store as they are. Standard library only."""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    port = int(sys.argv[1])
    host, target_port = sys.argv[2].rsplit(":", 1)

    async def handle(client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(target_port))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, up_writer), pipe(up_reader, client_writer))

    server = await asyncio.start_server(handle, "127.0.0.1", port, reuse_address=True)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
