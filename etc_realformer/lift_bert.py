r"""Lifts a pretrained BERT into this package's ETC encoder checkpoint.

  python -m etc_realformer.lift_bert --bert_checkpoint=uncased_L-12_H-768_A-12 \
      --output_dir=lifted/bert_base [--bert_config_file=...] [--position_embeddings=copy|drop] \
      [--set model.local_radius=84 --set model.max_absolute_position_embeddings=4096 ...]

`--bert_checkpoint` is Google's TF BERT (`bert_model.ckpt` prefix or its folder) or a folder of
Hugging Face files (model.safetensors + config.json, BERT or RoBERTa). Writes, atomically (into
a temporary folder beside OUT, then renamed into place):

  OUT/encoder.*           this package's encoder checkpoint (what train.init_checkpoint takes)
  OUT/etc_config.json     its EtcConfig (BERT's shape, residual_attention none unless --set)
  OUT/vocab.txt           the BERT's vocabulary, when its folder has one (vocab.txt, or the
                          pieces of a Hugging Face tokenizer.json)
  OUT/bert_pooler.npz     BERT's pooler (kernel [H, H], bias [H]), when the checkpoint has one
  OUT/lifting.json        the report: every variable mapped, skipped, and weights not from BERT

and prints what was mapped and skipped and the time taken. The mapping: docs/lifting.md.

The way back, `--export_bert`: writes the long stream of one of this package's encoders as a
BERT in Google's format (bert_model.ckpt.*, bert_config.json, vocab.txt), and prints what that
format cannot hold (relative tables, the global stream, residual attention):

  python -m etc_realformer.lift_bert --export_bert --encoder=pretrained/tiny_english \
      --output_dir=bert/tiny_english [--vocab_file=...]
"""

import json
import os
import time
from typing import Dict, Optional, Sequence

from absl import app
from absl import flags

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
import numpy as np  # pylint: disable=g-bad-import-order
import tensorflow as tf  # pylint: disable=g-bad-import-order

from etc_realformer import checkpoint_conversion  # pylint: disable=g-bad-import-order
from etc_realformer.data import vocab_learner
from etc_realformer.models import bert_export
from etc_realformer.models import bert_lifting
from etc_realformer.models.encoder import EtcModel
from etc_realformer.training import run_config as run_config_lib

POOLER_FILE = bert_lifting.POOLER_FILE
REPORT_FILE = "lifting.json"


def lift_to_package(bert_checkpoint: str, output_dir: str, config_file: Optional[str] = None,
                    position_embeddings: str = "copy", global_token_init: str = "cls",
                    overrides: Optional[Dict] = None) -> Dict:
  """Writes the lifted encoder, etc_config.json, vocabulary, pooler and report; -> a summary."""
  start = time.perf_counter()
  model = EtcModel.from_bert_checkpoint(bert_checkpoint, config_file=config_file,
                                        position_embeddings=position_embeddings,
                                        global_token_init=global_token_init,
                                        **(overrides or {}))
  report = model.lift_report
  source_dir = os.path.dirname(report.source)
  with checkpoint_conversion._staging_dir(output_dir) as tmp:  # pylint: disable=protected-access
    tf.train.Checkpoint(encoder=model).write(os.path.join(tmp, "encoder"))
    with open(os.path.join(tmp, "etc_config.json"), "w", encoding="utf-8") as f:
      json.dump(model.etc_config.to_dict(), f, indent=2, sort_keys=True)
    vocab = []
    if os.path.isfile(os.path.join(source_dir, "vocab.txt")):
      vocab = checkpoint_conversion.copy_vocab(source_dir, tmp)
    elif model.lift_report.vocab_file:  # a Hugging Face tokenizer.json: its pieces as vocab.txt
      vocab_learner.write_vocab(vocab_learner.read_vocab(model.lift_report.vocab_file),
                                os.path.join(tmp, "vocab.txt"))
      vocab = ["vocab.txt"]
    if report.pooler:
      np.savez(os.path.join(tmp, POOLER_FILE), **report.pooler)
    with open(os.path.join(tmp, REPORT_FILE), "w", encoding="utf-8") as f:
      json.dump(report.to_dict(), f, indent=2)
    # pylint: disable-next=protected-access
    checkpoint_conversion._publish(tmp, output_dir, last="etc_config.json")
  return {"checkpoint": os.path.join(output_dir, "encoder"), "vocab": vocab, "report": report,
          "parameters": int(sum(v.shape.num_elements() for v in model.weights)),
          "seconds": time.perf_counter() - start}


