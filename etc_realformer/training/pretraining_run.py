"""Pretraining run: config -> model, optimizer, data, resume, Keras fit, final checkpoint.

`run_pretraining(run_config, output_dir, distribution)` is what `python -m
etc_realformer.pretrain` calls; tests and benchmarks call it directly.

Output directory:
  run_config.json           the resolved model + training config
  checkpoints/ckpt-<step>.*  tf.train.Checkpoint(model, optimizer), every `checkpoint_every` steps
  logs/                     TensorBoard scalars
  final/encoder-*           the encoder alone (tf.train.Checkpoint(encoder=...)) + etc_config.json
                            and the data's vocabulary (vocab.txt or vocab.model) when it has one
                            (with `train.corpus`: train.vocab_file)
  final/metrics.json        last training metrics, steps, tokens/s

With `train.corpus` set the examples are streamed from the corpus (data/streaming.py: files, or
one prepared TFDS dataset "tfds:<name>/<config>[:<split>]" under `train.tfds_data_dir`; shapes
from the config's `data:` section, vocabulary `train.vocab_file`) instead of read from the
shards of `train.train_data`.
"""

import dataclasses
import os
from typing import Any, Dict, Optional

import tensorflow as tf
import tf_keras

from etc_realformer.io_utils import atomic_write_json
from etc_realformer.data import pretraining_data
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import streaming
from etc_realformer.data import tfds_source
from etc_realformer.data import tfrecords
from etc_realformer.models.pretraining import EtcPretrainingModel
from etc_realformer.training.distribution import Distribution
from etc_realformer.training import run_config as run_config_lib
from etc_realformer.training.initialization import make_initializer, model_config_for_run
from etc_realformer.training.loop import LoopConfig, check_distribution, run_training_loop


@dataclasses.dataclass
class TrainConfig(LoopConfig):
  """Training settings (the `train:` section of a pretraining config)."""
  train_data: str = ""              # directory with shards + data_config.json
  mlm_loss_weight: float = 0.8
  cpc_loss_weight: float = 0.2
  cpc_group_size: int = 0
  init_checkpoint: str = ""         # start from an encoder: this package's (a pretraining run's
                                    # final/encoder), an official ETC model.ckpt prefix, or a
                                    # BERT folder (lifted; docs/lifting.md)
  corpus: str = ""                  # corpus files / glob patterns, comma separated: stream
                                    # examples from them (no shards; train_data is not read)
  vocab_file: str = ""              # WordPiece vocab.txt of the streamed examples ("": the
                                    # embedded vocabulary)
  data_service_address: str = ""    # with corpus: a tf.data service dispatcher to make them
  tfds_data_dir: str = ""           # with corpus "tfds:<name>/<config>[:<split>]": where the
                                    # prepared TFDS dataset is ("": TFDS's default)


def load_run_config(path: str) -> Dict[str, Any]:
  """A pretraining config file -> {model, train, data} dicts.

  `train` holds TrainConfig fields and `data` PretrainingDataConfig fields (used when the
  embedded corpus is converted); see etc_realformer.training.run_config for the format.
  """
  return run_config_lib.load_run_config(path, ("train", "data"))


def run_pretraining(run_config: Dict[str, Any], output_dir: str,
                    distribution: Optional[Distribution] = None, verbose: int = 1,
                    extra_callbacks=()) -> Dict[str, Any]:
  """Trains (or resumes) to train.num_train_steps; returns the final metrics dict.

  The Keras mixed-precision policy is set from train.mixed_precision for the run and put back
  afterwards.
  """
  previous_policy = tf_keras.mixed_precision.global_policy()
  try:
    return _run(run_config, output_dir, distribution, verbose, extra_callbacks)
  finally:
    tf_keras.mixed_precision.set_global_policy(previous_policy)


