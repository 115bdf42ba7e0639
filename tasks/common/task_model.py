"""The common part of fine-tuning models: an EtcModel encoder plus task heads, serialisable.

A task model subclasses `TaskModel`, sets `model_features` (what the encoder reads) and
`metric_names` (what compute_losses returns), creates its heads in `make_heads` (`self.dense`;
it returns those that take [..., hidden_size] inputs) and defines `call` (with `self.encode`)
and `compute_losses` (see LossModel). get_config/from_config and build are here.
"""

from typing import Any, Dict, List, Sequence, Union

import tf_keras

from etc_realformer.config import EtcConfig
from etc_realformer.layers.scopes import build_in_scope
from etc_realformer.models.encoder import EtcModel
from etc_realformer.models.loss_model import LossModel


NEG = -10000.0   # the logit of a position a softmax must not choose


class TaskModel(LossModel):
  """EtcModel `encoder` + the subclass's `heads`.

  Class attributes:
    model_features: the features passed to the encoder (those present in the input).
    metric_names: the scalars compute_losses returns, tracked as Keras metrics.

  Args:
    config: EtcConfig (or its dict) of the encoder.
    implementation: "blocked" or "dense" (see EtcModel).
  """

  model_features: Sequence[str] = ()
  metric_names: Sequence[str] = ("loss",)

  def __init__(self, config: Union[EtcConfig, Dict[str, Any]], implementation: str = "blocked",
               **kwargs):
    super().__init__(**kwargs)
    self.etc_config = config = EtcConfig.coerce(config)
    self.implementation = implementation
    self.encoder = EtcModel(config, implementation=implementation, name="encoder")
    self.heads: List[tf_keras.layers.Layer] = []
    self.tracked = {name: tf_keras.metrics.Mean(name) for name in self.metric_names}
    self.heads = self.make_heads()

  def make_heads(self) -> List[tf_keras.layers.Layer]:
    """Creates the task's head layers (as attributes) and returns those applied to encoder
    outputs of width hidden_size (built by `build`)."""
    return []

  def initializer(self):
    return tf_keras.initializers.TruncatedNormal(stddev=self.etc_config.initializer_range)

  def dense(self, units: int, name: str) -> tf_keras.layers.Dense:
    """A head layer initialised as the encoder's weights are."""
    return tf_keras.layers.Dense(units, kernel_initializer=self.initializer(), name=name)

  def encode(self, features: Dict[str, Any], training=None, **extra) -> Dict[str, Any]:
    """The encoder's outputs ({"long_output": [B, L, H], "global_output": [B, G, H]}) for the
    `model_features` present in `features`."""
    inputs = {name: features[name] for name in self.model_features if name in features}
    return self.encoder(inputs, training=training, **extra)

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
