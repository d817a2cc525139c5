"""Layers: Module and Parameter, Embedding and EmbeddingBag, Linear, LSTM, positions,
normalisation, dropout and attention."""

import rowbook.nn.functional as functional
from rowbook.nn import init
from rowbook.nn.attention import KVCache, MultiheadAttention
from rowbook.nn.embedding import Embedding, EmbeddingBag
from rowbook.nn.layers import GELU, Dropout, Linear, ReLU, Sequential, Sigmoid, SiLU, Tanh
from rowbook.nn.module import Module, Parameter
from rowbook.nn.norm import LayerNorm, RMSNorm
from rowbook.nn.position import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    TiedOutput,
)
from rowbook.nn.recurrent import LSTM, LSTMCell

__all__ = [
    "GELU",
    "LSTM",
    "Dropout",
    "Embedding",
    "EmbeddingBag",
    "KVCache",
    "LSTMCell",
    "LayerNorm",
    "LearnedPositionalEmbedding",
    "Linear",
    "Module",
    "MultiheadAttention",
    "Parameter",
    "RMSNorm",
    "ReLU",
    "RotaryEmbedding",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SinusoidalPositionalEncoding",
    "Tanh",
    "TiedOutput",
    "functional",
    "init",
]