def parse_overrides(items: Sequence[str]) -> Dict:
  """`model.key=value` strings -> {key: value} (values parsed as YAML, as --set elsewhere)."""
  return run_config_lib.apply_overrides({"model": {}}, items)["model"]


FLAGS = flags.FLAGS


def define_flags() -> None:
  """The command line's flags: defined only when run as a command, so that importing the
  library functions above (lift_to_package) defines no absl flags in the caller's process."""
  flags.DEFINE_string("bert_checkpoint", None,
                      "Google's BERT (bert_model.ckpt prefix or its folder) or a Hugging Face "
                      "folder (model.safetensors + config.json).")
  flags.DEFINE_string("output_dir", None, "Folder to write the lifted encoder to.")
  flags.DEFINE_string("bert_config_file", None,
                      "BERT's config; default: bert_config.json (or config.json) beside it.")
  flags.DEFINE_enum("position_embeddings", "copy", list(bert_lifting.POSITION_MODES),
                    "copy: keep BERT's absolute positions (repeated to fill a longer "
                    "max_absolute_position_embeddings); drop: relative positions only.")
  flags.DEFINE_enum("global_token_init", "cls", list(bert_lifting.GLOBAL_INIT_MODES),
                    "cls: global-token rows that are unused vocabulary slots start from [CLS] "
                    "([MASK] for the CPC-hidden sentence); keep: leave BERT's rows.")
  flags.DEFINE_multi_string("set", [], "EtcConfig override, e.g. --set model.local_radius=84.")
  flags.DEFINE_bool("verbose", True, "Print every mapped (or written) variable.")
  flags.DEFINE_bool("export_bert", False,
                    "The way back: write --encoder's long stream as a BERT in Google's format "
                    "(bert_model.ckpt, bert_config.json, vocab.txt) into --output_dir.")
  flags.DEFINE_string("encoder", None,
                      "--export_bert: this package's encoder (a folder such as "
                      "pretrained/tiny_english, an .../encoder prefix or a pretraining run).")
  flags.DEFINE_string("vocab_file", None,
                      "--export_bert: the vocabulary to write (default: the encoder folder's).")


def export_main() -> None:
  if not FLAGS.encoder or not FLAGS.output_dir:
    raise app.UsageError("--export_bert needs --encoder and --output_dir")
  start = time.perf_counter()
  try:
    report = bert_export.export_bert_checkpoint(FLAGS.encoder, FLAGS.output_dir,
                                                 FLAGS.vocab_file)
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  print(report.summary(verbose=FLAGS.verbose))
  print(f"wrote {FLAGS.output_dir} in {time.perf_counter() - start:.1f} s")


def main(argv):
  del argv
  if FLAGS.export_bert:
    export_main()
    return
  if not FLAGS.bert_checkpoint or not FLAGS.output_dir:
    raise app.UsageError("--bert_checkpoint and --output_dir are required")
  try:
    result = lift_to_package(FLAGS.bert_checkpoint, FLAGS.output_dir, FLAGS.bert_config_file,
                             FLAGS.position_embeddings, FLAGS.global_token_init,
                             parse_overrides(FLAGS.set))
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  print(result["report"].summary(verbose=FLAGS.verbose))
  print(f"wrote {result['checkpoint']} ({result['parameters']:,} parameters, vocabulary: "
        f"{', '.join(result['vocab']) or 'none'}) in {result['seconds']:.1f} s")


if __name__ == "__main__":
  define_flags()
  app.run(main)
