"""One command line for every task: `python -m tasks.<task> <command> [flags]`.

Commands:
  finetune   --config --output_dir [--set section.key=value ...] [--distribution]
  predict    --export_dir --input_file --output_file [--batch_size]
  evaluate   --gold_file --prediction_file [--output_file]
  convert    --input_file --output_dir [--config] [--vocab_file] [--num_shards]
             [--num_workers] [--set ...]
  demo       [--output_dir] [--num_train] [--num_dev] [--seed] [--set ...]

A task's `__main__` calls `main(TASK)`. Bad input or settings end as a usage error that names the
problem, never a traceback. Every command's last line of output is one JSON object.
"""

import json
import sys
from typing import Dict

from absl import app
from absl import flags
from absl import logging

from etc_realformer.data import tokenization
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import determinism
from etc_realformer.training import distribution as distribution_lib
from etc_realformer.training import run_config as run_config_lib
from tasks.common import finetuning

COMMANDS = ("finetune", "predict", "evaluate", "convert", "demo")
# PreparationError: a fine-tuning worker's wait for the chief timed out, or the chief failed.
USER_ERRORS = (ValueError, FileNotFoundError, TypeError, finetuning.PreparationError)
FLAGS = flags.FLAGS


def define_flags(task) -> None:
  """The flags of all commands (each command reads the ones it needs) and the task's own."""
  flags.DEFINE_string("config", None, f"Fine-tuning config (default configs/{task.name}/tiny.yaml"
                                      "): YAML/JSON with model, features and train sections.")
  flags.DEFINE_string("output_dir", None, f"finetune: the run (default runs/{task.name}); demo: "
                                          f"data, run, predictions (default runs/{task.name}"
                                          "_demo); convert: the TFRecords.")
  flags.DEFINE_multi_string("set", [], "Config override, e.g. --set train.train_file=train.json"
                                       " or --set model.residual_attention=none.")
  flags.DEFINE_enum("distribution", "none", list(distribution_lib.CHOICES), "How to parallelise.")
  flags.DEFINE_integer("verbose", 2, "Keras progress: 0 silent, 1 progress bar, 2 one line.")
  flags.DEFINE_string("export_dir", f"runs/{task.name}/export", "A model exported by finetune.")
  flags.DEFINE_string("input_file", None, task.file_help("input"))
  flags.DEFINE_string("output_file", None, "predict: where the prediction goes (" +
                      task.file_help("prediction") + "); evaluate: optionally the metrics as JSON.")
  flags.DEFINE_integer("batch_size", None, "Examples per model call (default "
                                           f"{task.predict_batch_size}).")
  flags.DEFINE_string("gold_file", None, task.file_help("gold"))
  flags.DEFINE_string("prediction_file", None, task.file_help("prediction"))
  flags.DEFINE_string("vocab_file", None, "convert: the vocabulary (default: train.vocab_file).")
  flags.DEFINE_integer("num_shards", None, "convert: number of TFRecord files (default "
                                           "train.num_conversion_shards, 1).")
  flags.DEFINE_integer("num_workers", None, "convert: processes converting the shards "
                                            "(default train.num_conversion_workers, 1).")
  flags.DEFINE_integer("num_train", None, f"demo: synthetic training {task.demo_unit} (default "
                                          f"{task.demo_sizes[0]}).")
  flags.DEFINE_integer("num_dev", None, f"demo: synthetic dev {task.demo_unit} (default "
                                        f"{task.demo_sizes[1]}).")
  flags.DEFINE_integer("seed", 0, "demo: seed of the synthetic data.")
  flags.DEFINE_enum("data_style", "benchmark", ["benchmark", "short"],
                    "demo: the synthetic data's preset, 'benchmark' (benchmark lengths, several "
                    "template families, held-out-family splits) or 'short' (fewer, shorter "
                    "paragraphs and fewer families, what the fast tests use; as slow per step "
                    "unless the lengths are --set lower); configs/<task>/tiny.yaml unless "
                    "--config.")
  flags.DEFINE_enum("train_families", "default", ["default", "all"],
                    "demo: 'all' also trains on the held-out template families (an ablation: "
                    "what holding them out costs).")
  task.define_flags(flags)


def _require(*names: str) -> None:
  missing = [f"--{name}" for name in names if not FLAGS[name].value]
  if missing:
    raise app.UsageError(" and ".join(missing) + " required")


def _flag_or(name: str, default):
  """A flag's value when given, else `default` (e.g. from the config)."""
  return default if FLAGS[name].value is None else FLAGS[name].value


def _config(task) -> Dict:
  path = FLAGS.config or task.default_config()
  run_config = task.load_run_config(path)
  run_config_lib.apply_overrides(run_config, FLAGS.set)
  task.parse_sections(run_config, path)  # fail early on a bad setting
  return run_config


