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


def reads_fasta(reference, reads, length=20000, count=3000, read_length=300, seed=7):
    """A random genome of LENGTH bases (REFERENCE, FASTA) and COUNT reads of READ_LENGTH bases
    sampled from it with 2% substitutions (READS, FASTA): the same for every call with the same
    SEED."""
    if reference.exists() and reads.exists():
        return
    rng = random.Random(seed)
    genome = "".join(rng.choice("ACGT") for _ in range(length))
    reference.write_text(">ref\n" + "\n".join(genome[i:i + 60] for i in range(0, length, 60))
                         + "\n")
    out = []
    for i in range(count):
        p = rng.randrange(0, length - read_length)
        read = [b if rng.random() >= 0.02 else rng.choice("ACGT")
                for b in genome[p:p + read_length]]
        out.append(f">r{i}\n{''.join(read)}\n")
    reads.write_text("".join(out))


def alignments_sam(path, count=4000, length=100, reference=200000, seed=11):
    """COUNT single-end alignments of LENGTH random bases at sorted positions on one reference
    of REFERENCE bases, as SAM text (header, then one line per read): the same for every call
    with the same SEED."""
    if path.exists():
        return
    rng = random.Random(seed)
    out = ["@HD\tVN:1.6\tSO:coordinate\n", f"@SQ\tSN:chr1\tLN:{reference}\n"]
    for i, pos in enumerate(sorted(rng.randrange(1, reference - length) for _ in range(count))):
        seq = "".join(rng.choice("ACGT") for _ in range(length))
        qual = "".join(chr(33 + rng.randint(2, 40)) for _ in range(length))
        out.append(f"r{i}\t0\tchr1\t{pos}\t60\t{length}M\t*\t0\t0\t{seq}\t{qual}\n")
    path.write_text("".join(out))
