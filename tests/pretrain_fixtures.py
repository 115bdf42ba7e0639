"""Shared set-up for the pretraining tests: tiny shards from the generated corpus, run configs."""

import copy
import json
import os
import subprocess
import sys

import numpy as np

from etc_realformer import EtcConfig
from etc_realformer.data import pretraining_data
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.data import synthetic_corpus
from etc_realformer.data.tokenization import WordPieceTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, "tests", "pretrain_worker.py")
DATA_CONFIG = pe.PretrainingDataConfig(long_seq_len=64, global_seq_len=8,
                                       max_predictions_per_seq=12, max_cpc_per_seq=2,
                                       cpc_sentence_len=12)


def bert_folder(directory):
  """A random 2-layer BERT folder (Hugging Face names, 32 wide) over the embedded vocabulary, as
  the tiny configs lift it; returns its token table [vocab, 32]."""
  import test_bert_lifting as tbl  # pylint: disable=g-import-not-at-top
  tensors = tbl._random_bert_folder(directory, pretraining_data.EMBEDDED_VOCAB)  # pylint: disable=protected-access
  return tensors["bert.embeddings.word_embeddings.weight"]


def assert_trained_from_bert(weights, bert_table):
  """The run's token table (in `weights`, {name: array}) still follows BERT's (rows from 104 on;
  the reserved rows before hold the global tokens' own start) but has moved."""
  table = [w for name, w in weights.items() if "token_embeddings" in name]
  assert len(table) == 1 and table[0].shape == bert_table.shape
  assert np.corrcoef(table[0][104:].ravel(), bert_table[104:].ravel())[0, 1] > 0.9
  assert not np.allclose(table[0][104:], bert_table[104:])


def make_tiny_data(directory, num_documents=40, data_config=DATA_CONFIG):
  corpus = os.path.join(directory, "corpus.txt")
  synthetic_corpus.write_corpus(corpus, num_documents=num_documents, seed=3)
  data_dir = os.path.join(directory, "shards")
  pretraining_data.convert_corpus(
      [corpus], data_dir, WordPieceTokenizer(pretraining_data.EMBEDDED_VOCAB), data_config,
      num_shards=2, seed=0, log=lambda *_: None)
  return data_dir


def tiny_run_config(train_data, **train):
  model = EtcConfig.from_file(os.path.join(ROOT, "configs", "models", "tiny.yaml")).to_dict()
  model.update(vocab_size=1088, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
  values = dict(train_data=train_data, batch_size=4, num_train_steps=3, warmup_steps=1,
                learning_rate=0.01, optimizer="lamb", checkpoint_every=100, log_every=1,
                shuffle_buffer=100, seed=7)
  values.update(train)
  return {"model": model, "train": values}


def write_spec(path, run_config, output_dir, weights_out, distribution="none", **extra):
  spec = dict(run_config=copy.deepcopy(run_config), output_dir=output_dir,
              weights_out=weights_out, distribution=distribution, **extra)
  with open(path, "w") as f:
    json.dump(spec, f)
  return path


def worker_env():
  env = dict(os.environ)
  env.update(TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)
  return env


def run_worker(spec_path, timeout=600, extra_args=(), env=None):
  return subprocess.run([sys.executable, WORKER, spec_path, *extra_args], env=env or worker_env(),
                        capture_output=True, text=True, timeout=timeout, check=False)


def killed_and_resumed(directory, run_config, kill_at_step):
  """Runs `run_config` once uninterrupted (a) and once SIGKILLed right after step
  `kill_at_step`'s checkpoint, then started again (b), each in its own process.

  Returns (weights of a, weights of b, b's resumed metrics): {variable name: array}.
  """
  directory = str(directory)
  path = lambda name: os.path.join(directory, name)  # pylint: disable=unnecessary-lambda-assignment
  result = run_worker(write_spec(path("a.json"), run_config, path("a"), path("a.npz")))
  assert result.returncode == 0, result.stderr[-3000:]
  killed = write_spec(path("b.json"), run_config, path("b"), path("b.npz"),
                      kill_at_step=kill_at_step)
  result = run_worker(killed)
  assert result.returncode == -9, result.stderr[-3000:]
  assert not os.path.exists(path("b.npz"))
  result = run_worker(write_spec(path("c.json"), run_config, path("b"), path("b.npz")))
  assert result.returncode == 0, result.stderr[-3000:]
  with open(path("b.npz.json")) as f:
    metrics = json.load(f)
  return dict(np.load(path("a.npz"))), dict(np.load(path("b.npz"))), metrics