def finetune(task) -> Dict:
  distribution = distribution_lib.Distribution(FLAGS.distribution)
  run_config = _config(task)
  if run_config["train"].get("deterministic"):
    determinism.enable()  # before TensorFlow's runtime starts
  metrics = task.run_finetuning(run_config, FLAGS.output_dir or f"runs/{task.name}",
                                distribution, verbose=FLAGS.verbose)
  return metrics if distribution.is_chief else None


def predict(task) -> Dict:
  _require("input_file", "output_file")
  task.predict_file(FLAGS.export_dir, FLAGS.input_file, FLAGS.output_file, FLAGS.batch_size,
                    **task.command_options("predict", FLAGS))   # logs what it predicted
  return {"prediction_file": FLAGS.output_file}


def evaluate(task) -> Dict:
  _require("gold_file", "prediction_file")
  scores = task.evaluate(FLAGS.gold_file, FLAGS.prediction_file,
                         **task.command_options("evaluate", FLAGS))
  print(task.format_metrics(scores))
  for line in task.evaluate_notes(FLAGS.gold_file, FLAGS.prediction_file):
    print(line)
  if FLAGS.output_file:
    atomic_write_json(FLAGS.output_file, scores)
  return scores


def convert(task) -> Dict:
  _require("input_file", "output_dir")
  _, feature_config, train = task.parse_sections(_config(task), FLAGS.config or "config")
  vocab_file = FLAGS.vocab_file or train.vocab_file
  if not vocab_file:
    raise ValueError("convert needs a vocabulary: --vocab_file or train.vocab_file")
  tokenizer = OffsetTokenizer(tokenization.tokenizer_for_vocab(
      vocab_file, split_punctuation=train.split_punctuation))
  num_shards = _flag_or("num_shards", train.num_conversion_shards)
  info = task.convert_file(FLAGS.input_file, FLAGS.output_dir, tokenizer, vocab_file,
                           feature_config, num_shards,
                           num_workers=_flag_or("num_workers", train.num_conversion_workers))
  print(f"{info['written']} record(s) in {num_shards} shard(s) from {info['examples']} "
        f"example(s) of {info['records']} input record(s); skipped: {info['skipped'] or 'none'}")
  return {key: info[key] for key in ("written", "examples", "records", "skipped", "counts")}


def demo(task) -> Dict:
  summary = task.run_demo(FLAGS.config, FLAGS.output_dir or f"runs/{task.name}_demo",
                          FLAGS.num_train, FLAGS.num_dev, FLAGS.seed, FLAGS.set, FLAGS.verbose,
                          FLAGS.data_style, FLAGS.train_families)
  print(task.demo_report(summary))
  if not summary["deterministic"]:
    repeats = "train.deterministic is off: reruns can differ"
  elif determinism.repeats_bit_for_bit():
    repeats = "deterministic, one TensorFlow thread: a rerun of this command prints the same tables"
  else:
    repeats = ("deterministic ops with several TensorFlow threads: reruns of the HotpotQA demo "
               "repeated bit for bit on the machine measured (docs/benchmarks.md, \"Reproducible "
               "runs\"); with TF_NUM_INTRAOP_THREADS=1 reruns have always repeated bit for bit")
  print(f"\nseeds: data --seed={FLAGS.seed}, training train.seed={summary['seed']}; {repeats}; "
        "how much the figures move with the training seed: docs/long_documents.md")
  print("\ntime per step (s):")
  for name, seconds in summary["timings_seconds"].items():
    print(f"  {name:<24}{seconds:8.1f}")
  print(f"\nprediction file: {summary['prediction_file']}")
  return task.demo_headline(summary)


def run_command(task, command: str) -> None:
  """Runs one command with the parsed flags; prints its result as the last line (JSON)."""
  if command not in COMMANDS:
    raise app.UsageError(f"unknown command {command!r}; expected one of {', '.join(COMMANDS)}")
  logging.set_verbosity(logging.INFO)
  for name, alias in task.flag_aliases.items():  # e.g. an official scorer's own flag names
    if not FLAGS[name].value and alias in FLAGS and FLAGS[alias].value:
      FLAGS[name].value = FLAGS[alias].value
  try:
    result = globals()[command](task)
  except USER_ERRORS as e:
    raise app.UsageError(f"{task.name} {command}: {e}") from None
  if result is not None:
    print(json.dumps(result, indent=None, sort_keys=True, default=str))


def main(task) -> None:
  """The entry point of `python -m tasks.<task>`."""
  define_flags(task)
  commands = __doc__.split("Commands:")[1].split("\n\n")[0]
  usage = (f"{task.title}: python -m tasks.{task.name} <command> [flags]\n\n"
           f"Commands:{commands}\n\nRun with --help for every flag.")

  def run(argv):
    if len(argv) != 2:
      raise app.UsageError(f"give one command: {', '.join(COMMANDS)}")
    run_command(task, argv[1])

  sys.modules["__main__"].__doc__ = usage
  app.run(run)
