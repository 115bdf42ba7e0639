"""Exporting a fine-tuned task model as a SavedModel directory, and loading it to predict.

Export directory (every task):
  saved_model/       tf.saved_model with a `serving_default` signature: the task's model
                     features (int32 [batch, length] each, or the given TensorSpec) -> its
                     named head outputs
  vocab.txt          the WordPiece vocabulary the features were made with, or
  vocab.model        the SentencePiece model (with tokenizer.json: {"split_punctuation": ...})
  task_config.json   what the task needs to convert and decode (feature config, encoder config,
                     thresholds, ...)

The directory is written under `<directory>.tmp` and renamed when complete, replacing an older
export, so a crash never leaves half an export under the final name.
"""

import json
import os
import shutil
import time
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from absl import logging
import numpy as np
import tensorflow as tf

from etc_realformer.data import tfrecords
from etc_realformer.data.span_tokenization import OffsetTokenizer
from etc_realformer.data import tokenization
from etc_realformer.io_utils import atomic_write_json

TASK_CONFIG_FILE = "task_config.json"
RunBatch = Callable[[Dict[str, np.ndarray]], Dict[str, np.ndarray]]


def export_task_model(model, input_lengths: Dict[str, Union[int, tf.TensorSpec]],
                      output_names: Sequence[str], vocab_file: str, directory: str,
                      task_config: dict) -> str:
  """Writes the export directory (see the module docstring); returns it.

  input_lengths: feature -> its length (an int32 [batch, length] input) or a tf.TensorSpec
  (e.g. float32 [None, G, 20] visual features).
  """
  tmp = directory.rstrip("/") + ".tmp"
  if os.path.exists(tmp):
    shutil.rmtree(tmp)
  os.makedirs(tmp)
  module = tf.Module()
  module.model = model
  signature = {name: (tf.TensorSpec(spec.shape, spec.dtype, name=name)
                     if isinstance(spec, tf.TensorSpec)
                     else tf.TensorSpec([None, spec], tf.int32, name=name))
               for name, spec in input_lengths.items()}

  @tf.function(input_signature=[signature])
  def serve(inputs):
    outputs = model(inputs, training=False)
    return {name: outputs[name] for name in output_names}

  # The signature only: `serve` kept as an attribute too would be traced a second time on
  # saving (about 1 s for the tiny models), for a function nothing loads.
  tf.saved_model.save(module, os.path.join(tmp, "saved_model"),
                      signatures={"serving_default": serve.get_concrete_function()})
  copy_vocabulary(vocab_file, tmp)
  atomic_write_json(os.path.join(tmp, TASK_CONFIG_FILE), task_config)
  if os.path.exists(directory):
    shutil.rmtree(directory)
  os.replace(tmp, directory)
  return directory


TOKENIZER_FILE = "tokenizer.json"  # {"split_punctuation": bool}, next to a run's vocabulary


def copy_vocabulary(vocab_file: str, directory: str) -> str:
  """Copies a run's vocabulary into an export directory as vocab.txt (WordPiece) or vocab.model
  (SentencePiece), with the run's tokenizer.json when it has one; returns the copy's path."""
  name = "vocab.model" if tokenization.is_sentencepiece_file(vocab_file) else "vocab.txt"
  target = os.path.join(directory, name)
  shutil.copyfile(vocab_file, target)
  settings = os.path.join(os.path.dirname(vocab_file), TOKENIZER_FILE)
  if os.path.exists(settings):
    shutil.copyfile(settings, os.path.join(directory, TOKENIZER_FILE))
  return target


def export_tokenizer(directory: str) -> OffsetTokenizer:
  """The tokenizer an export directory was made with (its vocab.txt or vocab.model)."""
  model = os.path.join(directory, "vocab.model")
  if not os.path.exists(model):
    return OffsetTokenizer(tokenization.load_tokenizer(
        vocab_file=os.path.join(directory, "vocab.txt")))
  settings = {}
  if os.path.exists(os.path.join(directory, TOKENIZER_FILE)):
    with open(os.path.join(directory, TOKENIZER_FILE)) as f:
      settings = json.load(f)
  return OffsetTokenizer(tokenization.tokenizer_for_vocab(
      model, split_punctuation=bool(settings.get("split_punctuation", False))))


