r"""The Natural Questions demo, end to end on generated data (no download):

  python -m tasks.nq.demo [--output_dir=runs/nq_demo]

1. writes synthetic NQ files in the original format (html, tokens with byte offsets, nested
   candidates; dev with five annotations);
2. fine-tunes a tiny ETC-RealFormer with model.fit (configs/nq/tiny.yaml) and exports it;
3. predicts the dev file with the exported model (the official predictions JSON);
4. scores it with the official scorer next to the "always null" baseline.

Prints the time of each step; <output_dir>/demo_summary.json keeps every figure. Re-running
resumes training from the last checkpoint (a finished run is not trained again).
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.nq import metrics as metrics_lib
from tasks.nq.pipeline import run_demo

cli.define_demo_flags("nq", 1500, 200, "examples")


def report(summary):
  print("\nNatural Questions demo, synthetic dev set (official scorer): fine-tuned model")
  print(metrics_lib.format_metrics(summary["dev_metrics"]))
  print("\nbaseline: always null")
  print(metrics_lib.format_metrics(summary["baseline_metrics"]))


def main(argv):
  del argv
  cli.demo_main(run_demo, report,
                lambda s: {k: s["dev_metrics"][k] for k in metrics_lib.MAIN_KEYS})


if __name__ == "__main__":
  app.run(main)
