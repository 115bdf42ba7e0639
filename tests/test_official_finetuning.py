"""A fine-tuning run that starts from an official ETC checkpoint folder (the released layout's
fixture): the vocabulary comes from the folder, the encoder from its model.ckpt, and the run
trains, scores dev and exports end to end."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from etc_realformer.models import official_checkpoint
from synthetic_data import wikihop as synthetic
from tasks.wikihop.task import TASK

FOLDER = os.path.join(os.path.dirname(__file__), "fixtures", "official_etc", "released_layout")


@pytest.mark.slow
def test_wikihop_fine_tunes_from_an_official_checkpoint(tmp_path):
  data = synthetic.ensure_demo_data(str(tmp_path / "data"), 16, 8, seed=0, preset="short")
  model = official_checkpoint.read_official_config(os.path.join(FOLDER, "model.ckpt")).to_dict()
  model.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
  run_config = {
      "model": model,
      "features": {"long_seq_len": 256, "global_seq_len": 96, "max_num_sentences": 20},
      "train": {"train_file": data["train"], "dev_file": data["dev"], "vocab_file": "",
                "init_checkpoint": os.path.join(FOLDER, "model.ckpt"), "batch_size": 4,
                "num_train_steps": 2, "warmup_steps": 0, "learning_rate": 1e-9,
                "optimizer": "adamw", "checkpoint_every": 2, "log_every": 1, "eval_batch_size": 4},
  }
  out = str(tmp_path / "run")
  metrics = TASK.run_finetuning(run_config, out, verbose=0)
  # The folder's vocabulary was used, not one learned from the training file.
  with open(os.path.join(FOLDER, "vocab.txt")) as f, open(os.path.join(out, "vocab.txt")) as g:
    assert f.read() == g.read()
  assert 0.0 <= metrics["dev"]["accuracy"] <= 1.0
  assert os.path.exists(os.path.join(out, "export", "saved_model", "saved_model.pb"))
  with open(os.path.join(out, "dev_predictions.json")) as f:
    assert len(json.load(f)) == 8
  # The encoder started from the official weights (two steps at lr 1e-9 barely move them).
  reader = tf.train.load_checkpoint(os.path.join(FOLDER, "model.ckpt"))
  restored = tf.train.load_checkpoint(tf.train.latest_checkpoint(os.path.join(out, "checkpoints")))
  names = [n for n in restored.get_variable_to_shape_map()
           if "embeddings/token_embeddings/" in n and "OPTIMIZER_SLOT" not in n]
  assert names, "no token table in the run's checkpoint"
  np.testing.assert_allclose(restored.get_tensor(names[0]),
                             reader.get_tensor("etc_document_bert/token_emb_lookup/embedding_table"),
                             atol=1e-6)
