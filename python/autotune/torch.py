"""PyTorch models with autotune's kernels.

    tasks = autotune.torch.tasks(model, (x,))            # the model's tunable layers, for `autotune tune --tasks`
    json.dump(tasks, open("tasks.json", "w"))
    #   autotune tune --tasks tasks.json --target cuda --db autotune.db
    fast, report = autotune.torch.optimize(model, autotune.Database("autotune.db"), (x,))

Tunable layers: nn.Conv2d (zero padding, the same stride, padding and dilation in both dimensions;
conv2d_nhwc where its input is in torch.channels_last memory format, on the same memory),
nn.Linear, and torch.bmm / torch.matmul / @ of two matrices or of two tensors with the same leading
dimensions (flattened into a batch_matmul's batch: an attention's batch and heads); a bias is fused, and so
are a sum with another tensor of the output's shape (a shortcut: `residual`) and then the activation
(nn.ReLU, ReLU6, GELU, SiLU or their functional forms) when each goes only to the next. The model is traced with torch.fx at the example inputs' shapes; `optimize`
replaces each layer the database has a kernel for (exactly, or with nearest=True a nearby shape's)
by a module that calls it, and keeps PyTorch's computation for the others and for inputs of other
shapes than the traced ones. The kernels are loaded (compiled) by `optimize`, so the model can be
captured in a CUDA graph afterwards. For inference: a Linear's transposed weight is taken once."""
import copy
import math
import operator
from dataclasses import dataclass, field

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.shape_prop import ShapeProp

from ._library import AutotuneError
from .tensors import DTYPE_NAMES

_DTYPES = {getattr(torch, name): name for name in DTYPE_NAMES}
_MATMULS = (torch.bmm, torch.matmul, operator.matmul)
# The layers whose float32 products take a precision (tf32, 3xtf32) besides ieee.
PRECISION_OPS = ("gemm", "batch_matmul", "conv1d", "conv2d", "conv2d_nhwc", "conv3d")


def _activation(gm, node):
    """The epilogue part of an activation node ("relu", ...), else None."""
    if node.op == "call_module":
        m = gm.get_submodule(node.target)
        if isinstance(m, nn.ReLU):
            return "relu"
        if isinstance(m, nn.ReLU6):
            return "relu6"
        if isinstance(m, nn.SiLU):
            return "silu"
        if isinstance(m, nn.GELU):
            return "gelu_tanh" if m.approximate == "tanh" else "gelu"
        return None
    if node.op in ("call_function", "call_method"):
        if node.target in (F.relu, torch.relu, "relu") and not node.kwargs.get("inplace"):
            return "relu"
        if node.target is F.relu6:
            return "relu6"
        if node.target in (F.silu, "silu"):
            return "silu"
        if node.target is F.gelu:
            return "gelu_tanh" if node.kwargs.get("approximate") == "tanh" else "gelu"
    return None


@dataclass
class Layer:
    """One tunable layer of a traced model."""
    name: str                # the module's qualified name, or the fx node's
    op: str                  # autotune's operator
    shape: dict              # its parameters
    epilogue: list           # parts, in order
    dtype: str
    nodes: list = field(default_factory=list)  # the fx nodes it covers (the layer, then a fused activation)
    module: object = None    # nn.Conv2d / nn.Linear, or None for a product
    why_not: str = ""        # why it stays PyTorch's (set when untunable)
    residual: object = None  # the fx node added to the output (epilogue "residual")

    def shape_text(self):
        return ",".join(f"{k}={v}" for k, v in self.shape.items())

    def epilogue_text(self):
        return ",".join(self.epilogue)


def _meta(node):
    m = node.meta.get("tensor_meta")
    return m if m is not None and hasattr(m, "shape") else None


def _pair(v, what):
    if isinstance(v, str):
        raise ValueError(f"padding='{v}'")
    a, b = (v, v) if isinstance(v, int) else tuple(v)
    if a != b:
        raise ValueError(f"{what} {a}x{b} differs between the dimensions")
    return a