def _run(run_config, output_dir, distribution, verbose, extra_callbacks):
  distribution = distribution or Distribution("none")
  data = run_config.get("data") or {}
  lengths = pe.PretrainingDataConfig.long_seq_len, pe.PretrainingDataConfig.global_seq_len
  model_config = model_config_for_run(
      run_config["model"], (run_config.get("train") or {}).get("init_checkpoint", ""),
      "pretraining config", max(data.get("long_seq_len", lengths[0]),
                                data.get("global_seq_len", lengths[1])))
  train = TrainConfig.from_dict(dict(run_config.get("train") or {}))
  check_distribution(train, distribution)
  global_batch = train.global_batch_size(distribution)
  if train.corpus:
    data_config = pe.PretrainingDataConfig.from_dict(dict(run_config.get("data") or {}))
    vocab_file = train.vocab_file or pretraining_data.EMBEDDED_VOCAB
    tokenizer = streaming.as_word_piece(vocab_file)
    data_vocab, data_source = tokenizer.vocab_size, vocab_file
    if tfds_source.is_tfds_spec(train.corpus):
      # Fail now (not prepared, no text field) rather than inside the input pipeline.
      tfds_source.load_prepared_builder(train.corpus, train.tfds_data_dir or None)
    elif not train.data_service_address:  # fail now if this worker has no files of its own
      streaming.worker_files(streaming.expand_inputs(train.corpus), distribution.num_workers,
                             distribution.worker_index)
  else:
    if not train.train_data:
      raise ValueError("train_data: no pretraining data directory given (make one with "
                       "`python -m etc_realformer.create_pretraining_data`), and no "
                       "train.corpus to stream from")
    data_config, data_vocab = tfrecords.read_data_config(train.train_data)
    data_source = train.train_data
    files = tfrecords.expand_files(os.path.join(train.train_data, "*.tfrecord"))
  if data_vocab > model_config.vocab_size:
    raise ValueError(f"{data_source}: data uses a vocabulary of {data_vocab} ids but the "
                     f"model's vocab_size is {model_config.vocab_size}")
  if distribution.is_chief:
    os.makedirs(output_dir, exist_ok=True)
    resolved = {"model": model_config.to_dict(), "train": dataclasses.asdict(train),
                "data": dataclasses.asdict(data_config), "distribution": distribution.kind,
                "num_workers": distribution.num_workers, "global_batch_size": global_batch}
    atomic_write_json(os.path.join(output_dir, "run_config.json"), resolved)

  def build():
    model = EtcPretrainingModel(model_config, mlm_loss_weight=train.mlm_loss_weight,
                                cpc_loss_weight=train.cpc_loss_weight,
                                cpc_group_size=train.cpc_group_size, name="pretraining")
    model.build()
    return model

  def make(num_slices, slice_index, start_step):
    if train.corpus:
      # Worker slice_index of num_slices streams its own corpus files; resuming skips the
      # start_step batches it already trained on (the stream is a seeded function of the step).
      inputs, documents = train.corpus, None
      if tfds_source.is_tfds_spec(train.corpus):
        inputs = None
        documents = lambda workers, index: tfds_source.tfds_text_dataset(  # pylint: disable=g-long-lambda
            train.corpus, train.tfds_data_dir or None, workers, index)
      return streaming.make_streaming_dataset(
          inputs, tokenizer, data_config, global_batch, num_slices, slice_index,
          documents_dataset=documents,
          seed=train.seed, skip_batches=start_step, shuffle_buffer=train.shuffle_buffer,
          data_service_address=train.data_service_address or None)
    return tfrecords.make_dataset(files, data_config, global_batch, num_slices, slice_index,
                                  shuffle_buffer=train.shuffle_buffer, seed=train.seed,
                                  skip_batches=start_step)

  model, metrics = run_training_loop(
      build, make, train, output_dir, distribution, verbose=verbose,
      extra_callbacks=extra_callbacks, tokens_per_step=global_batch * data_config.long_seq_len,
      initialize=make_initializer(train.init_checkpoint, model_config))
  if distribution.is_chief:
    export_encoder(model, os.path.join(output_dir, "final"))
    vocab = (train.vocab_file or pretraining_data.EMBEDDED_VOCAB) if train.corpus else (
        pretraining_data.find_vocab(train.train_data))
    if vocab:  # fine-tuning from final/ then finds the vocabulary the encoder learned
      pretraining_data.copy_vocab(vocab, os.path.join(output_dir, "final"))
    atomic_write_json(os.path.join(output_dir, "final", "metrics.json"), metrics)
  return metrics


def export_encoder(model: EtcPretrainingModel, directory: str) -> str:
  """Writes the encoder weights (tf.train.Checkpoint(encoder=...)) and its etc_config.json."""
  os.makedirs(directory, exist_ok=True)
  atomic_write_json(os.path.join(directory, "etc_config.json"), model.encoder.etc_config.to_dict())
  return tf.train.Checkpoint(encoder=model.encoder).write(os.path.join(directory, "encoder"))

