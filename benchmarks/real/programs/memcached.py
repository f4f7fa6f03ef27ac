"""memcached (https://github.com/memcached/memcached): a server with worker threads (libevent,
one per -t), connections handed to them through per-thread queues, items in a shared hash table
under striped item locks, LRU maintainer and crawler threads; driven by a local client (4
connections of set/get, then `shutdown`)."""
import socket
import time
from concurrent.futures import ThreadPoolExecutor

NAME = "memcached"
CHECKOUT = "memcached"
EXE = "memcached"
WORKLOAD = "memcached -t 4, 4 clients x 300 set+get, then shutdown"
ARGV = ["{exe}", "-t", "4", "-p", "{port}", "-U", "0", "-l", "127.0.0.1", "-u", "root", "-A",
        "-m", "64"]
# real.py's client drives every replay too; a replay that loses the schedule waits for requests
# that the client has already sent: a few candidates, each given little time (see RESULTS.md).
# The analysis takes about 4 minutes and gives 25-40 distinct pairs of lines (257 candidates,
# most of them slab items racing at one pair): 60 candidates, one replay each, one at a time.
DETECT_ARGS = ["--max-candidates", "60", "--fallbacks", "0", "--replay-timeout", "10"]
DETECT_TIMEOUT = 900.0
CONNECTIONS = 4
REQUESTS = 300


def build(cc, cxx):
    return ["./autogen.sh", f"./configure CC='{cc}' CFLAGS='-O2 -g'", "make -j2 memcached"]


def prepare(data):
    pass


def connect(port, deadline, alive):
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=60)
        except OSError:
            if time.monotonic() > deadline or not alive():
                raise
            time.sleep(0.05)


def expect(s, ending):
    buf = b""
    while not buf.endswith(ending):
        chunk = s.recv(65536)
        if not chunk:
            raise OSError(f"connection closed, waiting for {ending!r} after {buf[-80:]!r}")
        buf += chunk
    return buf


def session(s, n):
    with s:
        for i in range(REQUESTS):
            key = f"k{(n * 7 + i) % 97}"
            value = f"v{n}-{i}" * (1 + i % 5)
            s.sendall(f"set {key} 0 0 {len(value)}\r\n{value}\r\n".encode())
            expect(s, b"STORED\r\n")
            s.sendall(f"get {key}\r\n".encode())
            expect(s, b"END\r\n")


def client(port, alive=lambda: True):
    """Drives the server on PORT (waiting up to 60 s for it to listen, while ALIVE() holds: the
    server process being waited for still runs), then shuts it down."""
    deadline = time.monotonic() + 60
    # Connected one after the other, then driven at once: memcached accepts them in that order and
    # hands them to its workers round robin, so each worker serves the same session (the same
    # bytes) in the recorded run and in every replay, whose reads get their recorded counts.
    sockets = [connect(port, deadline, alive) for _ in range(CONNECTIONS)]
    with ThreadPoolExecutor(CONNECTIONS) as pool:
        for f in [pool.submit(session, s, n) for n, s in enumerate(sockets)]:
            f.result()
    with connect(port, deadline, alive) as s:
        s.sendall(b"shutdown\r\n")
        try:
            s.recv(100)
        except OSError:
            pass
