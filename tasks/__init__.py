"""Fine-tuning tasks built on the ETC-RealFormer encoder."""

# The package first: it sets TensorFlow's environment (tf-keras as `tf.keras`, the CPU
# allocator) before anything here imports TensorFlow. Imported later, TensorFlow would also
# load Keras 3 (about a second of every task command's start-up).
import etc_realformer  # noqa: F401  pylint: disable=unused-import