def _conv2d(gm, node, m, x):
    # A channels_last input is NHWC in memory: conv2d_nhwc's kernels take it as it is.
    channels_last = getattr(x, "memory_format", None) == torch.channels_last
    op = "conv2d_nhwc" if channels_last else "conv2d"
    layer = Layer(node.target, op, {}, [], _DTYPES.get(x.dtype, str(x.dtype)), [node], m)
    try:
        if m.padding_mode != "zeros":
            raise ValueError(f"padding_mode '{m.padding_mode}'")
        if len(x.shape) != 4:
            raise ValueError("input not NCHW")
        n, c, h, w = x.shape
        layer.shape = {"N": n, "C": c, "H": h, "W": w, "K": m.out_channels, "R": m.kernel_size[0], "S": m.kernel_size[1],
                       "stride": _pair(m.stride, "stride"), "pad": _pair(m.padding, "padding"),
                       "dilation": _pair(m.dilation, "dilation"), "groups": m.groups}
    except ValueError as e:
        layer.why_not = f"not a conv2d autotune has: {e}"
    if m.bias is not None:
        layer.epilogue.append("bias")
    return layer


def _linear(gm, node, m, x):
    rows = math.prod(x.shape[:-1])
    layer = Layer(node.target, "gemm", {"M": rows, "N": m.out_features, "K": m.in_features}, [],
                  _DTYPES.get(x.dtype, str(x.dtype)), [node], m)
    if m.bias is not None:
        layer.epilogue.append("bias")
    return layer


def _product(node, a, b):
    """gemm of two matrices; batch_matmul of two tensors of 3 or more dimensions whose leading
    dimensions agree (an attention's batch and heads), those dimensions flattened into the batch."""
    dtype = _DTYPES.get(a.dtype, str(a.dtype))
    if len(a.shape) == len(b.shape) >= 3 and tuple(a.shape[:-2]) == tuple(b.shape[:-2]) and a.shape[-1] == b.shape[-2]:
        return Layer(node.name, "batch_matmul", {"B": math.prod(a.shape[:-2]), "M": a.shape[-2], "N": b.shape[-1],
                                                 "K": a.shape[-1]}, [], dtype, [node])
    if len(a.shape) == 2 and len(b.shape) == 2:
        return Layer(node.name, "gemm", {"M": a.shape[0], "N": b.shape[1], "K": a.shape[1]}, [], dtype, [node])
    return None


def _fuse_residual(layer, node, claimed):
    """A sum with another tensor of the output's shape that the layer's output goes to alone (a
    ResNet block's shortcut) joins the epilogue as `residual`, unless an earlier layer took it."""
    users = list(node.users)
    if len(users) != 1 or users[0] in claimed:
        return
    add = users[0]
    is_add = (add.op == "call_function" and add.target in (operator.add, operator.iadd, torch.add)) or \
             (add.op == "call_method" and add.target in ("add", "add_"))
    if not is_add or len(add.args) != 2 or add.kwargs:
        return
    other = add.args[1] if add.args[0] is node else add.args[0]
    mine, theirs = _meta(node), _meta(other) if isinstance(other, torch.fx.Node) else None
    if other is node or theirs is None or mine is None or tuple(theirs.shape) != tuple(mine.shape) or \
            theirs.dtype != mine.dtype:
        return
    layer.epilogue.append("residual")
    layer.nodes.append(add)
    layer.residual = other


def find_layers(model, example_inputs):
    """The model traced (torch.fx, shapes propagated from example_inputs) and its tunable layers."""
    gm = torch.fx.symbolic_trace(model)
    ShapeProp(gm).propagate(*example_inputs)
    layers = []
    claimed = set()  # nodes a layer covers: each belongs to one
    for node in gm.graph.nodes:
        layer = None
        if node.op == "call_module" and node.args and _meta(node.args[0]):
            m = gm.get_submodule(node.target)
            if isinstance(m, nn.Conv2d):
                layer = _conv2d(gm, node, m, _meta(node.args[0]))
            elif isinstance(m, nn.Linear):
                layer = _linear(gm, node, m, _meta(node.args[0]))
        elif node.op == "call_function" and node.target in _MATMULS and len(node.args) == 2:
            a, b = (_meta(x) if isinstance(x, torch.fx.Node) else None for x in node.args)
            if a and b:
                layer = _product(node, a, b)
        if layer is None:
            continue
        _fuse_residual(layer, node, claimed)
        users = list(layer.nodes[-1].users)
        if len(users) == 1 and users[0] not in claimed and _activation(gm, users[0]):
            layer.epilogue.append(_activation(gm, users[0]))
            layer.nodes.append(users[0])
        claimed.update(layer.nodes)
        if layer.dtype not in _DTYPES.values():
            layer.why_not = layer.why_not or f"element type {layer.dtype}"
        layers.append(layer)
    return gm, layers


