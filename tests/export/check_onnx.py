"""ONNX Runtime against TorchScript: runs each ONNX file that test_export
(OnnxExport.WritesModelsForOnnxRuntime) wrote on its 1000 observations and compares the actions
with the TorchScript file's, and both with the same graph evaluated in float64 (ONNX's reference
evaluator on the weights cast to double), to 1e-5; runs ONNX's checker on the file; checks that
its metadata_props hold the TorchScript file's metadata_json. No diffloco code.

Why 1e-5, not 1e-6: actions are tanh-bounded in [-1, 1], and each float32 implementation is
itself up to ~1.4e-6 away from the float64 value (measured: TorchScript 1.2e-6, ONNX Runtime
1.4e-6 on the shipped walk policy), so two of them can differ by more than 1e-6 with both right.
1e-5 is about 170 float32 ulps at 1.

usage: check_onnx.py FIXTURE_DIR CASE...
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator


def in_float64(model):
    """The same graph with every float32 initializer, constant, cast and I/O in float64."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for init in m.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype == np.float32:
            init.CopyFrom(numpy_helper.from_array(a.astype(np.float64), init.name))
    for node in m.graph.node:
        for at in node.attribute:
            if at.name == "to" and at.i == TensorProto.FLOAT:
                at.i = TensorProto.DOUBLE
            if at.type == onnx.AttributeProto.TENSOR and at.t.data_type == TensorProto.FLOAT:
                at.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(at.t).astype(np.float64)))
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.elem_type = TensorProto.DOUBLE
    return m


def main():
    d, cases = sys.argv[1], sys.argv[2:]
    ok = True
    for case in cases:
        path = os.path.join(d, case + ".onnx")
        model = onnx.load(path)
        onnx.checker.check_model(model, full_check=True)
        props = {p.key: p.value for p in model.metadata_props}
        with open(os.path.join(d, case + "_metadata.json")) as f:
            same_meta = json.loads(props["metadata_json"]) == json.load(f)
        obs = np.loadtxt(os.path.join(d, case + "_obs.csv"), delimiter=",", dtype=np.float32)
        expected = np.loadtxt(os.path.join(d, case + "_actions.csv"), delimiter=",")
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = session.run(["actions"], {"obs": obs})[0].astype(np.float64)
        exact = ReferenceEvaluator(in_float64(model)).run(None, {"obs": obs.astype(np.float64)})[0]
        err = float(np.abs(got - expected).max())
        err_ts = float(np.abs(expected - exact).max())
        err_ort = float(np.abs(got - exact).max())
        good = (got.shape == expected.shape == exact.shape and max(err, err_ts, err_ort) <= 1e-5
                and same_meta)
        print(f"{case}: onnx.checker ok, onnxruntime {ort.__version__} vs TorchScript: max |da| = "
              f"{err:.3g} over {got.shape}; vs float64: TorchScript {err_ts:.3g}, onnxruntime "
              f"{err_ort:.3g}; metadata_props == metadata_json: {same_meta}"
              f" -> {'ok' if good else 'FAILED'}")
        ok &= good
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
