"""ONNX Runtime against TorchScript: runs each ONNX file that test_deploy
(OnnxExport.WritesModelsForOnnxRuntime) wrote on its 1000 observations and compares the actions
with the TorchScript file's to 1e-5 (actions are tanh-bounded in [-1, 1]; float32 kernels of
different summation order differ by a few 1e-7 to 1e-6; 1e-5 is about 170 float32 ulps at 1); runs ONNX's checker on the file; checks that its
metadata_props hold the TorchScript file's metadata_json. No diffloco code.

usage: check_onnx.py FIXTURE_DIR CASE...
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort


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
        err = float(np.abs(got - expected).max())
        good = got.shape == expected.shape and err <= 1e-5 and same_meta
        print(f"{case}: onnx.checker ok, onnxruntime {ort.__version__} vs TorchScript: max |da| = "
              f"{err:.3g} over {got.shape}, metadata_props == metadata_json: {same_meta}"
              f" -> {'ok' if good else 'FAILED'}")
        ok &= good
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