def load_task_export(directory: str, description: str) -> Tuple[dict, RunBatch, object]:
  """-> (task_config, run_batch, the loaded SavedModel: keep it alive while predicting).

  `description` names the export in the error, e.g. "an NQ export (`python -m tasks.nq finetune`
  writes <output_dir>/export)".
  """
  path = os.path.join(directory, TASK_CONFIG_FILE)
  if not os.path.exists(path):
    raise FileNotFoundError(f"{directory}: not {description}; {TASK_CONFIG_FILE} is missing")
  with open(path) as f:
    config = json.load(f)
  loaded = tf.saved_model.load(os.path.join(directory, "saved_model"))
  serve = loaded.signatures["serving_default"]

  def run_batch(batch):
    out = serve(**{name: tf.constant(value) for name, value in batch.items()})
    return {name: value.numpy() for name, value in out.items()}
  return config, run_batch, loaded


def model_run_batch(model, output_names: Sequence[str]) -> RunBatch:
  """run_batch for an in-memory model (one traced tf.function)."""
  @tf.function
  def call(inputs):
    return model(inputs, training=False)

  def run_batch(batch):
    out = call({name: tf.constant(value) for name, value in batch.items()})
    return {name: out[name].numpy() for name in output_names}
  return run_batch


class TaskPredictor:
  """The common part of a task's predictor: how to run the model, convert, and tokenize.

  A subclass sets `feature_config_class`, `input_features` (the export's inputs),
  `output_names`, `export_description` and, when a setting chosen after training travels
  with the export (e.g. a threshold), `setting_names`; it adds its own `predict(examples,
  batch_size)` returning the prediction file's content.

  Args:
    run_batch: dict of feature arrays [b, ...] -> dict of the `output_names` arrays.
    feature_config: how inputs are converted.
    tokenizer: the tokenizer of the model's vocabulary.
    settings: values of `setting_names` (missing ones take the subclass's defaults).
  """
  feature_config_class: type = None
  input_features: Sequence[str] = ()
  output_names: Sequence[str] = ()
  setting_names: Sequence[str] = ()
  export_description: str = "a task export"

  def __init__(self, run_batch: RunBatch, feature_config, tokenizer: OffsetTokenizer,
               settings: Optional[Dict[str, Any]] = None):
    self.run_batch = run_batch
    self.feature_config = feature_config
    self.tokenizer = tokenizer
    self.settings = dict(settings or {})

  @classmethod
  def from_export(cls, directory: str):
    config, run_batch, loaded = load_task_export(directory, cls.export_description)
    try:
      feature_config = cls.feature_config_class(**config["feature_config"])
    except (TypeError, ValueError) as e:   # a key this release removed or does not know
      raise ValueError(f"{os.path.join(directory, TASK_CONFIG_FILE)}: field 'feature_config': "
                       f"{e}") from None
    predictor = cls(run_batch, feature_config, export_tokenizer(directory),
                    {name: config[name] for name in cls.setting_names if name in config})
    predictor.loaded = loaded  # keeps the SavedModel's variables alive
    return predictor

  @classmethod
  def from_model(cls, model, feature_config, tokenizer: OffsetTokenizer,
                 settings: Optional[Dict[str, Any]] = None):
    return cls(model_run_batch(model, cls.output_names), feature_config, tokenizer, settings)

  def run_examples(self, items: Sequence[Tuple[Any, Dict[str, np.ndarray]]], batch_size: int,
                   use: Callable[[Any, Dict[str, np.ndarray]], None], total: Optional[int],
                   unit: str = "examples", log: Callable[[str], None] = None) -> int:
    """Runs (example, features) pairs through the model `batch_size` at a time and calls
    use(example, outputs of its row) for each, in order; logs progress (`total` None: not known
    in advance, as for a stream). Returns how many ran."""
    log = log or logging.info
    pending, done, start = [], 0, time.perf_counter()

    def flush():
      nonlocal done
      batch = tfrecords.stack_features([f for _, f in pending], self.input_features)
      outputs = self.run_batch(batch)
      for row, (example, _) in enumerate(pending):
        use(example, {name: value[row] for name, value in outputs.items()})
      done += len(pending)
      pending.clear()
      if done % (50 * batch_size) < batch_size:
        log(f"  predicted {done}{'' if total is None else f'/{total}'} {unit} "
            f"({done / max(time.perf_counter() - start, 1e-9):.1f}/s)")

    for item in items:
      pending.append(item)
      if len(pending) == batch_size:
        flush()
    if pending:
      flush()
    log(f"predicted {done} {unit} in {time.perf_counter() - start:.1f} s")
    return done


def set_export_settings(directory: str, settings: Dict[str, Any]) -> None:
  """Records settings chosen after export (e.g. a threshold) in its task_config.json."""
  path = os.path.join(directory, TASK_CONFIG_FILE)
  with open(path) as f:
    config = json.load(f)
  config.update(settings)
  atomic_write_json(path, config)
