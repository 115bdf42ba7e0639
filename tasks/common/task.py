"""The contract every benchmark implements, and the steps built on it.

A task is a subclass of `Task` that names its classes (feature config, model, predictor) and
implements the hooks marked abstract: reading the official files, turning examples into
training features, scoring, and the demo data. Everything else is shared and lives here:

  run_finetuning   vocabulary, conversion, resumable model.fit, dev scoring, export
  predict_file     official input file + export -> the leaderboard's prediction file
  evaluate         gold file + prediction (file or object) -> metrics
  convert_file     labelled file -> TFRecord shards (parallel, resumable; reused while
                   unchanged)
  run_demo         synthetic data -> fine-tune -> predict through the export -> score

`tasks.common.driver` turns these into one command line per task:
`python -m tasks.<task> {finetune,predict,evaluate,convert,demo}`. docs/adding_a_task.md walks
through a new one.
"""

import abc
import collections
import dataclasses
import importlib
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from absl import logging
import tensorflow as tf
import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.data import sharded_conversion
from etc_realformer.data import tfrecords
from etc_realformer.data import tokenization
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.io_utils import atomic_write_json
from etc_realformer.training import run_config as run_config_lib
from etc_realformer.training.distribution import Distribution
from tasks.common import conversion
from tasks.common import demo
from tasks.common import finetuning
from tasks.common import input_parts
from tasks.common import serving
from tasks.common.read_report import ReadReport

Log = Callable[[str], None]


SPLIT_TITLES = {"dev": "synthetic dev set (names seen in training)",
                "dev_unseen": "synthetic dev set about unseen entities",
                "test_unseen": "synthetic test set about unseen entities",
                "dev_unseen_templates": "synthetic dev set, unseen entities written with "
                                        "template families never seen in training",
                "test_unseen_templates": "synthetic test set, unseen entities written with "
                                         "template families never seen in training"}
# Demo data, presets of the task's one generator (synthetic_data/<task>.py, docs/synthetic_data/):
# "benchmark" is long, written by several template families, with held-out-family splits;
# "short" is the same generator with fewer, shorter paragraphs and fewer families (fast tests,
# quick looks). Both write the same splits.
DATA_STYLES = ("benchmark", "short")
TRAIN_FAMILY_CHOICES = ("default", "all")   # demo --train_families


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
  if value not in choices:
    raise ValueError(f"{name} {value!r}: expected one of {', '.join(choices)}")