def tasks(model, example_inputs, precision="ieee"):
    """The model's tunable layers as `autotune tune --tasks` entries, one per distinct workload,
    weighted by how often it occurs. precision: ieee, or tf32 / 3xtf32 for float32 products
    (gemm, batch_matmul and convolution layers)."""
    _, layers = find_layers(model, example_inputs)
    out = {}
    for layer in layers:
        if layer.why_not:
            continue
        dtype = precision if precision != "ieee" and layer.op in PRECISION_OPS and layer.dtype == "float32" else layer.dtype
        key = (layer.op, layer.shape_text(), layer.epilogue_text(), dtype)
        if key in out:
            out[key]["weight"] += 1
        else:
            out[key] = {"op": layer.op, "shape": layer.shape_text(), "epilogue": layer.epilogue_text(), "dtype": dtype,
                        "weight": 1, "name": layer.name}
    return list(out.values())


class TunedLayer(nn.Module):
    """A layer that calls autotune's kernel for the traced input shape, and PyTorch's computation
    (the original layer and activation) for any other input."""

    def __init__(self, layer, kernel, original):
        super().__init__()
        self.kernel = kernel
        self.op = layer.op
        self.original = original  # a function of the layer's inputs: the PyTorch computation
        self.module = layer.module
        self.expected = tuple(t.shape for t in kernel.inputs[:2])
        self.has_residual = "residual" in layer.epilogue
        if isinstance(layer.module, nn.Linear):
            self.register_buffer("weight_t", layer.module.weight.detach().t().contiguous(), persistent=False)
        # conv2d_nhwc's tensors are NHWC (KRSC weights): channels_last tensors seen in their memory order.
        self.channels_last = layer.op == "conv2d_nhwc"
        weight = None
        if layer.op in ("conv2d", "conv2d_nhwc"):
            weight = layer.module.weight.detach()
            weight = (weight.permute(0, 2, 3, 1) if self.channels_last else weight).contiguous()
            # A cpu kernel that takes the weight packed gets it packed once, here (as it was measured).
            if "weight" in kernel.packs:
                weight = kernel.pack("weight", weight)
        self.register_buffer("conv_weight", weight, persistent=False)

    def _epilogue_inputs(self):
        b = getattr(self.module, "bias", None)
        return [b.detach()] if b is not None else []

    def forward(self, *args):
        # args: the layer's inputs, then the residual when the epilogue has one.
        layer_args, extra = (args[:-1], args[-1:]) if self.has_residual else (args, ())
        if self.op in ("conv2d", "conv2d_nhwc"):
            x = layer_args[0]
            if self.channels_last:  # NCHW views of NHWC memory, in and out
                x, extra = x.permute(0, 2, 3, 1), tuple(r.permute(0, 2, 3, 1) for r in extra)
                if not x.is_contiguous() or not all(r.is_contiguous() for r in extra):
                    return self.original(*args)
            if tuple(x.shape) != self.expected[0]:
                return self.original(*args)
            y = self.kernel(x, self.conv_weight, *self._epilogue_inputs(), *extra)
            return y.permute(0, 3, 1, 2) if self.channels_last else y
        if isinstance(self.module, nn.Linear):
            x = layer_args[0]
            rows = x.reshape(-1, x.shape[-1])
            if tuple(rows.shape) != self.expected[0]:
                return self.original(*args)
            y = self.kernel(rows, self.weight_t, *self._epilogue_inputs(), *(r.reshape(rows.shape[0], -1) for r in extra))
            return y.reshape(*x.shape[:-1], y.shape[-1])
        a, b = layer_args
        a3 = a.reshape(-1, *a.shape[-2:]) if a.dim() > 2 else a
        b3 = b.reshape(-1, *b.shape[-2:]) if b.dim() > 2 else b
        if (tuple(a3.shape), tuple(b3.shape)) != self.expected:
            return self.original(*args)
        y = self.kernel(a3, b3, *(r.reshape(-1, *r.shape[-2:]) if r.dim() > 2 else r for r in extra))
        return y.reshape(*a.shape[:-1], y.shape[-1])


