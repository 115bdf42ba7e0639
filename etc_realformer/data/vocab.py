"""Special token ids shared by every tokenizer, task and pretraining pipeline.

The layout is the BERT uncased vocabulary's, so an official BERT/ETC `vocab.txt` works unchanged:
id 0 is padding, ids 1..99 are the `[unusedN]` slots (ETC uses the first few as global-token
types), 100..103 are `[UNK] [CLS] [SEP] [MASK]`. A vocabulary learned by
`python -m etc_realformer.learn_vocab` reserves the same 104 entries first.

Global tokens share the embedding table of the word pieces. Every ETC checkpoint was pretrained
with id 1 for the sentence tokens (2 for a sentence hidden for CPC), whatever its vocabulary.
The other global ids are the official converters' choices, which for the RoBERTa SentencePiece
vocabulary of the ETC-large checkpoints differ per task (docs/tokenizers.md):
`WORDPIECE_GLOBAL_IDS` / `SENTENCEPIECE_GLOBAL_IDS` are HotpotQA's two tables; WikiHop keeps
1, 3, 4, 5 with both vocabularies; NQ uses the tokenizer's [CLS] and 35 for question tokens.
"""

import dataclasses

PAD_ID = 0
SENTENCE_ID = 1      # one global token per sentence
CPC_MASK_ID = 2      # the global token of a sentence hidden for CPC
QUESTION_ID = 3
CANDIDATE_ID = 4
PARAGRAPH_ID = 5
NQ_QUESTION_ID = 35  # "[unused34]" in BERT uncased; "<unused_34>" in the ETC SentencePiece model
UNK_ID = 100
CLS_ID = 101
SEP_ID = 102
MASK_ID = 103

NUM_UNUSED = 99
# The first 104 vocabulary entries, in id order.
RESERVED_TOKENS = (["[PAD]"] + [f"[unused{i}]" for i in range(NUM_UNUSED)]
                   + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"])
assert len(RESERVED_TOKENS) == MASK_ID + 1


@dataclasses.dataclass(frozen=True)
class GlobalTokenIds:
  """The ids a converter puts in `global_token_ids` for each kind of global token."""
  cls: int
  sentence: int
  cpc_mask: int
  question: int
  candidate: int
  paragraph: int


# BERT uncased: [CLS] and [unused0..4].
WORDPIECE_GLOBAL_IDS = GlobalTokenIds(cls=CLS_ID, sentence=SENTENCE_ID, cpc_mask=CPC_MASK_ID,
                                      question=QUESTION_ID, candidate=CANDIDATE_ID,
                                      paragraph=PARAGRAPH_ID)
# The official HotpotQA converter with the ETC-large SentencePiece model: "<unused_39..42>" for
# CLS, question, candidate and paragraph; sentence and CPC keep the pretraining ids 1 and 2.
SENTENCEPIECE_GLOBAL_IDS = GlobalTokenIds(cls=40, sentence=SENTENCE_ID, cpc_mask=CPC_MASK_ID,
                                          question=41, candidate=42, paragraph=43)


def global_ids_for(tokenizer_kind: str) -> GlobalTokenIds:
  """HotpotQA's global ids for a "wordpiece" or "sentencepiece" tokenizer (`Tokenizer.kind`)."""
  tables = {"wordpiece": WORDPIECE_GLOBAL_IDS, "sentencepiece": SENTENCEPIECE_GLOBAL_IDS}
  if tokenizer_kind not in tables:
    raise ValueError(f"tokenizer kind {tokenizer_kind!r}: expected one of {sorted(tables)}")
  return tables[tokenizer_kind]