def demo_splits(summary: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
  """{split: its demo_scores} of a demo summary: "dev" first, then the other evaluated splits."""
  return {"dev": summary, **summary.get("splits", {})}


def _baselines_by_name(scores: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
  """{name: metrics} of a split's baselines (`demo_scores` keeps a single one unnamed)."""
  baselines, names = scores["baseline_metrics"], scores["baseline_names"]
  return {names[0]: baselines} if len(names) == 1 else {name: baselines[name] for name in names}


class Task(abc.ABC):
  """One benchmark: its files, features, model, decoding, scoring and demo data.

  Class attributes a task sets:
    name: folder name, config folder, record prefix and model name ("wikihop").
    title: the benchmark's name in messages ("WikiHop").
    train_config_class: the `train:` section (finetuning.TaskTrainConfig or a subclass).
    model_class: a tasks.common.task_model.TaskModel subclass.
    predictor_class: a tasks.common.serving.TaskPredictor subclass; its feature_config_class
      is the `features:` section (a tasks.common.feature_config.FeatureConfig).
    metrics: the scorer module: evaluate(gold, prediction, **options) -> metrics dict (gold and
      prediction are paths or loaded contents) and format_metrics(metrics) -> text; by default
      the task folder's `metrics` module.
    headline_keys: the metrics printed as the demo's last line.
    prediction_file_name: the dev prediction file's name in a run or demo directory.
    predict_batch_size: the default number of examples (or windows) per model call.
    demo_sizes: (training, dev) items the demo generates by default; demo_unit names them.
    input_help, prediction_help, gold_help: what the files are, for --help (the input and gold
      files default to "<title> file in the official format").
    flag_aliases: driver flag -> another accepted name (e.g. an official scorer's flag).
  """
  name: str = ""
  title: str = ""
  train_config_class: type = finetuning.TaskTrainConfig
  model_class: type = None
  predictor_class: type = None
  metrics: Any = None
  headline_keys: Tuple[str, ...] = ()
  prediction_file_name: str = "dev_predictions.json"
  predict_batch_size: int = 16
  demo_sizes: Tuple[int, int] = (1000, 200)
  demo_unit: str = "examples"
  input_help: str = ""
  prediction_help: str = "Prediction file."
  gold_help: str = ""
  flag_aliases: Dict[str, str] = {}

  REQUIRED = ("name", "title", "model_class", "predictor_class", "metrics")

  def __init_subclass__(cls, **kwargs):
    super().__init_subclass__(**kwargs)
    # A class attribute, not instance state: a task object is pickled into worker processes
    # (convert --num_workers), and modules do not pickle.
    if cls.metrics is None and cls.name:
      try:
        cls.metrics = importlib.import_module(f"tasks.{cls.name}.metrics")
      except ModuleNotFoundError:
        pass   # __init__ reports it with the other missing parts

  def __init__(self):
    missing = [attribute for attribute in self.REQUIRED if not getattr(self, attribute)]
    if missing:
      raise TypeError(f"{type(self).__name__} does not set {', '.join(missing)} (tasks.common.task)")

  def module(self, part: str):
    """The task folder's module `part` (every task folder has the same modules:
    tests/test_task_contract.py)."""
    return importlib.import_module(f"tasks.{self.name}.{part}")

  @property
  def feature_config_class(self) -> type:
    return self.predictor_class.feature_config_class

  def file_help(self, kind: str) -> str:
    """--help text of the "input", "prediction" or "gold" file."""
    given = getattr(self, f"{kind}_help")
    return given or f"{self.title} file in the official format" + (
        " with answers." if kind == "gold" else ".")

  # ------------------------------------------------------------------ the hooks a task writes

  def read_examples(self, path: str, with_labels: bool) -> Tuple[List[Any], ReadReport]:
    """Reads an official file: (examples, report of what was kept, skipped, repaired); by
    default the task's `data.read_examples`."""
    return self.module("data").read_examples(path, with_labels=with_labels)

  @abc.abstractmethod
  def training_texts(self, train_file: str) -> Iterable[str]:
    """Texts of the training file a WordPiece vocabulary is learned from (no vocab given)."""

  @abc.abstractmethod
  def labelled_features(self, examples: Sequence[Any], tokenizer: OffsetTokenizer,
                        feature_config, report: ReadReport, counts: collections.Counter,
                        log: Log) -> Iterable[Dict[str, Any]]:
    """Training feature dicts of labelled examples (an iterable, streamed: read it once);
    skips (counted in `report`) what cannot be labelled and adds figures (truncation, ...) to
    `counts`."""

  def feature_lengths(self, feature_config) -> Dict[str, int]:
    """The length of every stored feature (0 for a scalar) for parsing TFRecords; by default
    `feature_lengths` of the task's `features` module."""
    return self.module("features").feature_lengths(feature_config)

  @abc.abstractmethod
  def baselines(self, examples: Sequence[Any]) -> Dict[str, Any]:
    """The demo's trivial baselines: {description: prediction} for the dev examples."""

  # ------------------------------------------------------------------ hooks with defaults

  def training_examples(self, input_path: str, report: ReadReport,
                        part: input_parts.Part = input_parts.WHOLE) -> Iterable[Any]:
    """The labelled examples of one part of a training file (tasks.common.input_parts), counted
    in `report` (records read, examples, skips) as they are read.

    The default reads the whole file and keeps the part's examples by position, the reader's
    counts going to part 0; a task whose files are large streams instead, so that memory does
    not grow with the file.
    """
    examples, read = self.read_examples(input_path, with_labels=True)
    if part.index == 0:
      report.take_counts(read)
    kept = [example for position, example in enumerate(examples)
            if part.owns(input_parts.position_key(position))]
    report.examples = len(kept)
    return kept

  def training_features(self, input_path: str, tokenizer: OffsetTokenizer, feature_config,
                        report: ReadReport, counts: collections.Counter, log: Log,
                        part: input_parts.Part = input_parts.WHOLE
                        ) -> Iterable[Dict[str, Any]]:
    """Labelled feature dicts of one part of a training file; fills `report` and `counts` as
    it reads (`labelled_features` of `training_examples`)."""
    examples = self.training_examples(input_path, report, part)
    return self.labelled_features(examples, tokenizer, feature_config, report, counts, log)

  def evaluate(self, gold: Any, prediction: Any, **options) -> Dict[str, Any]:
    """The official metrics; gold and prediction are paths or loaded contents."""
    return self.metrics.evaluate(gold, prediction, **options)

  def format_metrics(self, scores: Dict[str, Any]) -> str:
    return self.metrics.format_metrics(scores)

  def make_demo_data(self, directory: str, num_train: int, num_dev: int, seed: int,
                     data_style: str = "benchmark", train_families: str = "default"
                     ) -> Dict[str, str]:
    """Writes (or reuses) synthetic files in the official format: {split: path} with "train",
    "dev" (entities named from the training lexicon), "dev_unseen" (names never seen in
    training) and "dev_unseen_templates" / "test_unseen_templates" (unseen names written by
    template families held out of training). `data_style` is the generator's preset.

    `train_families` "all" trains on every family, the held-out ones too: the ablation that
    measures what holding them out costs.

    The generators live in the `synthetic_data` package of a source checkout (not installed).
    """
    if data_style == "demo":
      raise ValueError("data_style 'demo' named the short generator, which is gone: the short "
                       "data is now the preset 'short' of the one generator (the default is "
                       "'benchmark')")
    _check_choice("data_style", data_style, DATA_STYLES)
    _check_choice("train_families", train_families, TRAIN_FAMILY_CHOICES)
    generator = importlib.import_module(f"synthetic_data.{self.name}")
    extra = {"train_families": generator.FAMILIES} if train_families == "all" else {}
    return dict(generator.ensure_demo_data(directory, num_train, num_dev, seed,
                                           preset=data_style, **extra))

  def demo_scores(self, dev_file: str, prediction_file: str) -> Dict[str, Any]:
    """The demo's figures: "dev_metrics" and "baseline_metrics" (the one baseline's metrics,
    or {description: metrics} when there are several) and "baseline_names"."""
    examples, _ = self.read_examples(dev_file, with_labels=False)
    options = self.dev_evaluate_options()
    baselines = {name: self.evaluate(dev_file, prediction, **options)
                 for name, prediction in self.baselines(examples).items()}
    return {"dev_metrics": self.evaluate(dev_file, prediction_file, **options),
            "baseline_metrics": (next(iter(baselines.values())) if len(baselines) == 1
                                 else baselines),
            "baseline_names": list(baselines)}

  def demo_report(self, summary: Dict[str, Any]) -> str:
    """The demo's result tables, one per evaluated split: the model next to the baselines."""
    lines = []
    for split, scores in demo_splits(summary).items():
      lines += [f"\n{self.title} demo, {SPLIT_TITLES.get(split, split)}: fine-tuned model",
                self.format_metrics(scores["dev_metrics"])]
      for name, metrics in _baselines_by_name(scores).items():
        lines += [f"\nbaseline: {name.replace('_', ' ')}", self.format_metrics(metrics)]
    return "\n".join(lines)

  def demo_headline(self, summary: Dict[str, Any]) -> Dict[str, Any]:
    """The demo's last line: `headline_keys` of the model and the baselines, per split."""
    headline = {}
    for split, scores in demo_splits(summary).items():
      headline[split] = {
          "model": {key: scores["dev_metrics"][key] for key in self.headline_keys},
          **{f"baseline: {name}": {key: value[key] for key in self.headline_keys}
             for name, value in _baselines_by_name(scores).items()}}
    return headline

  def input_files(self, path: str) -> List[str]:
    """The files behind an input path (a task with sharded input expands globs)."""
    return [path]

  def export_inputs(self, feature_config) -> Dict[str, Any]:
    """The export signature: feature -> length (int32 [batch, length]) or a tf.TensorSpec.

    The default covers the int32 features of `feature_lengths` (length 0: one per example); a
    task with other inputs (e.g. float features) adds their specs.
    """
    lengths = self.feature_lengths(feature_config)
    return {name: lengths[name] or tf.TensorSpec([None], tf.int32)
            for name in self.predictor_class.input_features if name in lengths}

  def build_model(self, model_config: EtcConfig, feature_config):
    """The task model for an encoder config (a task with head settings overrides this)."""
    return self.model_class(model_config, name=self.name)

  def predict(self, predictor, examples: Sequence[Any], batch_size: int, source: str = "",
              export_dir: str = "", **options) -> Any:
    """The prediction (file content) of every example; options are the task's predict flags."""
    del source, export_dir
    return predictor.predict(examples, batch_size, **options)

  def score_dev(self, predictor, examples: Sequence[Any], dev_file: str, batch_size: int
                ) -> Tuple[Any, Dict[str, Any], Dict[str, Any]]:
    """Predicts a labelled dev file after training: (prediction, settings, extra figures).

    `settings` (e.g. a threshold chosen on dev) go into the export and the predictor; the extra
    figures into dev_metrics.json. The default predicts with the predictor's settings.
    """
    del dev_file
    return predictor.predict(examples, batch_size), {}, {}

  def dev_evaluate_options(self) -> Dict[str, Any]:
    """Options of `evaluate` when scoring dev during fine-tuning and in the demo."""
    return {}

  def write_prediction(self, path: str, prediction: Any) -> None:
    """Writes a prediction file atomically (JSON unless the leaderboard wants otherwise)."""
    atomic_write_json(path, prediction)

  def describe_prediction(self, prediction: Any, examples: Sequence[Any]) -> str:
    """A short account of a prediction for the log (counts of empty answers etc.)."""
    del examples
    return f"{len(prediction)} prediction(s)"

  def evaluate_notes(self, gold_file: str, prediction_file: str) -> List[str]:
    """Lines printed after the metrics by `evaluate` (e.g. ids the prediction lacks)."""
    del gold_file, prediction_file
    return []

  def define_flags(self, flags_module) -> None:
    """Defines the task's own command-line flags (absl), if any."""

  def command_options(self, command: str, flag_values) -> Dict[str, Any]:
    """The keyword options of a command taken from the task's own flags."""
    del command, flag_values
    return {}

  # ------------------------------------------------------------------ configs

  def default_config(self) -> str:
    """The demo's config of this task: `configs/<task>/tiny.yaml` (ETC's input lengths)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "configs", self.name, "tiny.yaml")

  def load_run_config(self, path: str) -> Dict[str, Any]:
    """A config file -> {model, features, train} dicts (model paths resolved)."""
    return run_config_lib.load_run_config(path, ("features", "train"))

  def parse_sections(self, run_config: Dict[str, Any], source: str = "config"):
    """{model, features, train} dicts -> (EtcConfig, feature config, train config)."""
    return finetuning.parse_task_sections(run_config, self.feature_config_class,
                                          self.train_config_class, source)

  # ------------------------------------------------------------------ steps

  def read(self, path: str, with_labels: bool, log: Log = logging.info) -> List[Any]:
    """`read_examples` with its report logged."""
    examples, report = self.read_examples(path, with_labels)
    log(report.summary())
    return examples

  def record_files(self, directory: str) -> List[str]:
    return conversion.record_files(directory, self.name)

  def parse_fn(self, feature_config) -> Callable:
    """[batch] serialized records -> dict of tensors ([batch] or [batch, length])."""
    return tfrecords.fixed_length_parse_fn(self.feature_lengths(feature_config))

  def convert_file(self, input_path: str, directory: str, tokenizer: OffsetTokenizer,
                   vocab_file: str, feature_config, num_shards: int = 1,
                   log: Log = logging.info, num_workers: int = 1,
                   reuse_only: bool = False) -> dict:
    """Converts a labelled file to `<directory>/<name>-*.tfrecord` + features.json, or reuses
    an identical conversion (same input files, vocabulary, tokenizer, feature config and
    number of shards); `num_workers` processes convert the shards (tasks.common.conversion).

    `reuse_only` (a training worker other than the chief): never write; the manifest of an
    identical conversion, else finetuning.NotPrepared.
    """
    stamp = dict(conversion.fingerprint(self.input_files(input_path), vocab_file,
                                        feature_config),
                 tokenizer=tokenizer.tokenizer.signature)
    if reuse_only:
      return reusable_conversion(directory, self.name, stamp, num_shards)
    produce = PartFeatures(self, input_path, vocab_file, feature_config, tokenizer)
    return conversion.convert_once(directory, self.name, stamp, produce, input_path, log,
                                   num_shards, num_workers)

  def export_model(self, model, feature_config, vocab_file: str, directory: str,
                   settings: Optional[Dict[str, Any]] = None) -> str:
    """Writes the export directory (tasks.common.serving); replaces an older export.

    The SavedModel holds the model's variables and the serving function only (`ServingModel`),
    not the Keras objects, whose layer call functions tf.saved_model.save would trace one by
    one: on the tiny WikiHop model that halves the export time (18.7 s -> 9.3 s) and makes
    loading it 4x quicker.
    """
    return serving.export_task_model(
        ServingModel(model), self.export_inputs(feature_config),
        self.predictor_class.output_names, vocab_file, directory,
        {"feature_config": dataclasses.asdict(feature_config),
         "etc_config": model.etc_config.to_dict(), **(settings or {})})

  def run_finetuning(self, run_config: Dict[str, Any], output_dir: str,
                     distribution: Optional[Distribution] = None, verbose: int = 1,
                     extra_callbacks=()) -> Dict[str, Any]:
    """Fine-tunes (or resumes), scores dev when given, exports. Returns the run's figures.

    Output directory: run_config.json, vocab.txt (or vocab.model), train_records/,
    preparation.json (the chief's marker for the other workers, see tasks.common.finetuning),
    checkpoints/ and logs/ (a re-run resumes), export/, and with a dev file
    <prediction_file_name> and dev_metrics.json. With several workers only the chief (worker
    0) prepares the vocabulary and records and writes files; the others wait for it.
    """
    return finetuning.keep_precision_policy(lambda: self._finetune(
        run_config, output_dir, distribution or Distribution("none"), verbose,
        extra_callbacks))

  def _finetune(self, run_config, output_dir, distribution, verbose, extra_callbacks):
    model_config, feature_config, train = self.parse_sections(run_config)
    vocab_source = finetuning.vocab_source(train)
    if train.train_records and not vocab_source:
      raise ValueError("train.train_records: give train.vocab_file (the vocabulary the records "
                       "were written with) or an init_checkpoint that has one")

    def convert(tokenizer, vocab_file, directory, reuse_only=False):
      if train.train_records:
        return finetuning.external_records(train.train_records)
      return self.convert_file(train.train_file, directory, tokenizer, vocab_file,
                               feature_config, train.num_conversion_shards,
                               num_workers=train.num_conversion_workers, reuse_only=reuse_only)

    data = finetuning.TaskData(
        prepare_vocab=lambda reuse_only=False: finetuning.prepare_vocab(
            vocab_source, train.learned_vocab_size, output_dir,
            lambda: self.training_texts(train.train_file), train.train_file,
            reuse_only=reuse_only),
        convert=convert, record_files=self.record_files, parse_fn=self.parse_fn(feature_config),
        long_seq_len=feature_config.long_seq_len,
        stamp=lambda: finetuning.preparation_stamp(
            (tfrecords.expand_files(train.train_records) if train.train_records
             else self.input_files(train.train_file)), vocab_source, train.learned_vocab_size,
            train.split_punctuation, feature_config, train.num_conversion_shards),
        name=self.name)

    def build():
      model = self.build_model(model_config, feature_config)
      model.build()
      return model

    trained = finetuning.train_task_model(model_config, feature_config, train, data, build,
                                          output_dir, distribution, verbose, extra_callbacks)
    metrics, timings, info = trained.metrics, trained.timings, trained.conversion
    metrics.update(train_examples=info["examples"], train_records=info["records"],
                   train_written=info["written"], train_skipped=info["skipped"],
                   train_conversion=info.get("counts", {}))
    if not distribution.is_chief:
      return metrics
    if distribution.kind != "none":
      trained.model = self.inference_copy(trained.model, build)
    settings = {}
    if train.dev_file:
      with finetuning.timed(timings, "dev_seconds"):
        metrics["dev"], settings = self._score_dev_file(trained, feature_config, train,
                                                        output_dir)
        metrics.update(settings)
    with finetuning.timed(timings, "export_seconds"):
      self.export_model(trained.model, feature_config, trained.vocab_file,
                        os.path.join(output_dir, "export"), settings)
    metrics["timings"] = timings
    atomic_write_json(os.path.join(output_dir, "metrics.json"), metrics)
    return metrics

  @staticmethod
  def inference_copy(model, build: Callable[[], Any]):
    """A fresh model from `build()` (outside any distribution scope, never compiled) holding
    the weights of a model trained under a distribution, for dev scoring and the export.

    The trained model carries its optimizer (under Horovod a DistributedOptimizer, whose
    HorovodAllreduce ops would go into the SavedModel: a plain process cannot load it) and,
    under tf.distribute, distributed variables (saving multi-worker metric variables needs a
    collective with workers that have already stopped). The Keras metric totals are not
    copied.
    """
    def weights(m):
      metric_variables = {id(v) for module in m.submodules
                          if isinstance(module, tf_keras.metrics.Metric) for v in module.variables}
      return [w for w in m.weights if id(w) not in metric_variables]
    copy = build()
    source, target = weights(model), weights(copy)
    if [w.shape for w in source] != [w.shape for w in target]:
      raise ValueError("inference_copy: the rebuilt model's weights differ from the trained "
                       "model's")
    for new, old in zip(target, source):
      new.assign(old.numpy())   # a distributed variable: this worker's copy, no collective
    return copy

  def _score_dev_file(self, trained, feature_config, train, output_dir):
    examples = self.read(train.dev_file, with_labels=False)
    predictor = self.predictor_class.from_model(trained.model, feature_config,
                                                trained.tokenizer)
    prediction, settings, extra = self.score_dev(predictor, examples, train.dev_file,
                                                 train.eval_batch_size)
    self.write_prediction(os.path.join(output_dir, self.prediction_file_name), prediction)
    scores = self.evaluate(train.dev_file, prediction, **self.dev_evaluate_options())
    atomic_write_json(os.path.join(output_dir, "dev_metrics.json"),
                      {**settings, "metrics": scores, **extra} if settings or extra else scores)
    logging.info("dev%s:\n%s", f" {settings}" if settings else "", self.format_metrics(scores))
    return scores, settings

  def predict_file(self, export_dir: str, input_file: str, output_file: str,
                   batch_size: Optional[int] = None, **options) -> Any:
    """Predicts every example of `input_file` with an export and writes `output_file`."""
    examples = self.read(input_file, with_labels=False)
    predictor = self.predictor_class.from_export(export_dir)
    prediction = self.predict(predictor, examples, batch_size or self.predict_batch_size,
                              source=input_file, export_dir=export_dir, **options)
    os.makedirs(os.path.dirname(os.path.abspath(output_file)), exist_ok=True)
    self.write_prediction(output_file, prediction)
    logging.info("%s written to %s", self.describe_prediction(prediction, examples),
                 output_file)
    return prediction

  def run_demo(self, config_path: Optional[str], output_dir: str,
               num_train: Optional[int] = None, num_dev: Optional[int] = None, seed: int = 0,
               overrides: Sequence[str] = (), verbose: int = 2, data_style: str = "benchmark",
               train_families: str = "default") -> Dict[str, Any]:
    """Synthetic data -> fine-tune -> predict through the export -> score next to the
    baselines. Returns the summary (also in <output_dir>/demo_summary.json)."""
    num_train = self.demo_sizes[0] if num_train is None else num_train
    num_dev = self.demo_sizes[1] if num_dev is None else num_dev
    return demo.run_task_demo(
        self, lambda directory: self.make_demo_data(directory, num_train, num_dev, seed,
                                                    data_style, train_families),
        config_path or self.default_config(), output_dir, overrides, verbose)


class ServingModel(tf.Module):
  """What an export saves of a task model: its variables, and a call that runs the model.

  The Keras model itself stays out of the object graph (it is reached through a function, which
  tf.Module does not track), so saving traces only the serving function.
  """

  def __init__(self, model):
    super().__init__(name=f"{model.name}_serving")
    self.model_variables = list(model.variables)   # what the serving function reads
    self._call = lambda inputs, training=False: model(inputs, training=training)

  def __call__(self, inputs, training=False):
    return self._call(inputs, training=training)


def reusable_conversion(directory: str, prefix: str, stamp: Dict[str, Any],
                        num_shards: int) -> dict:
  """The manifest of a finished conversion with this fingerprint, without writing anything;
  finetuning.NotPrepared otherwise.

  It asks the same question as `conversion.convert_once` before it converts
  (`sharded_conversion.reusable`), on the stamp as convert_once completes it, so a worker
  reuses exactly what the chief would reuse.
  """
  paths = tfrecords.shard_paths(os.path.join(directory, prefix), num_shards)
  info = sharded_conversion.reusable(os.path.join(directory, conversion.FEATURES_FILE),
                                     sharded_conversion.full_stamp(stamp, num_shards), paths)
  if info is None:
    raise finetuning.NotPrepared(f"{directory}: no finished conversion of these settings")
  return info


class PartFeatures:
  """The `produce` of a task's conversion: the labelled features of one part of its input.

  A worker process receives it pickled, without the tokenizer (a SentencePiece model holds
  TensorFlow objects): the worker builds its own from the vocabulary and checks that it is the
  same tokenizer (its signature).
  """

  def __init__(self, task: Task, input_path: str, vocab_file: str, feature_config,
               tokenizer: Optional[OffsetTokenizer] = None):
    self.task, self.input_path, self.vocab_file = task, input_path, vocab_file
    self.feature_config = feature_config
    self.signature = tokenizer.tokenizer.signature if tokenizer is not None else None
    self.tokenizer = tokenizer

  def __getstate__(self) -> dict:
    return dict(self.__dict__, tokenizer=None)

  def __call__(self, part: input_parts.Part, report: ReadReport,
               counts: collections.Counter, log: Log) -> Iterable[Dict[str, Any]]:
    return self.task.training_features(self.input_path, self._tokenizer(), self.feature_config,
                                       report, counts, log, part)

  def _tokenizer(self) -> OffsetTokenizer:
    """The tokenizer given, or in a worker process one built from the vocabulary."""
    if self.tokenizer is None:
      built = tokenization.tokenizer_for_vocab(
          self.vocab_file, split_punctuation=bool((self.signature or {}).get(
              "split_punctuation", False)))
      if self.signature is not None and built.signature != self.signature:
        raise ValueError(f"{self.vocab_file}: a worker process builds a tokenizer with "
                         f"{built.signature}, not the conversion's {self.signature}; convert "
                         "with one worker")
      self.tokenizer = OffsetTokenizer(built)
    return self.tokenizer
