// The parts of the extension module `diffloco._diffloco`, one per concept; python/module.cpp
// registers them. Each calls the layers below as the program does: no logic of its own.
#pragma once

#include <pybind11/pybind11.h>

namespace diffloco::python {

void bindEnv(pybind11::module_& m);        // python/env.cpp: make_env, the rsl_rl-shaped VecEnv
void bindSimulator(pybind11::module_& m);  // python/simulator.cpp: a batch of worlds, its step
void bindProgram(pybind11::module_& m);    // python/program.cpp: train, evaluate, export, cli
void bindSysid(pybind11::module_& m);      // python/sysid.cpp: the sysid loss and its gradient

// f() with the GIL released: the simulator, a training or an evaluation runs while other Python
// threads go on.
template <class F>
auto withoutGil(F&& f) {
  pybind11::gil_scoped_release release;
  return f();
}

}  // namespace diffloco::python
