"""Fine-tuning tasks built on the ETC-RealFormer encoder."""

import os

# tf-keras as `tf.keras`, set before anything here imports TensorFlow: otherwise TensorFlow also
# loads Keras 3 (about a second of every task command's start-up). etc_realformer/__init__.py
# sets the same; it is not imported here, so that the scorers (tasks/<task>/metrics.py) stay
# free of TensorFlow.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
