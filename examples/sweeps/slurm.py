"""A sweep on a SLURM cluster through dask-jobqueue (https://jobqueue.dask.org).

    pip install 'ssdkit[dask]' dask-jobqueue     # on the login node and on the workers
    python examples/sweeps/slurm.py

Each SLURM job is one Dask worker with one core: ssdkit runs are single-threaded. For PBS use
`PBSCluster` with the same arguments (and `resource_spec`), for SGE `SGECluster`, for LSF
`LSFCluster`. The table is the same as on a laptop for the same sweep seed (docs/sweeps.md).
"""

from dask.distributed import Client
from dask_jobqueue import SLURMCluster

import ssdkit

cluster = SLURMCluster(
    queue="normal",  # your partition
    cores=1,
    processes=1,
    memory="4GB",  # the mqsim-paper device takes about 0.6 GB
    walltime="01:00:00",
    job_extra_directives=["--job-name=ssdkit-sweep"],
)
cluster.scale(jobs=64)  # or cluster.adapt(minimum_jobs=0, maximum_jobs=256)

with Client(cluster) as client:
    table = ssdkit.sweep(
        "mqsim-paper",
        {"flow.0.queue_depth": [1, 2, 4, 8, 16, 32, 64, 128], "ftl.gc_policy": ["greedy", "fifo"]},
        overrides={"flow.0.requests": 1_000_000, "flow.0.read_fraction": 0.7},
        repeats=4,
        seed=1,
        executor=client,
        output="gc_policy.parquet",  # resumable: run the script again after an interruption
        # On the shared file system: each device (GC policy x repeat) is preconditioned once and
        # its eight queue depths load it.
        snapshot_dir="gc_policy.snapshots",
    )
print(table[table.op == "all"].groupby(["ftl.gc_policy", "flow.0.queue_depth"]).latency_p99_us.mean())
