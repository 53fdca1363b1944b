// The extension module behind the Python package `diffloco` (python/diffloco/__init__.py imports
// torch first, so that tensors cross as torch.Tensor). C++ exceptions arrive as Python
// exceptions with the same message (std::runtime_error: RuntimeError, std::invalid_argument:
// ValueError).
#include <torch/extension.h>

#include "python/bindings.h"

PYBIND11_MODULE(_diffloco, m) {
  m.doc() = "diffloco: quadruped locomotion from a differentiable simulator (C++ core)";
  diffloco::python::bindEnv(m);
  diffloco::python::bindSimulator(m);
  diffloco::python::bindProgram(m);
  diffloco::python::bindSysid(m);
}
