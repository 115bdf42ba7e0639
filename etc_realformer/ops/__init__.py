"""Pure tensor functions (no variables): relative ids, blocking, side inputs."""

from etc_realformer.ops.activations import activation
from etc_realformer.ops.blocking import (blocked_side_inputs, concat_neighbor_blocks,
                                         frame_window, merge_blocks, split_into_blocks,
                                         window_key_in_range, window_to_blocked,
                                         window_to_dense)
from etc_realformer.ops.lookup import select_by_id
from etc_realformer.ops.relative import (full_relative_ids, own_sentence_id, other_sentence_id,
                                         relative_ids_from_distance, unordered_context_id,
                                         window_relative_ids)
from etc_realformer.ops.side_inputs import (SIDE_INPUT_NAMES, example_ids_from_breakpoints,
                                            example_ids_from_token_ids, make_side_inputs)
