#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/ from the tests' inputs.

  fuzz/make_corpus.py [RUN_DIR...]

Job files: jobs/examples/*.toml and the job texts of tests/jobs/test_job_spec.cpp; results: the
texts of tests/jobs/test_protocol.cpp; checkpoint and journal: the files of each RUN_DIR, the
run directory of a short run, the journal also cut into a few variants (torn, no records, one
record of each type, a damaged record). The committed ones come from fuzz/seed-job.toml (objective fuzz/seed-objective.py)
run with surrogate = "random", "gp", "libo", "jumbo" and "ablr" (the lbo surrogate's checkpoint
is 600 kB, too large for a seed), the gp run resumed once after `lbo add-task`. Files are named by their SHA-1,
as libFuzzer names what it adds, so running this again adds nothing twice.
"""
import hashlib
import pathlib
import re
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def raw_strings(path):
    return re.findall(r'R"\((.*?)\)"', path.read_text(), flags=re.S)


def quoted_strings(path):
    return [bytes(s, "utf-8").decode("unicode_escape") for s in re.findall(r'"((?:[^"\\\n]|\\.)*)"', path.read_text())]


def job_files():
    for toml in sorted((ROOT / "jobs" / "examples").glob("*.toml")):
        add("fuzz_job_file", toml.read_bytes())
    for text in raw_strings(ROOT / "tests" / "jobs" / "test_job_spec.cpp"):
        if "=" in text:
            add("fuzz_job_file", text)


def results():
    path = ROOT / "tests" / "jobs" / "test_protocol.cpp"
    for text in raw_strings(path):
        add("fuzz_result", text)
    for text in quoted_strings(path):
        if (text.startswith("{\"") or text.startswith("[") or text in ("{}", "not json")):
            add("fuzz_result", text)


def journal_records(data):
    """The framed records after the 8-byte header."""
    at, records = 8, []
    while at + 8 <= len(data):
        (length,) = struct.unpack_from("<I", data, at)
        records.append(data[at:at + 8 + length])
        at += 8 + length
    return records


def run_files(run_dir):
    journal = (run_dir / "journal.lbo").read_bytes()
    records = journal_records(journal)
    add("fuzz_journal", journal)
    add("fuzz_journal", journal[:-3])  # a torn tail
    add("fuzz_journal", journal[:8])   # no records
    # One of each record type (the type is the int32 after the payload's endianness byte).
    seen = set()
    for record in records:
        kind = record[9]
        if kind not in seen:
            seen.add(kind)
            add("fuzz_journal", journal[:8] + record)
    # A damaged record between two intact ones.
    if len(records) >= 3:
        damaged = bytearray(records[1])
        damaged[len(damaged) // 2] ^= 0xff
        add("fuzz_journal", journal[:8] + records[0] + bytes(damaged) + records[2])
    checkpoints = sorted(run_dir.glob("checkpoint.*.lbo"))
    for checkpoint in checkpoints:
        add("fuzz_checkpoint", checkpoint.read_bytes())


def main():
    job_files()
    results()
    for run_dir in sys.argv[1:]:
        run_files(pathlib.Path(run_dir))
    for folder in sorted(CORPUS.iterdir()):
        files = list(folder.iterdir())
        print(f"{folder.name}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
