"""etc_realformer: ETC global-local attention with RealFormer residual attention (tf-keras)."""

import os

# tf-keras (the Keras 2 API) must be what `tf.keras` means; set before TensorFlow is imported.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

__version__ = "0.1.0"

from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
from etc_realformer import layers  # pylint: disable=g-import-not-at-top
from etc_realformer import ops  # pylint: disable=g-import-not-at-top
from etc_realformer.models import EtcModel, EtcPretrainingModel  # pylint: disable=g-import-not-at-top
