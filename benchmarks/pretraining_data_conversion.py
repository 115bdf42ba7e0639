r"""Pretraining data conversion speed: one worker process against two, on the generated corpus.

  python benchmarks/pretraining_data_conversion.py                  # about 25 MB of text
  python benchmarks/pretraining_data_conversion.py --documents 5000 --workers 1,2

Writes the generated corpus as `--files` files, converts it (`convert_corpus`, `--shards`
shards, long_seq_len 512 as in pretrained/build_tiny_english.sh) once per number of workers into
a fresh directory, checks the records are the same, and prints documents/s and MB/s of corpus
text, with the CPU seconds used (on a busy machine the wall time depends on the load).
JSON: benchmarks/results/pretraining_data_conversion.json.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _cpu_seconds():
  """User + system CPU seconds of this process and its finished children (the workers)."""
  own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                        resource.RUSAGE_CHILDREN))
  return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--documents", type=int, default=28000)
  parser.add_argument("--files", type=int, default=4)
  parser.add_argument("--shards", type=int, default=4)
  parser.add_argument("--workers", default="1,2")
  parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results",
                                                       "pretraining_data_conversion.json"))
  args = parser.parse_args()

  import etc_realformer  # pylint: disable=g-import-not-at-top,unused-import
  from etc_realformer.data import pretraining_data  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import pretraining_examples as pe  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import synthetic_corpus  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tfrecords  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tokenization  # pylint: disable=g-import-not-at-top

  config = pe.PretrainingDataConfig(long_seq_len=512, global_seq_len=48,
                                    max_predictions_per_seq=80, max_cpc_per_seq=4)
  work = tempfile.mkdtemp(prefix="pretraining_data_conversion-")
  try:
    documents = synthetic_corpus.generate_documents(args.documents, seed=0)
    per_file = -(-len(documents) // args.files)
    inputs = []
    for i in range(args.files):
      path = os.path.join(work, f"corpus-{i}.txt")
      with open(path, "w", encoding="utf-8") as f:
        f.write(synthetic_corpus.corpus_text(documents[i * per_file:(i + 1) * per_file]))
      inputs.append(path)
    megabytes = sum(os.path.getsize(p) for p in inputs) / 1e6
    print(f"corpus: {len(documents)} documents, {megabytes:.1f} MB in {args.files} file(s); "
          f"{args.shards} shard(s)", flush=True)
    rows, first = [], None
    for workers in (int(w) for w in args.workers.split(",")):
      out = os.path.join(work, f"out-{workers}")
      start, cpu = time.perf_counter(), _cpu_seconds()
      summary = pretraining_data.convert_corpus(
          inputs, out, tokenization.WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB), config,
          num_shards=args.shards, num_workers=workers, log=lambda _: None)
      seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
      files = tfrecords.expand_files(os.path.join(out, "*.tfrecord"))
      records = [tfrecords.count_records([f]) for f in files]
      first = first or records
      row = {"workers": workers, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
             "documents_per_second": round(len(documents) / seconds, 1),
             "megabytes_per_second": round(megabytes / seconds, 3),
             "examples": summary["written"], "same_shard_sizes_as_first": records == first}
      rows.append(row)
      print(f"workers {workers}: {seconds:.1f} s, {row['documents_per_second']:.0f} documents/s, "
            f"{row['megabytes_per_second']:.2f} MB/s, {summary['written']} examples; "
            f"{cpu:.1f} CPU s (worker start-up included)", flush=True)
  finally:
    shutil.rmtree(work, ignore_errors=True)
  result = {"documents": len(documents), "megabytes": round(megabytes, 2), "files": args.files,
            "shards": args.shards, "data_config": {"long_seq_len": 512, "global_seq_len": 48,
                                                   "max_predictions_per_seq": 80},
            "cpus": os.cpu_count(), "python": platform.python_version(), "runs": rows}
  os.makedirs(os.path.dirname(args.output), exist_ok=True)
  with open(args.output, "w") as f:
    json.dump(result, f, indent=2)
  print(f"wrote {args.output}")


if __name__ == "__main__":
  main()
