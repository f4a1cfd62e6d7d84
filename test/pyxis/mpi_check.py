#!/usr/bin/env python3
"""What an MPI job needs from its launch: a world, collectives, messages.

Run by mpi4py.bats in every task of `srun --mpi=pmix`; prints one line per
rank and exits non-zero at the first thing that does not work."""
import socket
import sys


def main():
    try:
        from mpi4py import MPI
    except Exception as e:  # noqa: BLE001 - any import failure is the answer
        print(f"cannot import mpi4py: {e!r}", flush=True)
        return 1
    world = MPI.COMM_WORLD
    me, n = world.Get_rank(), world.Get_size()
    where = socket.gethostname()
    stage = "start"
    try:
        stage = "barrier"
        world.Barrier()
        stage = "broadcast"
        token = world.bcast(("corral", n) if me == 0 else None, root=0)
        assert token == ("corral", n), token
        stage = "allreduce"
        total = world.allreduce(me + 1, op=MPI.SUM)
        assert total == n * (n + 1) // 2, total
        stage = "allgather"
        hosts = world.allgather(where)
        assert len(hosts) == n, hosts
        stage = "ring"
        right, left = (me + 1) % n, (me - 1) % n
        got = world.sendrecv(me, dest=right, source=left)
        assert got == left, (got, left)
        stage = "buffers"
        import numpy
        mine = numpy.arange(256, dtype=numpy.int64) * (me + 1)
        out = numpy.empty_like(mine)
        world.Allreduce(mine, out, op=MPI.SUM)
        assert (out == numpy.arange(256) * (n * (n + 1) // 2)).all()
        stage = "final barrier"
        world.Barrier()
    except Exception as e:  # noqa: BLE001
        print(f"rank {me}/{n} on {where}: FAILED at {stage}: {e!r}", flush=True)
        return 1
    print(f"rank {me}/{n} on {where}: ok", flush=True)
    if me == 0:
        print(f"library: {MPI.Get_library_version().splitlines()[0]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
