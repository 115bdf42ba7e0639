"""Activation functions by their config name (the `hidden_act` values).

"gelu" is the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the function
BERT and official ETC call gelu (a released ETC checkpoint only reproduces its outputs with
it); "gelu_approximate" is the same function under its explicit name and "gelu_exact" the
erf form x Phi(x).
"""

from typing import Callable

import tensorflow as tf
import tf_keras

from etc_realformer.config import ACTIVATIONS


def activation(name: str) -> Callable[[tf.Tensor], tf.Tensor]:
  """The activation function called `name` (one of ACTIVATIONS)."""
  if name in ("gelu", "gelu_approximate"):
    return lambda x: tf.nn.gelu(x, approximate=True)
  if name == "gelu_exact":
    return lambda x: tf.nn.gelu(x, approximate=False)
  if name not in ACTIVATIONS:
    raise ValueError(f"hidden_act must be one of {ACTIVATIONS}, got {name!r}")
  return tf_keras.activations.get(name)