def _original(gm, layer):
    """The PyTorch computation a TunedLayer falls back to."""
    node = layer.nodes[0]
    first = gm.get_submodule(node.target) if node.op == "call_module" else node.target
    act = layer.epilogue[-1] if layer.epilogue and layer.epilogue[-1] not in ("bias", "residual") else None
    acts = {"relu": F.relu, "relu6": F.relu6, "silu": F.silu, "gelu": F.gelu,
            "gelu_tanh": lambda y: F.gelu(y, approximate="tanh")}

    residual = layer.residual is not None

    def run(*args):
        y = first(*(args[:-1] if residual else args))
        if residual:
            y = y + args[-1]
        return acts[act](y) if act else y
    return run


@dataclass
class SwapReport:
    """What optimize did with each tunable layer."""
    rows: list  # (layer, workload, "autotune (exact)" / "autotune (nearest: <measured>)" / "PyTorch: why")

    def swapped(self):
        return sum(1 for r in self.rows if r[2].startswith("autotune"))

    def __str__(self):
        lines = [f"{self.swapped()} of {len(self.rows)} tunable layers run autotune's kernels"]
        lines += [f"  {name}: {workload}: {what}" for name, workload, what in self.rows]
        return "\n".join(lines)


def optimize(model, db, example_inputs, target=None, nearest=False, precision="ieee"):
    """A copy of `model` whose tunable layers call the database's kernels, and a SwapReport.
    target: "cuda" or "cpu" (default: where the example inputs are); precision as for tasks()."""
    first = next(x for x in example_inputs if isinstance(x, torch.Tensor))
    target = target or ("cuda" if first.device.type == "cuda" else "cpu")
    gm, layers = find_layers(copy.deepcopy(model), example_inputs)
    rows = []
    replaced = {}  # a replaced layer's last node -> the node that computes it now
    for i, layer in enumerate(layers):
        workload = f"{layer.op}[{layer.shape_text()}]" + (f"+{layer.epilogue_text()}" if layer.epilogue else "")
        if layer.why_not:
            rows.append((layer.name, workload, f"PyTorch: {layer.why_not}"))
            continue
        prec = precision if layer.op in PRECISION_OPS and layer.dtype == "float32" else "ieee"
        try:
            kernel = db.lookup(layer.op, layer.shape_text(), layer.epilogue_text(), target, layer.dtype, prec, nearest)
        except AutotuneError as e:
            rows.append((layer.name, workload, f"PyTorch: {e}"))
            continue
        if kernel is None:
            rows.append((layer.name, workload, "PyTorch: no kernel in the database"))
            continue
        try:
            kernel._load()  # compile now, not inside a later CUDA graph capture
        except AutotuneError as e:
            rows.append((layer.name, workload, f"PyTorch: {e}"))
            continue
        name = f"autotune_{i}"
        gm.add_submodule(name, TunedLayer(layer, kernel, _original(gm, layer)))
        head, tail = layer.nodes[0], layer.nodes[-1]
        # Before the last node it covers: a residual may be computed after the layer itself.
        residual = replaced.get(layer.residual, layer.residual)  # it may be an earlier layer's output
        args = tuple(head.args) + ((residual,) if residual is not None else ())
        with gm.graph.inserting_before(tail):
            new = gm.graph.call_module(name, args)
        tail.replace_all_uses_with(new)
        replaced[tail] = new
        for n in reversed(layer.nodes):
            gm.graph.erase_node(n)
        rows.append((layer.name, workload, "autotune (exact)" if kernel.exact else f"autotune (nearest: {kernel.workload})"))
    gm.graph.lint()
    gm.recompile()
    return gm, SwapReport(rows)
