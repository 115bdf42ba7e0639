"""The common part of fine-tuning models: an EtcModel encoder plus task heads, serialisable.

A task model subclasses `TaskModel`, creates its heads in `__init__` with `self.initializer()`,
lists them in `self.heads` (each takes [..., hidden_size] inputs), sets `self.tracked` and
defines `call` and `compute_losses` (see LossModel). get_config/from_config and build are here.
"""

from typing import Any, Dict, List, Union

import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.models.encoder import EtcModel
from etc_realformer.models.loss_model import LossModel


class TaskModel(LossModel):
  """EtcModel `encoder` + the subclass's `heads`.

  Args:
    config: EtcConfig (or its dict) of the encoder.
    implementation: "blocked" or "dense" (see EtcModel).
  """

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               **kwargs):
    super().__init__(**kwargs)
    if not isinstance(config, EtcConfig):
      config = EtcConfig.from_dict(dict(config))
    self.etc_config = config
    self.implementation = implementation
    self.encoder = EtcModel(config, implementation=implementation, name="encoder")
    self.heads: List[tf_keras.layers.Layer] = []

  def initializer(self):
    return tf_keras.initializers.TruncatedNormal(stddev=self.etc_config.initializer_range)

  def build(self, input_shape=None):
    build_in_scope(self.encoder, None)
    for head in self.heads:
      build_in_scope(head, [None, self.etc_config.hidden_size])
    self.built = True

  def get_config(self):
    return {"config": self.etc_config.to_dict(), "implementation": self.implementation,
            "name": self.name}

  @classmethod
  def from_config(cls, config, custom_objects=None):
    return cls(**config)
