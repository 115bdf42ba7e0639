r"""Attention analysis of a trained encoder: entropy, adjacent-layer similarity, l2g maps.

  python -m etc_realformer.analyze --checkpoint=runs/pretrain_tiny --output_dir=runs/analysis
  python -m etc_realformer.analyze --checkpoint=runs/pretrain_tiny \
      --compare_checkpoint=runs/pretrain_tiny_postln --labels=RealFormer,Post-LN \
      --output_dir=runs/analysis_comparison

--checkpoint is a pretraining output directory, its final/ directory or a checkpoint prefix.
--data is a pretraining data directory (data_config.json + *.tfrecord); without it the
run_config.json of the checkpoint's run names it. Both models of a comparison read the same
first --num_examples examples (file order, no shuffle).

Writes to --output_dir: entropy.png (entropy_comparison.png when comparing), attention_map.png
(--map_layer=-1, the default: one panel per layer; --map_head=-1: mean over heads) and
analysis.json; prints a per-layer table.
"""

from absl import app
from absl import flags

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from etc_realformer.analysis import pipeline

flags.DEFINE_string("checkpoint", None, "Pretraining output dir, final/ dir or checkpoint prefix.")
flags.DEFINE_string("compare_checkpoint", None, "A second checkpoint drawn in the same figures.")
flags.DEFINE_list("labels", [], "Labels, one per checkpoint (default: RealFormer / Post-LN / "
                  "Pre-LN from each config).")
flags.DEFINE_string("data", None, "Pretraining data directory (default: the run's train_data).")
flags.DEFINE_string("output_dir", "runs/analysis", "Where the PNGs and analysis.json go.")
flags.DEFINE_integer("num_examples", 8, "Examples read from --data (the first ones, in order).")
flags.DEFINE_integer("batch_size", 4, "Examples per forward pass.")
flags.DEFINE_integer("example_index", 0, "Example drawn in attention_map.png.")
flags.DEFINE_integer("map_layer", -1, "Layer of attention_map.png; -1 = one panel per layer.")
flags.DEFINE_integer("map_head", -1, "Head of attention_map.png; -1 = mean over heads.")
flags.DEFINE_integer("dpi", 100, "Resolution of the PNGs.")
FLAGS = flags.FLAGS


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  if not FLAGS.checkpoint:
    raise app.UsageError("--checkpoint is required")
  checkpoints = [FLAGS.checkpoint] + ([FLAGS.compare_checkpoint] if FLAGS.compare_checkpoint
                                      else [])
  settings = pipeline.AnalysisSettings(
      num_examples=FLAGS.num_examples, batch_size=FLAGS.batch_size,
      example_index=FLAGS.example_index, map_layer=FLAGS.map_layer, map_head=FLAGS.map_head,
      dpi=FLAGS.dpi)
  try:
    pipeline.run_analysis(checkpoints, FLAGS.output_dir, data=FLAGS.data,
                          labels=FLAGS.labels or None, settings=settings)
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None


if __name__ == "__main__":
  app.run(main)
