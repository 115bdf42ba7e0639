r"""Converts Google's ETC checkpoints to this package's encoder checkpoints and back.

Official -> this package (writes OUT/encoder.*, OUT/etc_config.json and the vocabulary):
  python -m etc_realformer.convert_checkpoint \
      --official_checkpoint=etc_base_2x_pretrain/model.ckpt --output_dir=converted/etc_base

This package -> official (writes OUT/model.ckpt.*, an official etc_config.json, the vocabulary):
  python -m etc_realformer.convert_checkpoint --to_official \
      --checkpoint=converted/etc_base/encoder --output_dir=back/etc_base

The round trip official -> ours -> official gives bit-identical tensors. A fine-tuning or
pretraining run can also start from an official `model.ckpt` prefix directly
(`train.init_checkpoint`); it is converted on load.
"""

from absl import app
from absl import flags

import etc_realformer  # pylint: disable=unused-import  # sets TF_USE_LEGACY_KERAS first
from etc_realformer.checkpoint_conversion import official_to_package, package_to_official  # pylint: disable=g-bad-import-order

FLAGS = flags.FLAGS
flags.DEFINE_string("official_checkpoint", None,
                    "Official checkpoint prefix (e.g. etc_base_2x_pretrain/model.ckpt) to convert.")
flags.DEFINE_string("checkpoint", None,
                    "With --to_official: this package's encoder checkpoint (e.g. OUT/encoder).")
flags.DEFINE_string("output_dir", None, "Folder to write the converted checkpoint to.")
flags.DEFINE_string("config_file", None,
                    "The config of the checkpoint; default: etc_config.json next to it.")
flags.DEFINE_bool("to_official", False, "Convert this package's checkpoint to the official layout.")


def main(argv):
  del argv
  if not FLAGS.output_dir:
    raise app.UsageError("--output_dir is required")
  if FLAGS.to_official:
    if not FLAGS.checkpoint:
      raise app.UsageError("--to_official needs --checkpoint=<this package's encoder prefix>")
    report = package_to_official(FLAGS.checkpoint, FLAGS.output_dir, FLAGS.config_file)
  else:
    if not FLAGS.official_checkpoint:
      raise app.UsageError("--official_checkpoint is required (or --to_official --checkpoint)")
    report = official_to_package(FLAGS.official_checkpoint, FLAGS.output_dir, FLAGS.config_file)
  print(f"wrote {report['checkpoint']} ({report['weights']} weights, vocabulary: "
        f"{', '.join(report['vocab']) or 'none'}) in {report['seconds']:.1f} s")


if __name__ == "__main__":
  app.run(main)
