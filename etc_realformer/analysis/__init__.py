"""Attention analysis: entropy and layer-to-layer similarity of ETC attention, and plots.

  attention_stats  pure NumPy statistics of attention probabilities (no TensorFlow)
  loading          checkpoint / data resolution and the batched run that collects the stats
  plots            matplotlib figures (violin plots, comparison, sentence -> global map)
  report           the analysis.json summary and the stdout table
  pipeline         run_analysis: all of the above for one checkpoint or a comparison

`python -m etc_realformer.analyze` is the command line over these.
"""
