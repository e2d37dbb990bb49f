"""mcu-conv1d-to-conv2d: lay 1-D convolutions and pooling out as H=L, W=1 NHWC 2-D ops."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import ir, tosa
from ..base import ModulePass
from ...ir.constants import ConstantData, make_constant, make_shape
from ...ir.ops import create, isa, op_class

# op class -> (weight operand index or None, weight dims holding (KH, KW))
_ONE_D_CANDIDATES = {
    tosa.Conv2DOp: (1, (1, 2)),            # weight OHWI
    tosa.DepthwiseConv2DOp: (1, (0, 1)),   # weight HWCM
    tosa.TransposeConv2DOp: (1, (1, 2)),   # weight OHWI
    tosa.MaxPool2dOp: (None, None),
    tosa.AvgPool2dOp: (None, None),
}


@dataclasses.dataclass(frozen=True)
class Conv1dToConv2d(ModulePass):
    """Rewrites 1-D convolutions and pooling (NHWC with H=1) to H=L, W=1.

    PyTorch's conv1d reaches TOSA as a conv2d over a [N, 1, L, C] view with a [O, 1, K, I] kernel
    (depthwise: [1, K, C, M]; max/avg pool: kernel [1, K]). CMSIS-NN's wrapper sends H=1 inputs with a
    1xK kernel to `arm_convolve_1_x_n_s8`, which rejects the asymmetric padding PyTorch's strided
    conv1d often has. Laid out as [N, L, 1, C] with a [O, K, 1, I] kernel, stride (s, 1), dilation
    (d, 1) and pad (left, right, 0, 0), the same computation goes to the general, 1x1 or depthwise
    kernels (a padded one to a kernel that computes its padding: mcu-convert-tosa-to-cmsisnn checks
    each call's padding contract); the bytes of input, weights and output do not move (H and W are
    both unit-or-L views of the same row), so the change costs reshapes only, and weights are
    repacked at compile time. Pointwise (K=1), dilated, strided, grouped (already split per group),
    depthwise and in_channels=1 layers all take this path; 2-D ops are left alone.
    """

    NAME = "mcu-conv1d-to-conv2d"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            consts = ConstantData(module)
            for fn in self.functions(module):
                for op in list(fn.regions[0].blocks[0].operations) if fn.regions[0].blocks else []:
                    if op_class(op) in _ONE_D_CANDIDATES:
                        self._rewrite(op, consts)

    def _rewrite(self, op, consts) -> None:
        name, cls = op.operation.name, op_class(op)
        x, y = op.operands[0], op.results[0]
        weight_index, kernel_dims = _ONE_D_CANDIDATES[cls]
        for v in (x, y):
            if not isinstance(v.type, ir.RankedTensorType) or not v.type.has_static_shape:
                if isinstance(v.type, ir.RankedTensorType) and v.type.rank == 4 and \
                        not v.type.is_dynamic_dim(1) and v.type.shape[1] == 1:
                    self.emit_error(op, f"'{name}' over a unit height needs a static length to be laid "
                                        f"out as a 1-D convolution, got {v.type}")
                return
        n, h, w, c = x.type.shape
        if h != 1 or w == 1 or y.type.shape[1] != 1:
            return
        attrs = {k: op.attributes[k] for k in op.attributes}
        if weight_index is not None:
            weight = op.operands[weight_index]
            if not isinstance(weight.type, ir.RankedTensorType) or not weight.type.has_static_shape:
                return
            kh_dim, kw_dim = kernel_dims
            wshape = list(weight.type.shape)
            if wshape[kh_dim] != 1:
                return
            new_wshape = list(wshape)
            new_wshape[kh_dim], new_wshape[kw_dim] = wshape[kw_dim], 1
        else:
            kernel = list(attrs["kernel"])
            if kernel[0] != 1:
                return
            attrs["kernel"] = ir.DenseI64ArrayAttr.get([kernel[1], 1])
        if cls is tosa.TransposeConv2DOp:
            out_pad = list(attrs["out_pad"])
            if out_pad[0] or out_pad[1]:
                return
            attrs["out_pad"] = ir.DenseI64ArrayAttr.get([out_pad[2], out_pad[3], 0, 0])
        else:
            pad = list(attrs["pad"])
            if pad[0] or pad[1]:
                return
            attrs["pad"] = ir.DenseI64ArrayAttr.get([pad[2], pad[3], 0, 0])
        attrs["stride"] = ir.DenseI64ArrayAttr.get(list(attrs["stride"])[::-1])
        if "dilation" in attrs:
            attrs["dilation"] = ir.DenseI64ArrayAttr.get(list(attrs["dilation"])[::-1])

        with ir.InsertionPoint(op), op.location as loc:
            operands = list(op.operands)
            operands[0] = _reshape(x, [n, w, 1, c], loc)
            if weight_index is not None:
                data = consts.array(weight)
                operands[weight_index] = _reshape(weight, new_wshape, loc) if data is None else \
                    make_constant(np.ascontiguousarray(data.reshape(new_wshape)), weight.type, loc=loc)
            yn, _, yw, yc = y.type.shape
            out_type = ir.RankedTensorType.get([yn, yw, 1, yc], y.type.element_type)
            new = create(cls, results=[out_type], operands=operands, attributes=attrs, loc=loc)
            result, old = new.results[0], y
        # An accumulator's one rescale moves with the op, so the view back is taken of its result:
        # TOSA reshapes no int48 value, and the backend fuses a rescale that follows its conv directly.
        users = list(y.uses)
        if len(users) == 1 and isa(users[0].owner, tosa.RescaleOp) and users[0].operand_number == 0:
            rescale = users[0].owner
            elem = ir.RankedTensorType(rescale.results[0].type).element_type
            with ir.InsertionPoint(rescale), rescale.location:
                result = create(
                    tosa.RescaleOp, results=[ir.RankedTensorType.get([yn, yw, 1, yc], elem)],
                    operands=[result] + list(rescale.operands)[1:],
                    attributes={k: rescale.attributes[k] for k in rescale.attributes}).results[0]
            old = rescale.results[0]
        with ir.InsertionPoint(old.owner), loc:
            back = _reshape(result, list(old.type.shape), loc)
        old.replace_all_uses_with(back)
        if old is not y:
            old.owner.erase()
        op.operation.erase()
        if weight_index is not None and len(list(weight.uses)) == 0 and not isinstance(weight.owner, ir.Block) \
                and isa(weight.owner, tosa.ConstOp):
            weight.owner.operation.erase()


def _reshape(value, shape, loc):
    ty = ir.RankedTensorType.get(list(shape), value.type.element_type)
    return create(tosa.ReshapeOp, results=[ty], operands=[value, make_shape(list(shape), loc=loc)],
                  loc=loc).results[0]
