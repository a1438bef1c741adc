#!/usr/bin/env python3
"""Program B of tests/bench/qos: a job whose locality changes, like the
U-Shape paper's ior-mpi-io between two checkpoints (Zhang, Davis, Jiang,
§4.3). Each of PROCS processes writes a checkpoint of CKPT_MIB MiB
sequentially in 1 MiB transfers, computes for PAUSE seconds, writes
RAND_MIB MiB of its own data file in 16 KiB transfers at shuffled
offsets (every block once: scattered at the servers), computes again, and
writes a second checkpoint. Requests are synchronous, one per process at
a time. Exit status 0 when every process finished, 1 otherwise; the
files are removed at the end.

usage: qos_seq_rand.py DIR PROCS CKPT_MIB RAND_MIB PAUSE_S
"""
import os
import random
import sys
import time

MIB = 1 << 20
BLOCK = 16 << 10


def rank(directory, p, ckpt_mib, rand_mib, pause):
    data = os.urandom(MIB)

    def checkpoint(name):
        fd = os.open(f"{directory}/b.{name}.{p}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            for i in range(ckpt_mib):
                os.pwrite(fd, data, i * MIB)
        finally:
            os.close(fd)

    checkpoint("ckpt1")
    time.sleep(pause)
    blocks = list(range(rand_mib * MIB // BLOCK))
    random.Random(p).shuffle(blocks)
    fd = os.open(f"{directory}/b.data.{p}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        piece = data[:BLOCK]
        for b in blocks:
            os.pwrite(fd, piece, b * BLOCK)
    finally:
        os.close(fd)
    time.sleep(pause)
    checkpoint("ckpt2")


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__.split("\n\n")[-1].strip())
    directory = sys.argv[1]
    procs, ckpt_mib, rand_mib = (int(x) for x in sys.argv[2:5])
    pause = float(sys.argv[5])
    children = []
    for p in range(procs):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                rank(directory, p, ckpt_mib, rand_mib, pause)
            except OSError as e:
                print(f"qos_seq_rand: process {p}: {e}", file=sys.stderr)
                code = 1
            os._exit(code)
        children.append(pid)
    failed = sum(1 for pid in children if os.waitpid(pid, 0)[1] != 0)
    for p in range(procs):
        for name in ("ckpt1", "data", "ckpt2"):
            try:
                os.unlink(f"{directory}/b.{name}.{p}")
            except FileNotFoundError:
                pass
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
