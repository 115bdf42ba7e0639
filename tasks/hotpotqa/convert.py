r"""Converts an official HotpotQA file to TFRecord features for fine-tuning.

  python -m tasks.hotpotqa.convert --input_file=hotpot_train_v1.1.json \
      --vocab_file=vocab.txt --output_dir=features/train [--set long_seq_len=4096]

Prints how many records were read, kept, skipped (with reasons) and truncated. Fine-tuning
converts its training file by itself; this is for inspecting or preparing features separately.
"""

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data.tokenization import load_tokenizer
from tasks.hotpotqa import records
from tasks.hotpotqa.data import HotpotDataError
from tasks.hotpotqa.features import HotpotFeatureConfig

flags.DEFINE_string("input_file", None, "Official-format HotpotQA JSON array with labels.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary.")
flags.DEFINE_string("output_dir", None, "Where the shards and features.json go.")
flags.DEFINE_integer("num_shards", 1, "Number of TFRecord files.")
flags.DEFINE_multi_string("set", [], "Feature config override, e.g. --set long_seq_len=4096.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  if not (FLAGS.input_file and FLAGS.vocab_file and FLAGS.output_dir):
    raise app.UsageError("--input_file, --vocab_file and --output_dir are required")
  try:
    values = {}
    for item in FLAGS.set:
      key, sep, value = item.partition("=")
      if not sep:
        raise ValueError(f"--set {item!r}: expected <feature config key>=<integer>")
      values[key] = int(value)
    config = HotpotFeatureConfig(**values)
    tokenizer = OffsetTokenizer(load_tokenizer(vocab_file=FLAGS.vocab_file))
    info = records.convert_file(FLAGS.input_file, FLAGS.output_dir, tokenizer, FLAGS.vocab_file,
                                config, FLAGS.num_shards)
  except (HotpotDataError, ValueError, TypeError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  print(f"{info['examples']} example(s) from {info['records']} record(s); skipped: "
        f"{info['skipped'] or 'none'}")


if __name__ == "__main__":
  app.run(main)
