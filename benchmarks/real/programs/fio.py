"""fio (https://github.com/axboe/fio) with `thread`: its jobs run as pthreads of one process;
the main thread and fio's helper threads read the jobs' run states and statistics (plain fields)
while the jobs write them, and remove the jobs' semaphores at the end. TSan prints ~47 warnings
a run."""
NAME = "fio"
CHECKOUT = "fio"
EXE = "fio"
WORKLOAD = "fio, thread, 4 randrw jobs of 4 MiB in 4 KiB blocks, psync"
ARGV = ["{exe}", "{data}/job.fio"]
# A job's files go in a directory the job file names: emptied before every run and replay.
RESET = "rm -rf {data}/files && mkdir {data}/files"


def build(cc, cxx):
    return [f"./configure --cc='{cc}' --extra-cflags='-g'", "make -j2 fio"]


def prepare(data):
    (data / "job.fio").write_text(
        "[global]\nthread\nioengine=psync\n"
        f"directory={data / 'files'}\n"
        "size=4m\nbs=4k\n[rw]\nrw=randrw\nnumjobs=4\n")
