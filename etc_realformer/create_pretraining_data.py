r"""Converts a text corpus into pretraining TFRecord shards (whole-word MLM + CPC).

  python -m etc_realformer.create_pretraining_data --input='corpus/*.txt' \
      --vocab_file=vocab.txt --output_dir=data/pretrain --long_seq_len=4096 --num_shards=8 \
      --num_workers=2

Input: plain text (one sentence per line, a blank line between documents) or JSON Lines with a
`text` field (split into sentences); `.gz` works for both. Prints documents, sentences,
examples written and every reason records were skipped; writes data_config.json next to the
shards for the trainer, and a copy of the vocabulary (vocab.txt or vocab.model) that the
pretraining run passes on to its final encoder, so fine-tuning from it finds its vocabulary.

Part k of `--num_shards` parts of the input becomes shard k, converted by `--num_workers`
processes (the records do not depend on how many). Each finished shard gets a done file; the
same command run again reuses a finished conversion, or converts only the shards a stopped run
left (etc_realformer.data.pretraining_data).
"""

from absl import app
from absl import flags

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from etc_realformer.data import pretraining_data
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data.tokenization import load_tokenizer

_DEFAULTS = pe.PretrainingDataConfig()
flags.DEFINE_list("input", None, "Corpus files or glob patterns (comma-separated).")
flags.DEFINE_string("output_dir", None, "Where the shards and data_config.json go.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocab (BERT layout). Default: the "
                    "embedded vocab if --spm_model_file is not given.")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model instead of a WordPiece vocab.")
flags.DEFINE_bool("lower_case", True, "Lower-case before WordPiece.")
flags.DEFINE_integer("num_shards", 1, "Output shards (= parts of the input).")
flags.DEFINE_integer("num_workers", 1, "Processes converting the shards (the records do not "
                     "depend on it).")
flags.DEFINE_string("tfds_data_dir", None, "Data directory of TensorFlow Datasets inputs "
                    "(passed to the corpus reader when given).")
flags.DEFINE_integer("seed", 0, "Masking seed.")
flags.DEFINE_integer("min_sentences", 1, "Skip documents with fewer sentences.")
flags.DEFINE_integer("dupe_factor", 1, "Passes over the corpus, each masked with its own seed.")
for _field in ("long_seq_len", "global_seq_len", "max_predictions_per_seq", "max_cpc_per_seq",
               "cpc_sentence_len"):
  flags.DEFINE_integer(_field, getattr(_DEFAULTS, _field), f"PretrainingDataConfig.{_field}")
flags.DEFINE_float("masked_lm_prob", _DEFAULTS.masked_lm_prob, "Share of pieces to predict.")
flags.DEFINE_float("cpc_prob", _DEFAULTS.cpc_prob, "Share of sentences hidden for CPC.")
flags.DEFINE_bool("pack_documents", _DEFAULTS.pack_documents, "Several documents per row.")
flags.mark_flags_as_required(["input", "output_dir"])
FLAGS = flags.FLAGS


def main(argv):
  del argv
  vocab_file = FLAGS.vocab_file
  if not vocab_file and not FLAGS.spm_model_file:
    vocab_file = pretraining_data.EMBEDDED_VOCAB
  tokenizer = load_tokenizer(vocab_file=vocab_file, spm_model_file=FLAGS.spm_model_file,
                             lower_case=FLAGS.lower_case)
  config = pe.PretrainingDataConfig(
      long_seq_len=FLAGS.long_seq_len, global_seq_len=FLAGS.global_seq_len,
      max_predictions_per_seq=FLAGS.max_predictions_per_seq, masked_lm_prob=FLAGS.masked_lm_prob,
      cpc_prob=FLAGS.cpc_prob, max_cpc_per_seq=FLAGS.max_cpc_per_seq,
      cpc_sentence_len=FLAGS.cpc_sentence_len, pack_documents=FLAGS.pack_documents)
  extra = {}
  if FLAGS.tfds_data_dir is not None:
    extra["tfds_data_dir"] = FLAGS.tfds_data_dir
  try:
    pretraining_data.copy_vocab(vocab_file or FLAGS.spm_model_file, FLAGS.output_dir)
    pretraining_data.convert_corpus(FLAGS.input, FLAGS.output_dir, tokenizer, config,
                                    num_shards=FLAGS.num_shards, seed=FLAGS.seed,
                                    min_sentences=FLAGS.min_sentences,
                                    dupe_factor=FLAGS.dupe_factor,
                                    num_workers=FLAGS.num_workers, **extra)
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None


if __name__ == "__main__":
  app.run(main)
