"""Inputs the workloads share: deterministic, so every run of every flavor sees the same bytes."""
import random


def text_file(path, size, seed=1):
    """SIZE bytes of word-like text (compressible like source code), the same for every call
    with the same SEED."""
    if path.exists() and path.stat().st_size == size:
        return
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(4000)]
    out, n = [], 0
    while n < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) + "\n"
        out.append(line)
        n += len(line)
    path.write_text("".join(out)[:size])
