"""Exporting a fine-tuned task model as a SavedModel directory, and loading it to predict.

Export directory (every task):
  saved_model/       tf.saved_model with a `serving_default` signature: the task's int32 model
                     features ([batch, length] each) -> its named head outputs
  vocab.txt          the WordPiece vocabulary the features were made with
  task_config.json   what the task needs to convert and decode (feature config, encoder config,
                     thresholds, ...)

The directory is written under `<directory>.tmp` and renamed when complete, replacing an older
export, so a crash never leaves half an export under the final name.
"""

import json
import os
import shutil
from typing import Callable, Dict, Sequence, Tuple

import numpy as np
import tensorflow as tf

from etc_realformer.io_utils import atomic_write_json

TASK_CONFIG_FILE = "task_config.json"
RunBatch = Callable[[Dict[str, np.ndarray]], Dict[str, np.ndarray]]


def export_task_model(model, input_lengths: Dict[str, int], output_names: Sequence[str],
                      vocab_file: str, directory: str, task_config: dict) -> str:
  """Writes the export directory (see the module docstring); returns it."""
  tmp = directory.rstrip("/") + ".tmp"
  if os.path.exists(tmp):
    shutil.rmtree(tmp)
  os.makedirs(tmp)
  module = tf.Module()
  module.model = model
  signature = {name: tf.TensorSpec([None, length], tf.int32, name=name)
               for name, length in input_lengths.items()}

  @tf.function(input_signature=[signature])
  def serve(inputs):
    outputs = model(inputs, training=False)
    return {name: outputs[name] for name in output_names}

  module.serve = serve
  tf.saved_model.save(module, os.path.join(tmp, "saved_model"),
                      signatures={"serving_default": serve.get_concrete_function()})
  shutil.copyfile(vocab_file, os.path.join(tmp, "vocab.txt"))
  atomic_write_json(os.path.join(tmp, TASK_CONFIG_FILE), task_config)
  if os.path.exists(directory):
    shutil.rmtree(directory)
  os.replace(tmp, directory)
  return directory


def load_task_export(directory: str, description: str) -> Tuple[dict, RunBatch, object]:
  """-> (task_config, run_batch, the loaded SavedModel: keep it alive while predicting).

  `description` names the export in the error, e.g. "an NQ export (`python -m tasks.nq.finetune`
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
  call = tf.function(lambda inputs: model(inputs, training=False))

  def run_batch(batch):
    out = call({name: tf.constant(value) for name, value in batch.items()})
    return {name: out[name].numpy() for name in output_names}
  return run_batch
