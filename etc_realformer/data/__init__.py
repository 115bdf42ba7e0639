"""Data: tokenisation, corpora, pretraining examples and TFRecord I/O."""
