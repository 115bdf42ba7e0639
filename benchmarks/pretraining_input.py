"""Pretraining input speed: the streaming pipeline against the offline TFRecord reader.

Both make ETC-base pretraining examples (long_seq_len 4096, global_seq_len 256, 640 MLM
predictions) from the generated English-like corpus (`synthetic_corpus`, the embedded
vocabulary):
  streaming   `data.streaming.make_streaming_dataset`: read, tokenize (tensorflow-text, in the
              graph), pack, mask (stateless random ops) while training
  tfrecord    `data.tfrecords.make_dataset` over shards `create_pretraining_data` wrote before
              (the conversion is timed apart, it is paid once per dupe pass)
Each is timed with the tf.data thread pool limited to one thread
(`Options().threading.private_threadpool_size = 1`: examples/s per input core) and with the
default pool (every core of the machine; this one is shared, the load average is recorded).
A pass first takes one batch (tracing, filling buffers), then times --batches batches.

The need of a training step: `flops.encoder_flops` for ETC-base at 4096 / 256 (3x the forward
pass) plus the MLM head at 640 predictions, against an assumed sustained accelerator throughput
(--accelerator_tflops, default 100 TFLOP/s: an A100 in bf16 at a good utilisation). Then
examples/s one accelerator consumes, and the input cores it needs at the one-thread rate.

  python benchmarks/pretraining_input.py            # about 2-3 minutes on 2 shared cores
Prints a table and writes JSON (default benchmarks/results/pretraining_input.json).
"""

import argparse
import os
import platform
import sys
import tempfile
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)


def _time_batches(dataset, batches):
  """(seconds for `batches` batches after the first, examples per batch)."""
  iterator = iter(dataset)
  first = next(iterator)
  size = int(first["token_ids"].shape[0])
  start = time.perf_counter()
  for _ in range(batches):
    next(iterator)
  return time.perf_counter() - start, size


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--documents", type=int, default=2000, help="generated corpus documents")
  parser.add_argument("--batch_size", type=int, default=4)
  parser.add_argument("--batches", type=int, default=20, help="timed batches per pass")
  parser.add_argument("--accelerator_tflops", type=float, default=100.0,
                      help="assumed sustained training throughput of one accelerator")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "pretraining_input.json"))
  args = parser.parse_args()

  import etc_realformer  # pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from etc_realformer import flops  # pylint: disable=g-import-not-at-top
  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import corpus as corpus_lib  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import pretraining_data  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import pretraining_examples as pe  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import streaming  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import synthetic_corpus  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import tfrecords  # pylint: disable=g-import-not-at-top
  from etc_realformer.data.tokenization import WordPieceTokenizer  # pylint: disable=g-import-not-at-top
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top

  config = pe.PretrainingDataConfig(long_seq_len=4096, global_seq_len=256,
                                    max_predictions_per_seq=640)
  vocab_file = pretraining_data.EMBEDDED_VOCAB
  rows = []
  with tempfile.TemporaryDirectory() as tmp:
    corpus = synthetic_corpus.write_corpus(os.path.join(tmp, "corpus.txt"),
                                           num_documents=args.documents, seed=0)
    start = time.perf_counter()
    summary = pretraining_data.convert_corpus(
        [corpus], os.path.join(tmp, "shards"), WordPieceTokenizer(vocab_file), config,
        log=lambda *_: None)
    conversion_seconds = time.perf_counter() - start
    written = summary["written"]
    files = tfrecords.expand_files(os.path.join(tmp, "shards", "*.tfrecord"))

    def one_thread(ds):
      options = tf.data.Options()
      options.threading.private_threadpool_size = 1
      return ds.with_options(options)

    for threads in (1, 0):
      pool = "1 thread" if threads == 1 else f"default ({os.cpu_count()} cores)"
      ds = streaming.make_streaming_dataset(corpus, vocab_file, config, args.batch_size,
                                            private_threadpool_size=threads)
      seconds, size = _time_batches(ds, args.batches)
      rows.append({"pipeline": "streaming", "threads": pool,
                   "examples_per_second": args.batches * size / seconds})
      ds = tfrecords.make_dataset(files, config, args.batch_size)
      seconds, size = _time_batches(one_thread(ds) if threads == 1 else ds, args.batches * 20)
      rows.append({"pipeline": "tfrecord", "threads": pool,
                   "examples_per_second": args.batches * 20 * size / seconds})
    # Tokenization: the graph's ids against the Python reference, on every corpus sentence.
    sentences = [s for d in corpus_lib.read_corpus([corpus]) for s in d.sentences]
    different = streaming.tokenization_differences(sentences, vocab_file)

  base = EtcConfig.from_file(os.path.join(_ROOT, "configs", "models", "base.yaml"))
  step_flops = (flops.encoder_flops(base, config.long_seq_len, config.global_seq_len)[
      "training_step"] + 3 * flops.mlm_head_flops(base, config.max_predictions_per_seq))
  needed = args.accelerator_tflops * 1e12 / step_flops
  per_core = next(r["examples_per_second"] for r in rows
                  if r["pipeline"] == "streaming" and r["threads"] == "1 thread")
  result = {
      "data_config": {"long_seq_len": 4096, "global_seq_len": 256,
                      "max_predictions_per_seq": 640},
      "corpus": {"documents": args.documents, "examples_per_epoch": written,
                 "sentences": len(sentences),
                 "sentences_tokenized_differently": len(different)},
      "offline_conversion_examples_per_second": written / conversion_seconds,
      "rows": rows,
      "etc_base_training_flops_per_example": step_flops,
      "assumed_accelerator_tflops": args.accelerator_tflops,
      "examples_per_second_per_accelerator": needed,
      "streaming_input_cores_per_accelerator": needed / per_core,
      "batch_size": args.batch_size, "timed_batches": args.batches,
      "load_average": list(os.getloadavg()), "cpu_count": os.cpu_count(),
      "machine": platform.machine(), "tensorflow": tf.__version__,
  }
  print(f"ETC-base pretraining examples (4096 long / 256 global / 640 predictions), "
        f"{written} per epoch of {args.documents} generated documents")
  print(f"{'pipeline':<11} {'tf.data threads':<20} {'examples/s':>11}")
  for row in rows:
    print(f"{row['pipeline']:<11} {row['threads']:<20} {row['examples_per_second']:>11.1f}")
  print(f"offline conversion (once): {result['offline_conversion_examples_per_second']:.1f} "
        "examples/s")
  print(f"ETC-base training step: {step_flops / 1e12:.2f} TFLOP per example; at "
        f"{args.accelerator_tflops:.0f} TFLOP/s sustained one accelerator takes {needed:.1f} "
        f"examples/s = {needed / per_core:.2f} streaming input cores")
  print(f"tokenization: {len(different)} of {len(sentences)} corpus sentences differ from the "
        "Python reference")
  atomic_write_json(args.output, result, sort_keys=False)
  print(f"wrote {args.output}")


if __name__ == "__main__":
  main()
